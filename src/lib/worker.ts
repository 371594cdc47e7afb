import path from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Old-generation cap of the ingest threads (replay's writer and file threads, serve's Kafka
 * thread). Their live data is a few batches (tens of MB), but under V8's default limit on a large
 * machine (GBs) each let 50-100 MB of dead batches pile up before collecting: replay peaked near
 * 300 MB, serve's catch-up near 300 MB. With this cap V8 collects sooner, at the same speed
 * (docs/decisions.md, "Durability and memory of the writers"). Far above what a batch of ordinary events holds.
 */
export const INGEST_HEAP_MB = 256;

/**
 * Nice value of serve's ingest threads (the Kafka thread and its precompute thread): on a busy host
 * the serving thread, at the default 0, is run first when it wakes, so a catch-up does not delay
 * the answers (its event-loop delay p99 during a catch-up was 23-30 ms at 0 and 9-16 ms at 10,
 * while the catch-up ran as fast: docs/benchmarks.md). The ingest threads still take every core the
 * serving thread leaves idle. Replay has no serving thread: its threads keep the default.
 */
export const INGEST_NICE = 10;

/**
 * Nice value of serve's build threads: below the serving thread, so that answering from the cache
 * (what most requests need) is run first when it wakes, however many rebuilds a stream of commits
 * starts; above the ingest threads, so that the bodies requests wait for are built before more data
 * is applied (the writer then applies larger batches, at less CPU an event). Under a concentrated
 * stream at nice 0 the build threads took most of the service's CPU (docs/decisions.md).
 */
export const BUILD_NICE = 5;

/**
 * Starts the thread of a pair: the module `parentFile` (its `__filename`: `<name>.ts`, the parent
 * side) runs `<name>.worker.ts` beside it, compiled `<name>.worker.js`. Taking the parent's own file
 * keeps every pair to that one naming rule (test/build/names.test.ts checks it). Run from the TypeScript
 * sources (tests, tsx), the thread needs the TypeScript loader too: threads do not inherit it.
 */
export function startWorker(parentFile: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  const ext = path.extname(parentFile);
  const file = `${parentFile.slice(0, -ext.length)}.worker${ext}`;
  // Every thread reports its heap (thread-heap.ts: /metrics) before its own code runs, named after its pair.
  const heap = `require(${JSON.stringify(path.join(__dirname, 'thread-heap' + ext))}).reportHeap(${JSON.stringify(path.basename(parentFile, ext))});`;
  const loader = ext === '.ts' ? "require('tsx/cjs/api').register(); " : '';
  return new Worker(`${loader}${heap} require(${JSON.stringify(file)});`, { eval: true, workerData, resourceLimits });
}
