import type { BatchResult, Projector, SourceEvent } from '../store';

export interface SlicedOptions {
  /** Longest a single transaction may hold the event loop, in ms (default 8). */
  budgetMs?: number;
  onBatch?: (r: BatchResult, seconds: number, events: number) => void;
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Applies events in slices sized so that each transaction (and aggregate rebuild) takes about
 * `budgetMs`, yielding to the event loop between slices: requests keep being answered while a
 * large batch is ingested. The slice size adapts to the measured cost per event. Batching never
 * changes the result (the projector is order- and batch-independent), only the latency.
 */
export class SlicedApplier {
  private slice = 64;

  constructor(private readonly projector: Projector, private readonly opts: SlicedOptions = {}) {}

  async apply(events: SourceEvent[]): Promise<void> {
    const budget = this.opts.budgetMs ?? 8;
    for (let i = 0; i < events.length;) {
      const chunk = events.slice(i, i + this.slice);
      const started = performance.now();
      const r = this.projector.applyBatch(chunk);
      const ms = performance.now() - started;
      this.opts.onBatch?.(r, ms / 1000, chunk.length);
      i += chunk.length;
      // Aim the next slice at the budget, changing by at most x2 at a time to stay stable.
      const target = ms > 0 ? (chunk.length * budget) / ms : this.slice * 2;
      this.slice = Math.max(1, Math.min(5000, Math.round(Math.min(this.slice * 2, Math.max(this.slice / 2, target)))));
      if (i < events.length) await yieldToLoop();
    }
  }
}
