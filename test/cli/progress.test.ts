// The progress line of long commands, as a user sees it: on a terminal (a real pseudo-terminal,
// through util-linux `script`) replay shows events, events/s and elapsed time, then erases the line
// before its summary; piped, or with --quiet, it prints nothing but the summary.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { clock, Progress, progressText } from '../../src/cli/progress';
import { run, world, writeNdjson } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';

const SUMMARY = /replayed 1 file\(s\) in [\d.]+ s: 616 applied, 0 duplicate, 0 stale \(superseded\), 0 dead-lettered, 0 lines skipped \(already applied\)/;
const LINE = /replay: [\d,]+ events, [\d,]+ events\/s, \d+:\d\d elapsed/;

t.test('the line: counts, rate, elapsed, and an ETA from the share of the input read', async (t2) => {
  t2.equal(clock(0), '0:00');
  t2.equal(clock(75), '1:15');
  t2.equal(clock(3725), '1:02:05');
  const o = { label: 'replay', unit: 'events', totalBytes: 1000 };
  // 12,000 events in 4 s with a quarter of the input read: 3 quarters more take 12 s.
  t2.equal(progressText(o, 12_000, 250, 4), 'replay: 12,000 events, 3,000 events/s, 0:04 elapsed, ETA 0:12 (25%)');
  t2.equal(progressText(o, 5, 0, 1), 'replay: 5 events, 5 events/s, 0:01 elapsed', 'nothing read yet: no ETA');
  t2.equal(progressText(o, 9, 1000, 2), 'replay: 9 events, 5 events/s, 0:02 elapsed', 'all read: no ETA');
});

t.test('a terminal gets rewrites at most every 250 ms and a clean line at the end; --quiet and pipes get nothing', async (t2) => {
  let clockMs = 0;
  const written: string[] = [];
  const stream = { isTTY: true, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
  const p = new Progress({ label: 'replay', unit: 'events', totalBytes: 100, quiet: false, stream, now: () => clockMs });
  p.update(1, 10);
  clockMs = 100;
  p.update(2, 20);
  clockMs = 300;
  p.update(3, 30);
  p.clear();
  t2.equal(written.length, 3, 'two lines (the one 100 ms later is skipped) and the erase');
  t2.match(written[0]!, /^\rreplay: 1 events/);
  t2.match(written[1]!, /^\rreplay: 3 events/);
  t2.equal(written[2], '\r\x1b[K');
  for (const [quiet, isTTY] of [[true, true], [false, false]] as const) {
    const out: string[] = [];
    const s = { isTTY, write: (x: string) => out.push(x) } as unknown as NodeJS.WriteStream;
    const q = new Progress({ label: 'replay', unit: 'events', totalBytes: 100, quiet, stream: s, now: () => 0 });
    q.update(1, 10);
    q.clear();
    t2.same(out, [], `quiet=${quiet} tty=${isTTY}: nothing written`);
  }
});

/** The CLI from source in a child process; `tty` runs it on a pseudo-terminal (util-linux `script`). */
function replay(dir: string, args: string[], tty: boolean): { status: number | null; out: string; stdout: string } {
  const runner = path.join(dir, 'cli.js');
  fs.writeFileSync(runner, `require(${JSON.stringify(path.join(ROOT, 'src/cli/main'))}).main(process.argv.slice(2)).then((c) => process.exit(c));\n`);
  const argv = [process.execPath, '--import', 'tsx', runner, 'replay', ...args];
  const env = { ...process.env, VISIBILITY_DB: '', BATCH_SIZE: '' };
  if (!tty) {
    const r = spawnSync(argv[0]!, argv.slice(1), { cwd: ROOT, encoding: 'utf8', env, timeout: 60_000 });
    return { status: r.status, out: r.stderr, stdout: r.stdout };
  }
  const command = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, encoding: 'utf8', env, timeout: 60_000 });
  return { status: r.status, out: r.stdout, stdout: r.stdout };
}

t.test('replay on a terminal shows the line, then its unchanged summary', async (t2) => {
  if (spawnSync('script', ['--version']).status !== 0) {
    t2.fail('util-linux `script` is needed to give the CLI a terminal (Debian: bsdutils, which is essential)');
    return;
  }
  const dir = tmpDir('progress-');
  t2.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = writeNdjson(path.join(dir, 'events.ndjson'), [...world(), ...Array.from({ length: 600 }, (_, i) => run({ n: i + 1, brand: 1 + (i % 3) }))]);
  const seen = (db: string, extra: string[], tty: boolean) => replay(dir, ['--db', path.join(dir, db), '--batch-size', '20', ...extra, file], tty);

  const onTty = seen('a.db', [], true);
  t2.equal(onTty.status, 0, onTty.out);
  t2.match(onTty.out, LINE, 'a progress line on the terminal');
  t2.ok(onTty.out.includes('\r\x1b[K'), 'the line is erased before the summary');
  t2.match(onTty.out, SUMMARY);

  const quiet = seen('b.db', ['--quiet'], true);
  t2.equal(quiet.status, 0, quiet.out);
  t2.notMatch(quiet.out, LINE, '--quiet: no progress on a terminal either');
  t2.match(quiet.out, SUMMARY);

  const piped = seen('c.db', [], false);
  t2.equal(piped.status, 0, piped.out);
  t2.equal(piped.out, '', 'piped: nothing on stderr');
  t2.match(piped.stdout, new RegExp(`^${SUMMARY.source}\\n$`), 'piped: only the summary on stdout');
});
