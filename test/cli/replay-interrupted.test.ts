// Replay interrupted in real child processes with real signals, over a generated log of a few
// thousand events: SIGTERM stops it at a batch boundary (commit, one line, exit 0) and a re-run
// continues; a second signal exits at once, non-zero; kill -9 at random points (seeded: the seed is
// printed, CRASH_SEED=<n> repeats it). Every one ends with the digest of a clean replay.
import { spawn } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { mulberry32, pick } from '../../fixtures/random';
import { clean, committed, dir, EVENTS, finish, LINES, replay, sameAsClean, waitForCommit } from '../helpers/replay-crash';
import { cliArgv, CLI_STACK, type Exit } from '../helpers/processes';
import { ROOT } from '../helpers/paths';

t.test('SIGTERM: replay stops at a batch boundary, exits 0 saying so, and a re-run continues to the clean digest', async (tt) => {
  const db = path.join(dir, 'sigterm.db');
  const c = replay(db, 200);
  tt.ok(await waitForCommit(db, 1000, c), 'replaying');
  c.child.kill('SIGTERM');
  const r = await c.done;
  tt.equal(r.signal, null, 'not killed by the signal');
  tt.equal(r.code, 0, `exits 0 ${r.stderr}`);
  tt.equal(r.stderr, '', 'nothing on stderr');
  const m = /^replay interrupted by SIGTERM after [\d.]+ s: (\d+) applied, .*; line (\d+) of (.+) is next: run the same command again to continue\n$/.exec(r.stdout);
  tt.ok(m, `one line saying so: ${JSON.stringify(r.stdout)}`);
  const next = Number(m?.[2]);
  tt.equal(m?.[3], EVENTS, 'names the file');
  tt.equal(committed(db), next, 'everything read was committed: the line it names is where the database stands');
  tt.ok(next > 1000 && next <= LINES.length, `stopped part way (line ${next} of ${LINES.length})`);

  await finish(tt, db);
  const d = await new Promise<Exit>((resolve) => {
    const child = spawn(process.execPath, cliArgv(['digest', '--db', db], CLI_STACK), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  tt.equal(d.stdout, `${(await clean()).digest}\n`, '`digest` prints the clean replay\'s digest');
  await sameAsClean(tt, db, await clean(), 'after the re-run');
});

t.test('a second signal exits at once, non-zero, and a re-run still ends with the clean digest', async (tt) => {
  const db = path.join(dir, 'twice.db');
  const c = replay(db, 200);
  tt.ok(await waitForCommit(db, 1000, c), 'replaying');
  // Both signals must be in before the first is handled, or a fast stop could finish in between:
  // stopped, the process collects them; continued, it handles both in one turn of its loop.
  c.child.kill('SIGSTOP');
  c.child.kill('SIGINT');
  c.child.kill('SIGTERM');
  c.child.kill('SIGCONT');
  const r = await c.done;
  tt.equal(r.signal, null);
  tt.ok(r.code === 130 || r.code === 143, `exits 128 + the second signal's number (got ${r.code})`);
  tt.match(r.stderr, /^visibility-api replay: SIG(INT|TERM) again: stopping at once; lines not yet committed are read again by the next run\n$/);
  tt.equal(r.stdout, '', 'no summary');
  const conn = new Database(db, { readonly: true });
  tt.same(conn.pragma('quick_check'), [{ quick_check: 'ok' }], 'the database is sound');
  conn.close();
  await finish(tt, db);
  await sameAsClean(tt, db, await clean(), 'after the re-run');
});

t.test('kill -9 at random points of a replay: resumed replays end with the clean digest', async (tt) => {
  const seed = process.env.CRASH_SEED ? Number(process.env.CRASH_SEED) : Date.now() % 1_000_000;
  tt.comment(`seed ${seed} (CRASH_SEED=${seed} repeats these kill points)`);
  const rng = mulberry32(seed);
  const want = await clean();
  const TRIALS = 4;
  for (let trial = 0; trial < TRIALS; trial++) {
    const db = path.join(dir, `kill-${trial}.db`);
    const kills = 1 + (trial % 2); // every other trial is killed again while it resumes
    for (let k = 0; k < kills; k++) {
      const from = committed(db);
      const batch = pick(rng, [50, 200, 1000]);
      const target = from + Math.floor(rng() * (LINES.length - from) * 0.8);
      const c = replay(db, batch);
      if (!(await waitForCommit(db, target, c))) {
        tt.comment(`trial ${trial}: the replay finished before line ${target}`);
        break;
      }
      c.child.kill('SIGKILL');
      const r = await c.done;
      tt.equal(r.signal, 'SIGKILL', `trial ${trial}: killed`);
      tt.comment(`trial ${trial}, kill ${k + 1}: batches of ${batch}, killed once line ${target} was committed; it had committed up to line ${committed(db) - 1}`);
    }
    await finish(tt, db, pick(rng, [200, 1000]));
    await sameAsClean(tt, db, want, `trial ${trial}`);
  }
});

