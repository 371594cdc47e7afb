import { INGEST_HEAP_MB, startWorker } from '../lib/worker';
import type { ReplayTotals } from './ndjson';

/** What `replay` hands its thread: plain data only (structured clone). */
export interface ReplayJob {
  dbFile: string;
  files: string[];
  batchSize: number;
  fromStart: boolean;
  maxPageCount?: number;
  /** The thread's heap cap in MB (default INGEST_HEAP_MB): a test holds a replay to a small one. */
  heapMb?: number;
}

/** Messages from the replay thread: progress after each batch, then one outcome. */
export type ReplayMessage =
  | { type: 'batch'; lines: number; skipped: number; bytes: number }
  | { type: 'done'; totals: ReplayTotals }
  | { type: 'failed'; error: { message: string; code?: string; sourceFile?: string } };

/** A replay thread's failure, as the thread saw it: an SQLite code, the file that could not be read. */
export class ReplayThreadError extends Error {
  constructor(message: string, readonly code?: string, readonly sourceFile?: string) {
    super(message);
  }
}

/**
 * replayFiles in a worker thread with its own connection and a capped heap (INGEST_HEAP_MB), so the
 * whole process stays small whatever the log's length; the calling thread only shows progress and
 * passes on a stop. Same outcome as replayFiles: the totals (with `stopped` after `stop()`), or a
 * ReplayThreadError carrying the SQLite code or the unreadable file.
 */
export function replayInThread(job: ReplayJob, onBatch: (lines: number, skipped: number, bytes: number) => void): { done: Promise<ReplayTotals>; stop(): void } {
  // A 16 MB young generation (V8 picks 48 MB here): the writer's short-lived batch objects are
  // collected sooner. Peak RSS of the 230k-event bench log 252-279 -> 233-241 MB, ~5 % slower.
  const heapMb = job.heapMb ?? INGEST_HEAP_MB;
  const worker = startWorker(__filename, job, { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: heapMb });
  let outcome: ReplayMessage | null = null;
  let crash: Error | null = null;
  const done = new Promise<ReplayTotals>((resolve, reject) => {
    worker.on('message', (m: ReplayMessage) => {
      if (m.type === 'batch') onBatch(m.lines, m.skipped, m.bytes);
      else outcome = m;
    });
    worker.on('error', (e: Error & { code?: string }) => {
      crash = e.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? new Error(`the replay thread ran out of memory (its heap is capped at ${heapMb} MB): try a smaller --batch-size; what committed before stands`)
        : e;
    });
    // The outcome is taken once the thread has closed its connection and ended.
    worker.on('exit', (code) => {
      const o = outcome as ReplayMessage | null;
      if (o?.type === 'done') return resolve(o.totals);
      if (o?.type === 'failed') return reject(new ReplayThreadError(o.error.message, o.error.code, o.error.sourceFile));
      reject(crash ?? new Error(`the replay thread exited (code ${code}) without an outcome`));
    });
  });
  return { done, stop: () => worker.postMessage('stop') };
}
