// Build threads that die: killed mid-build (process.exit in the thread, an uncaught throw, or
// terminate() from outside), the thread is replaced and the request still gets the right body; a
// job whose second thread dies too gets a clean 503 with Retry-After, never a 500 or a hang; later
// requests are served. And close() resolves once the threads have ended, so the process can exit.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ThreadBuilder, type StartBuildThread } from '../../src/serve/bodies/builders';
import { startWorker } from '../../src/lib/worker';
import { HttpError } from '../../src/serve/request/errors';
import { ENDPOINTS } from '../../src/readmodels';
import { openDb, Projector, type Db } from '../../src/store';
import { asSource, run, W, world } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { request, startApi, withKey, type Api } from '../helpers/http';
import { ROOT } from '../helpers/paths';
import { readArgs } from '../helpers/readmodels';


/** The helpers' world with runs on two engines, citations and a competitor: every body has content. */
function servedDb(tt: Test): Db {
  const dir = tmpDir('crash-builders-');
  const db = openDb(path.join(dir, 'served.db'));
  new Projector(db).applyBatch(asSource([...world(), ...Array.from({ length: 12 }, (_, i) => run({
    n: i + 1, engine: i % 2 === 0 ? W.engineA : W.engineB, prompt: i % 3 === 0 ? W.prompt2 : W.prompt1,
    brand: i % 4 === 0 ? null : 1 + (i % 3), sentiment: 0.25, competitor: i % 2 === 0 ? 2 : null,
    citations: [`https://site${i % 3}.com/page`],
  }))]));
  tt.teardown(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

/** Distinct cache misses (one per endpoint), so every request needs a build. */
const PATHS = ['/visibility', '/visibility/timeseries', '/scores/daily', '/prompts', '/segments/analytics', '/competitor-rankings',
  '/citations', '/mentions', '/referrers', '/engines'].map((p) => `/projects/${W.project}${p}`);

type CrashMode = 'exit' | 'throw' | 'terminate';

/** Crashes to cause, shared with the build threads of build-thread-crash.worker.ts. */
class Crashes {
  private readonly plan = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));

  /** The next `count` jobs handed to a thread kill it instead of being built (a retry counts as a job). */
  next(count: number, how: CrashMode): void {
    Atomics.store(this.plan, 1, ['exit', 'throw', 'terminate'].indexOf(how));
    Atomics.store(this.plan, 0, count);
  }

  /** Starts a thread that dies as planned; one that holds its job is terminated from here, as from outside. */
  readonly start: StartBuildThread = (data) => {
    const worker = startWorker(path.join(__dirname, 'build-thread-crash.ts'), { ...data, plan: this.plan.buffer }) // runs build-thread-crash.worker.ts;
    worker.on('message', (m) => {
      if (m === 'held') void worker.terminate();
    });
    return worker;
  };
}

interface Services { threaded: Api; inline: Api; builder: ThreadBuilder; crashes: Crashes }

/** The service under test (one build thread, which can be made to die) and a reference that builds on the event loop. */
async function services(tt: Test): Promise<Services> {
  const db = servedDb(tt);
  const crashes = new Crashes();
  const threaded = await startApi({ db, buildThreads: 1, startBuildThread: crashes.start });
  const inline = await startApi({ db, buildThreads: 0 });
  tt.teardown(async () => {
    await threaded.close();
    await inline.close();
  });
  if (!(threaded.service.builder instanceof ThreadBuilder)) throw new Error('expected build threads');
  return { threaded, inline, builder: threaded.service.builder, crashes };
}

/** GET `p` from both; the threaded answer must be a 200 with the reference's exact bytes. */
async function sameAsInline(tt: Test, s: Services, p: string): Promise<void> {
  const [got, want] = await Promise.all([request(s.threaded.base + p, withKey(W.key)), request(s.inline.base + p, withKey(W.key))]);
  tt.equal(want.status, 200, `reference ${p}`);
  tt.equal(got.status, 200, `${p}: 200 (${got.text.slice(0, 200)})`);
  tt.equal(got.text, want.text, `${p}: the correct body`);
  tt.equal(got.headers.etag, want.headers.etag, `${p}: the same ETag`);
}

