// The preparing thread of a Preparer (preparer.ts): raw events in, prepared batches out (decoded,
// validated, what the aggregates take of a run), encoded flat (batch-codec.ts).
import { parentPort } from 'node:worker_threads';
import { prepareEvent } from '../store';
import { BatchEncoder, transferOf } from './batch-codec';
import type { PrepareRequest, PrepareResponse } from './preparer';

const port = parentPort!;

port.on('message', (job: PrepareRequest) => {
  const encoder = new BatchEncoder(job.source);
  const bytes = Buffer.from(job.bytes);
  for (let i = 0; i < job.positions.length; i += 1) {
    const start = job.bounds[2 * i]!;
    const end = job.bounds[2 * i + 1]!;
    // A record without a value (a tombstone) is an empty line: unparseable, dead-lettered.
    const raw = start < 0 ? Buffer.alloc(0) : bytes.subarray(start, end);
    const e = prepareEvent({ raw: raw.toString('utf8'), source: job.source, position: job.positions[i]! });
    // The record's own bytes are what the row and the dead letters keep (not UTF-8: not its decoding).
    e.raw = raw;
    encoder.add(e);
  }
  const batch = encoder.take();
  port.postMessage({ id: job.id, batch } satisfies PrepareResponse, transferOf(batch));
});
