// A build thread that waits at a gate fair-builds.test.ts opens and closes: the real one
// (src/serve/bodies/builders.worker.ts) behind a listener that sees each job first. While the gate is
// closed a job is held (the thread blocks), so the test can line jobs up behind it, and when the test
// says so the time it was held counts as build time (as a slow build's would); each job's account and project is
// written to a shared log, in the order the thread builds them.
import { parentPort, workerData } from 'node:worker_threads';

/**
 * [gate: 0 closed, 1 open; jobs logged; log of account codes...; next to last: the code of the only
 * jobs the closed gate holds (0: all); last: 1 when held time counts as build time].
 */
const shared = new Int32Array((workerData as { shared: SharedArrayBuffer }).shared);
/** `account|project` of the jobs to tell apart: one is logged as its index + 1, any other as 0. */
const tags = (workerData as { tags: string[] }).tags;

/** Ms each job was held at the gate, by job id: counted in the build time the thread reports, as if the build had been that slow. */
const held = new Map<number, number>();
const post = parentPort!.postMessage.bind(parentPort!);
parentPort!.postMessage = (m: { id: number; ms?: number }) => {
  const extra = Atomics.load(shared, shared.length - 1) === 1 ? (held.get(m.id) ?? 0) : 0;
  held.delete(m.id);
  post(typeof m.ms === 'number' ? { ...m, ms: m.ms + extra } : m);
};

parentPort!.addEventListener('message', (event) => {
  const job = (event as MessageEvent).data as { id: number; args: { accountId: string; projectId: string } };
  const code = tags.indexOf(`${job.args.accountId}|${job.args.projectId}`) + 1;
  const t0 = performance.now();
  const only = (): number => Atomics.load(shared, shared.length - 2);
  while (Atomics.load(shared, 0) === 0 && (only() === 0 || only() === code)) Atomics.wait(shared, 0, 0);
  held.set(job.id, performance.now() - t0);
  const n = Atomics.add(shared, 1, 1);
  if (2 + n < shared.length - 2) Atomics.store(shared, 2 + n, code);
});

// After the listener above, so that it sees each job before the real thread does.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded second on purpose (an import would be hoisted)
require('../../src/serve/bodies/builders.worker');
