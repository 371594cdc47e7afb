import path from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Starts `<dir>/<name>.js` in a worker thread. Run from the TypeScript sources (tests, tsx), the
 * file is `<name>.ts` and the thread needs the TypeScript loader too: threads do not inherit it.
 */
export function startWorker(dir: string, name: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  const ext = path.extname(__filename);
  const file = path.join(dir, name + ext);
  if (ext !== '.ts') return new Worker(file, { workerData, resourceLimits });
  return new Worker(`require('tsx/cjs/api').register(); require(${JSON.stringify(file)});`, { eval: true, workerData, resourceLimits });
}
