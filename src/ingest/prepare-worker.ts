// Reads one NDJSON file and prepares its events (decode, validate, build run rows) in a thread of
// its own, so the writer's thread does only SQLite work. Batches go to the parent as they fill;
// at most CREDITS are in flight, so memory is bounded by the batch size, not the file.
import { parentPort, workerData } from 'node:worker_threads';
import { prepareEvent, type AcceptedEvent, type PreparedEvent } from '../store/prepare';
import { readLines } from './lines';

export interface PrepareJob {
  file: string;
  source: string;
  /** Lines before this one are counted as skipped (already applied by an earlier run). */
  resumeAt: number;
  batchSize: number;
}

/** One batch: the events of lines up to `lastLine`; `lines`/`skipped` count the lines read since the last batch. */
export interface PreparedBatch {
  events: PreparedEvent[];
  lastLine: number;
  lines: number;
  skipped: number;
  /** Bytes of the file read so far (for progress). */
  bytes: number;
  done: boolean;
}

const CREDITS = 2;
const job = workerData as PrepareJob;
const port = parentPort!;
let credits = CREDITS;
let wake: (() => void) | null = null;
port.on('message', () => {
  credits += 1;
  wake?.();
  wake = null;
});

const meter = { bytes: 0 };

/**
 * The accepted events' lines as UTF-8 views of one buffer, which the message moves instead of
 * copying: the writer reads a line only to dead-letter it, so a batch of strings (~1.5 KB an event)
 * would be copied into its heap, and collected, for nothing.
 */
function linesAsBytes(events: PreparedEvent[]): ArrayBuffer {
  const accepted = events.filter((e): e is AcceptedEvent => e.ok);
  let size = 0;
  for (const e of accepted) size += Buffer.byteLength(e.raw as string);
  const buffer = new ArrayBuffer(size);
  const bytes = Buffer.from(buffer);
  let at = 0;
  for (const e of accepted) {
    const n = bytes.write(e.raw as string, at);
    e.raw = new Uint8Array(buffer, at, n);
    at += n;
  }
  return buffer;
}

async function send(batch: Omit<PreparedBatch, 'done' | 'bytes'>, done: boolean): Promise<void> {
  while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
  credits -= 1;
  const lines = linesAsBytes(batch.events);
  port.postMessage({ ...batch, bytes: meter.bytes, done } satisfies PreparedBatch, [lines]);
}

async function main(): Promise<void> {
  let line = 0;
  let batch = { events: [] as PreparedEvent[], lastLine: 0, lines: 0, skipped: 0 };
  for await (const raw of readLines(job.file, meter)) {
    line += 1;
    batch.lines += 1;
    batch.lastLine = line;
    if (line < job.resumeAt) batch.skipped += 1;
    else if (raw.trim() !== '') batch.events.push(prepareEvent({ raw, source: job.source, position: line }));
    if (batch.events.length >= job.batchSize) {
      await send(batch, false);
      batch = { events: [], lastLine: line, lines: 0, skipped: 0 };
    }
  }
  await send(batch, true);
}

// A failure (the file unreadable midway) rejects: unhandled in a thread, it reaches the parent as
// the worker's 'error' event, and the replay fails with it.
void main();
