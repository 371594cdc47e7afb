// A build thread that dies when build-thread-crash.test.ts says so: the real one
// (src/serve/bodies/builders.worker.ts) behind a listener that sees each job first. While the shared plan
// has crashes left, a job ends the thread instead of being built, with the job in hand: process.exit
// (ends this thread only), an uncaught throw, or held unanswered until the test terminates the
// thread from outside (it could otherwise build and answer before the terminate lands).
import { parentPort, workerData } from 'node:worker_threads';

/** [jobs left to die on, how: an index in MODES]. */
const plan = new Int32Array((workerData as { plan: SharedArrayBuffer }).plan);
const MODES = ['exit', 'throw', 'terminate'] as const;

parentPort!.addEventListener('message', (event) => {
  if (Atomics.sub(plan, 0, 1) <= 0) {
    Atomics.add(plan, 0, 1); // none left: the real thread builds the job
    return;
  }
  event.stopImmediatePropagation(); // the real thread never sees this job
  const how = MODES[plan[1]!];
  if (how === 'exit') process.exit(70);
  if (how === 'throw') throw new Error('injected build thread crash');
  parentPort!.postMessage('held');
});

// After the listener above, so that it sees each job before the real thread does.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded second on purpose (an import would be hoisted)
require('../../src/serve/bodies/builders.worker');
