// The precompute thread of a Precomputer (precomputer.ts): raw events in, precomputed batches out (decoded,
// validated, what the aggregates take of a run), encoded flat (batch-codec.ts).
import { parentPort } from 'node:worker_threads';
import { precomputeEvent } from '../store';
import { BatchEncoder, transferOf } from './batch-codec';
import type { PrecomputeRequest, PrecomputeResponse } from './precomputer';

const port = parentPort!;

port.on('message', (job: PrecomputeRequest) => {
  const encoder = new BatchEncoder(job.source);
  const bytes = Buffer.from(job.bytes);
  for (let i = 0; i < job.positions.length; i += 1) {
    const start = job.bounds[2 * i]!;
    const end = job.bounds[2 * i + 1]!;
    // A record without a value (a tombstone) is an empty line: unparseable, dead-lettered.
    const raw = start < 0 ? Buffer.alloc(0) : bytes.subarray(start, end);
    const e = precomputeEvent({ raw: raw.toString('utf8'), source: job.source, position: job.positions[i]! });
    // The record's own bytes are what the row and the dead letters keep (not UTF-8: not its decoding).
    e.raw = raw;
    encoder.add(e);
  }
  const batch = encoder.take();
  port.postMessage({ id: job.id, batch } satisfies PrecomputeResponse, transferOf(batch));
});