t.test('a build thread killed mid-build is replaced and the request gets the correct body', async (tt) => {
  const s = await services(tt);
  const modes: CrashMode[] = ['exit', 'throw', 'terminate'];
  for (const [i, how] of modes.entries()) {
    s.crashes.next(1, how);
    await sameAsInline(tt, s, PATHS[2 * i]!);
    tt.equal(s.builder.threadDeaths, i + 1, `${how}: the thread died with the job in hand`);
    await sameAsInline(tt, s, PATHS[2 * i + 1]!);
    tt.equal(s.builder.threadDeaths, i + 1, `${how}: its replacement serves the next miss`);
  }
});

t.test('every request in hand when the thread dies is retried on the new one', async (tt) => {
  const s = await services(tt);
  s.crashes.next(1, 'exit'); // the first job posted kills the thread; the others were queued behind it
  await Promise.all(PATHS.map((p) => sameAsInline(tt, s, p)));
  tt.equal(s.builder.threadDeaths, 1);
  tt.equal(s.builder.built, PATHS.length, 'each body built once, by the replacement');
});

t.test('a job whose retry dies too gets a clean 503 with Retry-After, and the next request is served', async (tt) => {
  const s = await services(tt);
  s.crashes.next(2, 'exit');
  const r = await request(s.threaded.base + PATHS[0]!, withKey(W.key));
  tt.equal(r.status, 503, 'not a 500');
  tt.equal(r.headers['retry-after'], '1');
  tt.match(r.headers['content-type'], /application\/json/);
  tt.same(r.json, { error: true, message: r.json && (r.json as { message: string }).message });
  tt.match((r.json as { message: string }).message, /retry/i);
  tt.notMatch(r.text, /exit code|at .*\.ts|Error:/, 'no internals in the body');
  tt.equal(s.builder.threadDeaths, 2);
  await sameAsInline(tt, s, PATHS[0]!); // the client's retry
  await sameAsInline(tt, s, PATHS[1]!);
  tt.equal(s.builder.threadDeaths, 2, 'no more deaths');
});

t.test('jobs pending at close() get a 503 and close() resolves once the thread has ended', async (tt) => {
  const db = servedDb(tt);
  const builder = new ThreadBuilder(db.name, 2);
  const endpoint = ENDPOINTS.find((e) => e.name === 'projects')!;
  const args = readArgs({ projectId: '', runGroupId: '' });
  const ok = await builder.build({ endpoint, args, scopes: [] });
  tt.ok(JSON.parse(ok.json.toString()).length > 0, 'a thread builds');
  const pending = builder.build({ endpoint, args, scopes: [] });
  const closed = builder.close();
  const err = await pending.then(() => null, (e: unknown) => e);
  tt.ok(err instanceof HttpError && err.status === 503 && err.headers['Retry-After'] === '1', 'a pending job: 503, Retry-After: 1');
  await Promise.all([closed, builder.close()]); // a second close() waits for the same end
  const after = await builder.build({ endpoint, args, scopes: [] }).then(() => null, (e: unknown) => e);
  tt.ok(after instanceof HttpError && after.status === 503, 'a job after close: 503');
});

// The process must be able to end on its own: no live MessagePort or thread may keep it up.
for (const mode of ['close', 'no-close']) {
  t.test(`a process that used build threads exits by itself (${mode})`, async (tt) => {
    const db = servedDb(tt);
    const script = `
      const { ThreadBuilder } = require('./src/serve/bodies/builders');
      const { ENDPOINTS } = require('./src/readmodels');
      const b = new ThreadBuilder(${JSON.stringify(db.name)}, 2);
      const endpoint = ENDPOINTS.find((e) => e.name === 'projects');
      const args = ${JSON.stringify(readArgs({ projectId: '', runGroupId: '' }))};
      b.build({ endpoint, args, scopes: [] }).then(async (r) => {
        console.log('built ' + r.json.length);
        if (${JSON.stringify(mode)} === 'close') { await b.close(); console.log('closed'); }
      });`;
    // No process.exit anywhere: the child ends when nothing holds its event loop (or is killed at 60 s).
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    tt.equal(r.signal, null, `not killed by the timeout: ${r.stderr}`);
    tt.equal(r.status, 0, r.stderr);
    tt.match(r.stdout, /^built \d+\n/);
    if (mode === 'close') tt.match(r.stdout, /closed\n$/);
  });
}
