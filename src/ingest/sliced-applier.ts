import type { BatchResult, Projector, SourceEvent } from '../store';

export interface SlicedOptions {
  /** Longest a single transaction should hold the event loop, in ms (default 8). */
  budgetMs?: number;
  onBatch?: (r: BatchResult, seconds: number, events: number) => void;
}

/** Lets timers and sockets run between two slices of work. */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * How many events the next transaction should take so it lasts about `budgetMs`: it follows the
 * measured cost per event, changing by at most x2 a step so one odd slice cannot swing it.
 */
export class SliceSizer {
  size = 64;

  constructor(private readonly budgetMs = 8, private readonly max = 5000) {}

  record(events: number, ms: number): void {
    const target = ms > 0 ? (events * this.budgetMs) / ms : this.size * 2;
    this.size = Math.max(1, Math.min(this.max, Math.round(Math.min(this.size * 2, Math.max(this.size / 2, target)))));
  }
}

/**
 * Applies events in slices sized so that each transaction (and aggregate rebuild) takes about
 * `budgetMs`, yielding to the event loop between slices: requests keep being answered while a
 * large batch is ingested. Batching never changes the result (the projector is order- and
 * batch-independent), only the latency.
 */
export class SlicedApplier {
  private readonly sizer: SliceSizer;

  constructor(private readonly projector: Projector, private readonly opts: SlicedOptions = {}) {
    this.sizer = new SliceSizer(opts.budgetMs ?? 8);
  }

  async apply(events: SourceEvent[]): Promise<void> {
    for (let i = 0; i < events.length;) {
      const chunk = events.slice(i, i + this.sizer.size);
      const started = performance.now();
      const r = this.projector.applyBatch(chunk);
      const ms = performance.now() - started;
      this.opts.onBatch?.(r, ms / 1000, chunk.length);
      this.sizer.record(chunk.length, ms);
      i += chunk.length;
      if (i < events.length) await yieldToLoop();
    }
  }
}
