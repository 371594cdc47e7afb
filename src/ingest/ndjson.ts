import path from 'node:path';
import { INGEST_HEAP_MB, startWorker } from '../lib/worker';
import { forgetFileDeadLetters, SourcePositions, type BatchResult, type Db, type Projector } from '../store';
import type { FileJob, FileBatch } from './ndjson.worker';
import { decodeBatch } from './batch-codec';

export { readLines } from './line-reader';

/** An events file that could not be read to its end (a truncated gzip, an I/O error). */
export class SourceReadError extends Error {
  constructor(readonly file: string, reason: string) {
    super(`cannot read ${file}: ${reason}`);
  }
}

export function fileSource(file: string): string {
  return `file:${path.resolve(file)}`;
}

export interface ReplayTotals {
  lines: number;
  applied: number;
  duplicate: number;
  stale: number;
  deadLettered: number;
  skipped: number;
  batches: number;
  /** Input bytes read: the files done, whole, plus what was read of the current one (for progress). */
  bytes: number;
  /** Set when `shouldStop` ended the replay early: the file and the line it resumes at. */
  stopped?: { file: string; nextLine: number };
  /** The first DEAD_LETTERS_NAMED lines set aside (of `deadLettered`), for the user to fix. */
  deadLetters: DeadLine[];
  /** Files whose lines applied by an earlier run are not what they hold now: skipped all the same. */
  changed: Array<{ file: string; lines: number }>;
}

/** A line set aside: where, which event (when its envelope was read) and why. */
export interface DeadLine { file: string; line: number; eventId: string | null; reason: string; detail: string }

/** How many dead-lettered lines a replay names; the rest are counted (`dead-letters` lists them all). */
export const DEAD_LETTERS_NAMED = 20;

export function emptyTotals(): ReplayTotals {
  return { lines: 0, applied: 0, duplicate: 0, stale: 0, deadLettered: 0, skipped: 0, batches: 0, bytes: 0, deadLetters: [], changed: [] };
}

export function addBatch(t: ReplayTotals, r: BatchResult): void {
  t.applied += r.applied;
  t.duplicate += r.duplicate;
  t.stale += r.stale;
  t.deadLettered += r.deadLettered;
  t.batches += 1;
}

export interface ReplayOptions {
  batchSize: number;
  /** Re-read files from their first line instead of resuming after the last line applied. */
  fromStart?: boolean;
  onBatch?: (totals: ReplayTotals, file: string) => void;
  /**
   * Asked after every line: once it says true, the lines in hand are applied and committed as a
   * last batch and the replay returns with `stopped` set (a signal's clean stop; a re-run resumes).
   */
  shouldStop?: () => boolean;
}

/**
 * Applies NDJSON files in batches. Each file is read and its events precomputed (decoded, validated,
 * rows built) in a worker thread while this thread writes the previous batch: the two cores each
 * do half the work. Positions are stored with the facts, so an interrupted replay resumes after
 * its last committed line; applying a line twice changes nothing anyway.
 */
export async function replayFiles(db: Db, projector: Projector, files: string[], opts: ReplayOptions): Promise<ReplayTotals> {
  const totals = emptyTotals();
  const positions = new SourcePositions(db);
  for (const [index, file] of files.entries()) {
    const source = fileSource(file);
    const resumeAt = opts.fromStart ? 1 : (positions.nextOf(source) ?? 1);
    if (index > 0 && opts.shouldStop?.()) {
      totals.stopped = { file, nextLine: resumeAt };
      break;
    }
    if (opts.fromStart) forgetFileDeadLetters(db, source);
    const check = resumeAt > 1 ? positions.prefixOf(source) : undefined;
    await replayFile(projector, positions, { file, source, resumeAt, batchSize: opts.batchSize, ...(check ? { check } : {}) }, opts, totals);
    if (totals.stopped) break;
  }
  // The latest week and month of each project waited in memory: written now, stopped or not.
  projector.settle();
  return totals;
}

/** One file through a file thread (ndjson.worker.ts); stops between batches when `shouldStop` says so. */
function replayFile(projector: Projector, positions: SourcePositions, job: FileJob, opts: ReplayOptions, totals: ReplayTotals): Promise<void> {
  return new Promise((resolve, reject) => {
    // A small young generation: the thread's garbage is a batch at a time, and RSS should not grow with it.
    const worker = startWorker(__filename, job, { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: INGEST_HEAP_MB });
    let settled = false;
    const finish = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve();
    };
    let appliedTo = job.resumeAt - 1; // the last line whose batch committed
    const bytesBefore = totals.bytes;
    const stop = (): void => {
      // The lines after the last committed batch are left for the re-run.
      totals.stopped = { file: job.file, nextLine: appliedTo + 1 };
      finish();
    };
    worker.on('message', (b: FileBatch) => {
      if (settled) return;
      if (opts.shouldStop?.()) return stop();
      try {
        if (b.count > 0) {
          addBatch(totals, projector.applyPrecomputed(decodeBatch(b.events), 'bulk')); // the trend rendered once, when the replay settles
          for (const d of projector.deadLetters) {
            if (totals.deadLetters.length >= DEAD_LETTERS_NAMED) break;
            totals.deadLetters.push({ file: job.file, line: d.position, eventId: d.eventId, reason: d.reason, detail: d.detail });
          }
        }
        // The fingerprint of what was applied, unless the lines skipped were not it: kept as it was,
        // the next run says so again, until a run from the first line applies the file as it is.
        if (b.prefixChanged) {
          if (!totals.changed.some((c) => c.file === job.file)) totals.changed.push({ file: job.file, lines: job.check?.lines ?? 0 });
        } else if (b.lastLine > 0) {
          positions.notePrefix(job.source, { lines: b.lastLine, sha256: b.sha256 });
        }
      } catch (e) {
        finish(e); // the batch was rolled back whole: what committed before it stands
        return;
      }
      appliedTo = Math.max(appliedTo, b.lastLine);
      totals.lines += b.lines;
      totals.skipped += b.skipped;
      totals.bytes = bytesBefore + b.bytes;
      opts.onBatch?.(totals, job.file);
      if (b.done) return finish();
      // Through the event loop, so a signal's handler runs between two batches: a port delivers
      // queued messages one after another without returning to the loop.
      setImmediate(() => {
        if (settled) return;
        if (opts.shouldStop?.()) stop();
        else worker.postMessage('more');
      });
    });
    worker.on('error', (e) => finish(new SourceReadError(job.file, e.message)));
    worker.on('exit', (code) => finish(new Error(`the file thread for ${job.file} exited (code ${code}) before the end of the file`)));
  });
}
