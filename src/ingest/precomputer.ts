import type { Worker } from 'node:worker_threads';
import { INGEST_HEAP_MB, startWorker } from '../lib/worker';
import type { PrecomputedEvent } from '../store';
import { decodeBatch, type EncodedBatch } from './batch-codec';

/** One raw event to precompute: where it is in its source, and its bytes (null: a record without a value). */
export interface RawEvent {
  position: number;
  value: Uint8Array | null;
}

/** What a Precomputer posts its thread: every value in one buffer (moved), with each one's bounds. */
export interface PrecomputeRequest {
  id: number;
  source: string;
  positions: Float64Array;
  /** start, end of each value in `bytes`; -1, -1 for none. */
  bounds: Float64Array;
  bytes: ArrayBuffer;
}

export interface PrecomputeResponse {
  id: number;
  batch: EncodedBatch;
}

/**
 * Decoding, validating and precomputing events (store/precompute.ts) in a thread of its own
 * (precomputer.worker.ts), for a
 * writer whose events arrive in memory (Kafka's: a replay's file thread, ndjson.worker.ts, reads its file itself).
 * The writer's thread then does only what needs the database, and the next chunk is precomputed while
 * it writes this one: on two cores the two halves of the work run side by side.
 */
export class Precomputer {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (e: PrecomputedEvent[]) => void; reject: (e: Error) => void }>();
  private next = 1;
  private failed: Error | null = null;

  constructor() {
    // A small young generation, as replay's file thread: its garbage is a chunk at a time.
    this.worker = startWorker(__filename, null, { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: INGEST_HEAP_MB });
    this.worker.on('message', (m: PrecomputeResponse) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      w?.resolve(decodeBatch(m.batch));
    });
    const fail = (e: Error): void => {
      this.failed = e;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the precompute thread exited (code ${code})`)));
    this.worker.unref(); // it never keeps the process alive by itself: its owner closes it
  }

  /** The thread failed or was closed: every precompute() from now on rejects. */
  get broken(): boolean {
    return this.failed !== null;
  }

  /** The events of `source` precomputed, in order, as the projector takes them. */
  precompute(source: string, events: readonly RawEvent[]): Promise<PrecomputedEvent[]> {
    if (this.failed) return Promise.reject(this.failed);
    let size = 0;
    for (const e of events) size += e.value?.byteLength ?? 0;
    const bytes = new ArrayBuffer(size);
    const into = new Uint8Array(bytes);
    const positions = new Float64Array(events.length);
    const bounds = new Float64Array(events.length * 2);
    let at = 0;
    events.forEach((e, i) => {
      positions[i] = e.position;
      if (e.value === null) {
        bounds[2 * i] = -1;
        bounds[2 * i + 1] = -1;
        return;
      }
      into.set(e.value, at);
      bounds[2 * i] = at;
      bounds[2 * i + 1] = (at += e.value.byteLength);
    });
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, source, positions, bounds, bytes } satisfies PrecomputeRequest, [bytes, positions.buffer, bounds.buffer]);
    });
  }

  async close(): Promise<void> {
    this.failed ??= new Error('the precomputer is closed');
    await this.worker.terminate();
  }
}
