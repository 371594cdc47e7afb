// A build thread whose answers wait at a gate stream-rebuilds.test.ts opens and closes: the real one
// (src/serve/bodies/builders.worker.ts), with its replies held after the body is built while the gate
// is closed. So a build can be under way, its read snapshot taken, while the test commits more data.
import { parentPort, workerData } from 'node:worker_threads';

/** [gate: 0 closed (replies wait), 1 open; replies held so far]. */
const shared = new Int32Array((workerData as { shared: SharedArrayBuffer }).shared);
const post = parentPort!.postMessage.bind(parentPort!);
parentPort!.postMessage = (m: unknown) => {
  if (Atomics.load(shared, 0) === 0) Atomics.add(shared, 1, 1);
  while (Atomics.load(shared, 0) === 0) Atomics.wait(shared, 0, 0);
  post(m);
};

// After the override above, so that the real thread's replies go through it.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded second on purpose (an import would be hoisted)
require('../../src/serve/bodies/builders.worker');
