import path from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Old-generation cap of the ingest threads (replay's writer and prepare threads, serve's Kafka
 * thread). Their live data is a few batches (tens of MB), but under V8's default limit on a large
 * machine (GBs) each let 50-100 MB of dead batches pile up before collecting: replay peaked near
 * 300 MB, serve's catch-up near 300 MB. With this cap V8 collects sooner, at the same speed
 * (docs/benchmarks.md, "Ingestion"). Far above what a batch of ordinary events holds.
 */
export const INGEST_HEAP_MB = 256;

/**
 * Nice value of serve's ingest threads (the Kafka thread and its preparing thread): on a busy host
 * the serving thread, at the default 0, is run first when it wakes, so a catch-up does not delay
 * the answers (its event-loop delay p99 during a catch-up was 23-30 ms at 0 and 9-16 ms at 10,
 * while the catch-up ran as fast: docs/benchmarks.md). The ingest threads still take every core the
 * serving thread leaves idle. Replay has no serving thread: its threads keep the default.
 */
export const INGEST_NICE = 10;

/**
 * Starts `<dir>/<name>.js` in a worker thread. Run from the TypeScript sources (tests, tsx), the
 * file is `<name>.ts` and the thread needs the TypeScript loader too: threads do not inherit it.
 */
export function startWorker(dir: string, name: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  const ext = path.extname(__filename);
  const file = path.join(dir, name + ext);
  // Every thread reports its heap (thread-heap.ts: /metrics) before its own code runs.
  const heap = `require(${JSON.stringify(path.join(__dirname, 'thread-heap' + ext))}).reportHeap(${JSON.stringify(name)});`;
  const loader = ext === '.ts' ? "require('tsx/cjs/api').register(); " : '';
  return new Worker(`${loader}${heap} require(${JSON.stringify(file)});`, { eval: true, workerData, resourceLimits });
}
