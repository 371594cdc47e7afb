// Reads while a project is written hard, over real HTTP with a real writer (the projector committing
// batches) and real build threads:
// - the build threads run below the serving thread (Linux nice values, per thread), so answers from
//   the cache are not delayed by rebuilds;
// - a request past the staleness bound that finds a rebuild under way takes that rebuild's body when
//   it is within the bound (stale, saying so), rather than waiting for a second build: under a
//   stream of commits every build ends behind the data, and a request would otherwise wait for two;
// - under a stream of batches each cached body is rebuilt at most once per coalescing time (counted
//   builds), never once per batch.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { BUILD_NICE, startWorker } from '../../src/lib/worker';
import { ThreadBuilder, type StartBuildThread } from '../../src/serve/bodies/builders';
import { STALE_CACHE_STATUS } from '../../src/serve/http/send';
import type { Projector } from '../../src/store';
import { freshDb } from '../helpers/db';
import { asSource, run, W, world } from '../helpers/events';
import { request, startApi, withKey, type Reply } from '../helpers/http';
import { sleep } from '../helpers/wait';

const VIS = `/projects/${W.project}/visibility`;

let runN = 1000;
/** One committed batch: a run of the project (its visibility changes: one more run). */
function commit(projector: Projector): void {
  projector.applyBatch(asSource([run({ n: (runN += 1), brand: 1 })], `batch-${runN}`));
}

const runCount = (r: Reply): number => (r.json as { run_count: number }).run_count;

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/TID/stat). */
function threadNices(): number[] {
  return fs.readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended between the listing and the read
    }
  });
}

/** Replies of the build thread wait while the gate is closed (stream-rebuilds.worker.ts). */
class ReplyGate {
  readonly shared = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
  readonly start: StartBuildThread = (data) => startWorker(path.join(__dirname, 'stream-rebuilds.ts'), { ...data, shared: this.shared.buffer });

  constructor() {
    this.open();
  }

  close(): void {
    Atomics.store(this.shared, 0, 0);
  }

  open(): void {
    Atomics.store(this.shared, 0, 1);
    Atomics.notify(this.shared, 0);
  }

  /** Replies held at the gate so far. */
  get held(): number {
    return Atomics.load(this.shared, 1);
  }
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !ok(); i++) await sleep(5);
  if (!ok()) throw new Error(`never: ${what}`);
}

// Linux, as CI and the Docker image: nice values are per thread there.
t.test('build threads run below the serving thread', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  const before = threadNices().filter((n) => n === BUILD_NICE).length;
  const api = await startApi({ db, buildThreads: 2 });
  t.teardown(() => api.close());
  // Two cold bodies at once: each thread has built (and so started) by the time both answered.
  const got = await Promise.all([VIS, `/projects/${W.project}/competitor-rankings`].map((p) => request(api.base + p, withKey(W.key))));
  t.same(got.map((r) => r.status), [200, 200]);
  const own = os.getPriority(); // what the threads inherit (0 unless the tests run niced)
  const serving = (): number => Number(fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[16]);
  if (own >= BUILD_NICE) {
    // A thread is only ever lowered: run at this nice already, nothing changes.
    t.equal(threadNices().filter((n) => n === BUILD_NICE).length, before, `tests run at nice ${own}: no thread lowered`);
    return;
  }
  await until('both build threads at their nice value', () => threadNices().filter((n) => n === BUILD_NICE).length >= before + 2);
  t.ok(BUILD_NICE > own, `build threads at nice ${BUILD_NICE}`);
  t.equal(threadNices().filter((n) => n === BUILD_NICE).length - before, 2, 'both build threads, and no other thread, at BUILD_NICE');
  t.equal(serving(), own, 'the serving thread keeps its priority');
});

