/**
 * Fetched batches waiting for the Kafka consumer's writer (write-pipeline.ts), oldest first, of every
 * partition. The writer takes a transaction's worth of one partition's records at a time, across as
 * many of its batches as it takes: after a stall the queue holds many small batches of each
 * partition (kafkajs fetched on while the writer waited), and one transaction of them commits once
 * where a transaction per batch committed each time. A partition's records leave in the order they
 * came; other partitions' batches keep their places.
 */
export class FetchedBatches<M> {
  private batches: Array<{ source: string; messages: readonly M[]; taken: number }> = [];

  /** The partition (source) of the oldest batch with records left; undefined when empty. */
  get oldestSource(): string | undefined {
    return this.batches[0]?.source;
  }

  push(source: string, messages: readonly M[]): void {
    if (messages.length > 0) this.batches.push({ source, messages, taken: 0 });
  }

  /** Up to `length` of the oldest records of `source`, removed from the queue. */
  take(source: string, length: number): M[] {
    let out: M[] = [];
    for (let i = 0; i < this.batches.length && out.length < length;) {
      const b = this.batches[i]!;
      if (b.source !== source) {
        i += 1;
        continue;
      }
      const part = b.messages.slice(b.taken, b.taken + length - out.length);
      b.taken += part.length;
      out = out.length === 0 ? part : out.concat(part);
      if (b.taken >= b.messages.length) this.batches.splice(i, 1);
      else i += 1;
    }
    return out;
  }

  clear(): void {
    this.batches = [];
  }
}
