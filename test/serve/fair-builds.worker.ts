// A build thread that waits at a gate fair-builds.test.ts opens and closes: the real one
// (src/serve/builders.worker.ts) behind a listener that sees each job first. While the gate is
// closed a job is held (the thread blocks), so the test can line jobs up behind it; each job's
// account and project is written to a shared log, in the order the thread builds them.
import { parentPort, workerData } from 'node:worker_threads';

/** [gate: 0 closed, 1 open; jobs logged; log of account codes...]. */
const shared = new Int32Array((workerData as { shared: SharedArrayBuffer }).shared);
/** `account|project` of the jobs to tell apart: one is logged as its index + 1, any other as 0. */
const tags = (workerData as { tags: string[] }).tags;

parentPort!.addEventListener('message', (event) => {
  const job = (event as MessageEvent).data as { args: { accountId: string; projectId: string } };
  while (Atomics.load(shared, 0) === 0) Atomics.wait(shared, 0, 0);
  const n = Atomics.add(shared, 1, 1);
  if (2 + n < shared.length) Atomics.store(shared, 2 + n, tags.indexOf(`${job.args.accountId}|${job.args.projectId}`) + 1);
});

// After the listener above, so that it sees each job before the real thread does.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded second on purpose (an import would be hoisted)
require('../../src/serve/builders.worker');