t.test('past the bound, a request takes the rebuild under way when its body is within the bound: one build, not two', async (t) => {
  // Long, so that a loaded machine still answers the stale request below well within it.
  const bound = 6000;
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  const gate = new ReplyGate();
  const api = await startApi({ db, buildThreads: 1, startBuildThread: gate.start, maxStalenessMs: bound, rebuildCoalesceMs: 0 });
  t.teardown(async () => {
    gate.open();
    await api.close();
  });
  if (!(api.service.builder instanceof ThreadBuilder)) throw new Error('expected build threads');
  const builder = api.service.builder;
  const get = (): Promise<Reply> => request(api.base + VIS, withKey(W.key));
  const stats = api.service.cache.stats('visibility');

  const asked = performance.now();
  const first = await get();
  t.equal(first.headers['cache-status'], undefined, 'a current body');
  const builds = stats.builds;
  await sleep(1200);
  gate.close();
  commit(projector); // A
  // Raced with a timer: past the bound this request would wait for the build held at the gate.
  const stale = await Promise.race([get(), sleep(bound).then(() => null)]);
  if (stale === null) {
    gate.open();
    t.fail('the request within the bound did not answer (the machine stalled past the bound)');
    return;
  }
  t.same([stale.headers['cache-status'], runCount(stale)], [STALE_CACHE_STATUS, runCount(first)], 'within the bound: the old body, stale; its rebuild starts');
  await until('the rebuild built, its answer held', () => gate.held === 1);
  commit(projector); // B: not in the rebuild's snapshot
  // The old body is past the bound now (counted from the first request: the server saw commit A no earlier);
  // the rebuild, handed to its thread ~1.2 s later, is not (its body is ~bound - 0.9 s behind when the gate opens).
  await sleep(Math.max(0, asked + bound + 300 - performance.now()));
  const misses = stats.misses;
  const waiting = get();
  await until('the request past the bound waits', () => stats.misses === misses + 1);
  t.equal(builder.accounts().get(W.account)?.running, 1, 'it waits for the rebuild under way');
  gate.open();
  const r = await waiting;
  t.equal(r.status, 200);
  t.equal(runCount(r), runCount(first) + 1, 'the rebuild\'s body: commit A, not B');
  t.equal(r.headers['cache-status'], STALE_CACHE_STATUS, 'which says it is stale');
  t.equal(stats.builds, builds + 1, 'one build: it did not wait for another');
  // The next rebuild comes as for any stale body, with everything committed.
  for (let i = 0; i < 400; i++) {
    const now = await get();
    if (runCount(now) === runCount(first) + 2 && now.headers['cache-status'] === undefined) {
      t.pass('then a body with both commits');
      return;
    }
    await sleep(10);
  }
  t.fail('no body with both commits');
});

t.test('under a stream of batches each cached body is rebuilt at most once per coalescing time, never once per batch', async (t) => {
  const bound = 1000;
  const coalesce = 250;
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  const api = await startApi({ db, buildThreads: 1, maxStalenessMs: bound, rebuildCoalesceMs: coalesce });
  t.teardown(() => api.close());
  const bodies: Array<[path: string, route: string]> = [
    [VIS, 'visibility'], [`/projects/${W.project}/competitor-rankings`, 'competitor-rankings'], [`/projects/${W.project}/visibility/timeseries`, 'timeseries'],
  ];
  const paths = bodies.map(([p]) => p);
  const builds = (): number[] => bodies.map(([, route]) => api.service.cache.stats(route).builds);
  for (const p of paths) t.equal((await request(api.base + p, withKey(W.key))).status, 200, `${p} cached`);
  const before = builds();
  let batches = 0;
  let writing = true;
  const started = performance.now();
  const writer = (async () => {
    while (writing) {
      commit(projector);
      batches += 1;
      await sleep(20);
    }
  })();
  let answers = 0;
  while (performance.now() - started < 2000) {
    const got = await Promise.all(paths.map((p) => request(api.base + p, withKey(W.key))));
    for (const r of got) if (r.status !== 200) t.fail(`${r.status} ${r.text}`);
    answers += got.length;
  }
  writing = false;
  await writer;
  const seconds = (performance.now() - started) / 1000;
  const after = builds();
  // At most one rebuild per body for each coalescing time that passed, and one more for the last.
  const most = Math.ceil((seconds * 1000) / coalesce) + 1;
  after.forEach((n, i) => t.ok(n - before[i]! <= most, `${paths[i]}: ${n - before[i]!} rebuilds for ${batches} batches in ${seconds.toFixed(1)} s (at most ${most})`));
  t.ok(batches > most * 2, `the batches (${batches}) far outnumber what may be rebuilt`);
  t.ok(answers > 0, `${answers} answers, all 200`);
});
