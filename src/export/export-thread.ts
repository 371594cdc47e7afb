import { startWorker } from '../lib/worker';
import type { ExportOptions, ExportProgress, ExportResult } from './export';
import { ExportError } from './manifest';
import { DbOpenError } from '../store';

/** What `export` hands its thread: plain data only (structured clone). */
export type ExportJob = Omit<ExportOptions, 'onProgress' | 'signal'>;

/** Messages from the export thread: progress after each partition, then one outcome. */
export type ExportMessage =
  | { type: 'progress'; progress: ExportProgress }
  | { type: 'done'; result: ExportResult }
  | { type: 'failed'; error: { message: string; kind: 'export' | 'db-open' | 'other'; file?: string; problem?: string; code?: string } };

/**
 * Heap cap of the export thread. What an export holds is bounded (a page of runs, a row group of each
 * dataset: datasets.ts, parquet.ts), but under V8's default limit the garbage of a large project's
 * months piled up before being collected: the 1,000-prompt x 8-engine, 60-day export peaked at 255 MB
 * RSS in the main thread, 204 MB over 10 of its days; capped, V8 collects sooner.
 */
export const EXPORT_HEAP_MB = 128;

/**
 * exportData in a worker thread with a capped heap, so the process's memory stays bounded whatever the
 * project's size; the calling thread shows progress and passes on a stop (the export then finishes
 * the month in hand, as exportData does on its signal). The same outcome as exportData: its result,
 * or its ExportError or DbOpenError.
 */
export function exportInThread(job: ExportJob, onProgress: (p: ExportProgress) => void): { done: Promise<ExportResult>; stop(): void } {
  // A small young generation too: the export's garbage is a page of runs at a time.
  const worker = startWorker(__filename, job, { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: EXPORT_HEAP_MB });
  let outcome: ExportMessage | null = null;
  let crash: Error | null = null;
  const done = new Promise<ExportResult>((resolve, reject) => {
    worker.on('message', (m: ExportMessage) => {
      if (m.type === 'progress') onProgress(m.progress);
      else outcome = m;
    });
    worker.on('error', (e: Error & { code?: string }) => {
      crash = e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new Error(`the export thread ran out of memory (its heap is capped at ${EXPORT_HEAP_MB} MB)`) : e;
    });
    worker.on('exit', (code) => {
      const o = outcome as ExportMessage | null;
      if (o?.type === 'done') return resolve(o.result);
      if (o?.type === 'failed') {
        const err = o.error;
        if (err.kind === 'export') return reject(new ExportError(err.message));
        if (err.kind === 'db-open') return reject(new DbOpenError(err.file ?? '', err.problem ?? err.message));
        return reject(Object.assign(new Error(err.message), err.code === undefined ? {} : { code: err.code }));
      }
      reject(crash ?? new Error(`the export thread exited (code ${code}) without an outcome`));
    });
  });
  return { done, stop: () => worker.postMessage('stop') };
}
