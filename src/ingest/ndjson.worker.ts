// The file thread of a replay (ndjson.ts): reads one NDJSON file and precomputes its events
// (decode, validate, what the aggregates take of a run)
// in a thread of its own, so the writer's thread does only what needs the database. Batches go to the
// parent as they fill, encoded flat (batch-codec.ts); at most CREDITS are in flight, so memory is
// bounded by the batch size, not the file.
import crypto from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { precomputeEvent, type PrecomputedEvent, type SourcePrefix } from '../store';
import { BatchEncoder, transferOf, type EncodedBatch } from './batch-codec';
import { readByteLineBatches } from './line-reader';

export interface FileJob {
  file: string;
  source: string;
  /** Lines before this one are counted as skipped (already applied by an earlier run). */
  resumeAt: number;
  batchSize: number;
  /** What the lines applied before held (source_prefixes): a prefix read now that differs is reported. */
  check?: SourcePrefix;
}

/** One batch: the events of lines up to `lastLine`; `lines`/`skipped` count the lines read since the last batch. */
export interface FileBatch {
  events: EncodedBatch;
  /** Events in `events`. */
  count: number;
  lastLine: number;
  lines: number;
  skipped: number;
  /** Bytes of the file read so far (for progress). */
  bytes: number;
  /** SHA-256 of lines 1 to `lastLine` (each line's bytes and \n), kept once the batch commits. */
  sha256: string;
  /** The file's first `check.lines` lines are not what was applied then (edited, or the file is shorter). */
  prefixChanged: boolean;
  done: boolean;
}

const CREDITS = 2;
const job = workerData as FileJob;
const port = parentPort!;
let credits = CREDITS;
let wake: (() => void) | null = null;
port.on('message', () => {
  credits += 1;
  wake?.();
  wake = null;
});

const meter = { bytes: 0 };
const encoder = new BatchEncoder(job.source);
const hash = crypto.createHash('sha256');
const NL = Buffer.from('\n');
let prefixChanged = false;

async function send(batch: { lastLine: number; lines: number; skipped: number }, done: boolean): Promise<void> {
  while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
  credits -= 1;
  const count = encoder.size;
  const events = encoder.take();
  // A file shorter than the lines applied from it before has changed too.
  if (done && job.check && batch.lastLine < job.check.lines) prefixChanged = true;
  const sha256 = hash.copy().digest('hex');
  port.postMessage({ ...batch, events, count, bytes: meter.bytes, sha256, prefixChanged, done } satisfies FileBatch, transferOf(events));
}

/**
 * The event with its line's bytes as they were read in place of its text, when they are its text's
 * UTF-8 (no invalid sequence was replaced by U+FFFD in decoding): the batch then copies them rather
 * than encoding the text again.
 */
function asReceived(e: PrecomputedEvent, raw: string, bytes: Buffer): PrecomputedEvent {
  if (raw.includes('\uFFFD')) return e;
  e.raw = bytes;
  if (e.ok && e.run) e.run.event = bytes;
  return e;
}

async function main(): Promise<void> {
  let line = 0;
  let batch = { lastLine: 0, lines: 0, skipped: 0 };
  for await (const lines of readByteLineBatches(job.file, meter)) {
    for (const bytes of lines) {
      line += 1;
      hash.update(bytes);
      hash.update(NL);
      if (job.check && line === job.check.lines && hash.copy().digest('hex') !== job.check.sha256) prefixChanged = true;
      batch.lines += 1;
      batch.lastLine = line;
      if (line < job.resumeAt) batch.skipped += 1;
      else {
        const raw = bytes.toString('utf8');
        if (raw.trim() !== '') encoder.add(asReceived(precomputeEvent({ raw, source: job.source, position: line }), raw, bytes));
      }
      if (encoder.size >= job.batchSize) {
        await send(batch, false);
        batch = { lastLine: line, lines: 0, skipped: 0 };
      }
    }
  }
  await send(batch, true);
}

// A failure (the file unreadable midway) rejects: unhandled in a thread, it reaches the parent as
// the worker's 'error' event, and the replay fails with it.
void main();
