import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import zlib from 'node:zlib';
import { SourcePositions, type BatchResult, type Db, type Projector, type SourceEvent } from '../store';

/** Lines of an NDJSON file, gzip or plain (told apart by the magic bytes, not the name). */
export async function* readLines(file: string): AsyncGenerator<string> {
  const fd = fs.openSync(file, 'r');
  const magic = Buffer.alloc(2);
  fs.readSync(fd, magic, 0, 2, 0);
  fs.closeSync(fd);
  const raw = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  const input = magic[0] === 0x1f && magic[1] === 0x8b ? raw.pipe(zlib.createGunzip()) : raw;
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of lines) yield line;
  } finally {
    lines.close();
    raw.destroy();
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
  /** Set when `shouldStop` ended the replay early: the file and the line it resumes at. */
  stopped?: { file: string; nextLine: number };
}

export function emptyTotals(): ReplayTotals {
  return { lines: 0, applied: 0, duplicate: 0, stale: 0, deadLettered: 0, skipped: 0, batches: 0 };
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
 * Applies NDJSON files in batches. Positions are stored with the facts, so an interrupted replay
 * resumes after its last committed line; applying a line twice changes nothing anyway.
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
    let batch: SourceEvent[] = [];
    let line = 0;
    const flush = (): void => {
      if (batch.length === 0) return;
      addBatch(totals, projector.applyBatch(batch));
      batch = [];
      opts.onBatch?.(totals, file);
    };
    for await (const raw of readLines(file)) {
      if (opts.shouldStop?.()) {
        // This line is left for the re-run; the lines in hand are committed by the flush below.
        totals.stopped = { file, nextLine: Math.max(line + 1, resumeAt) };
        break; // ends the line reader (its finally closes the file)
      }
      line += 1;
      totals.lines += 1;
      if (line < resumeAt) {
        totals.skipped += 1;
        continue;
      }
      if (raw.trim() === '') continue;
      batch.push({ raw, source, position: line });
      if (batch.length >= opts.batchSize) flush();
    }
    flush();
    if (totals.stopped) break;
  }
  return totals;
}
