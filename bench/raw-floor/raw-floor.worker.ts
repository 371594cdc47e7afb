// The preparing thread of the raw-event floor (raw-floor.ts): reads the log with the reader replay
// uses, decodes and validates each line with decodeEvent, and hands the writer the valid events'
// bytes as read and their ids, a transaction's worth at a time, in one transferred buffer (nothing
// copied across the threads). At most `credits` batches are in flight: a bounded queue, as replay's file thread.
import { parentPort, workerData } from 'node:worker_threads';
import { decodeEvent } from '../../src/events';
import { readByteLineBatches } from '../../src/ingest/line-reader';
import type { FloorJob, RawBatch } from './raw-floor';

const job = workerData as FloorJob;
const port = parentPort!;
let credits = job.credits;
let wake: (() => void) | null = null;
port.on('message', () => {
  credits += 1;
  wake?.();
  wake = null;
});

let lines = 0;
let invalid = 0;
let ids: string[] = [];
let events: Buffer[] = [];

async function send(done: boolean): Promise<void> {
  while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
  credits -= 1;
  let size = 0;
  for (const e of events) size += e.length;
  const bytes = new ArrayBuffer(size);
  const into = new Uint8Array(bytes);
  const ends = new Uint32Array(events.length);
  let at = 0;
  events.forEach((e, i) => {
    into.set(e, at);
    ends[i] = at += e.length;
  });
  const batch: RawBatch = { ids: ids.join('\n'), bytes, ends, lines, invalid, done };
  port.postMessage(batch, [bytes, ends.buffer]);
  ids = [];
  events = [];
}

async function main(): Promise<void> {
  for await (const batch of readByteLineBatches(job.file)) {
    for (const bytes of batch) {
      lines += 1;
      const raw = bytes.toString('utf8');
      if (raw.trim() === '') continue;
      const d = decodeEvent(raw);
      if (!d.ok) {
        invalid += 1;
        continue;
      }
      ids.push(d.event.event_id);
      events.push(bytes);
      if (events.length === job.perTransaction) await send(false);
    }
  }
  await send(true);
}

void main();
