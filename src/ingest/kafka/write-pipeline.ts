// The Kafka consumer's writer: fetched batches queue here (back-pressure on kafkajs past QUEUED_MAX),
// are cut into transactions sized by time or, while catching up, by count, precomputed in a thread
// of their own while the previous one is written, and applied above each partition's stored offset
// only. Each batch comes with the apply mode the lag calls for (lag.ts); the roll-ups waiting in
// memory are written when the stream goes quiet. Knows nothing of the group, the broker or restarts:
// a failed transaction is handed to `onFailure` (the supervisor restarts the consumer).
import { SourcePositions, type ApplyMode, type BatchResult, type Db, type PrecomputedEvent, type Projector } from '../../store';
import { Precomputer } from '../precomputer';
import { SliceSizer } from '../sliced-applier';
import type { BatchControl, InboundMessage } from './client';
import { FetchedBatches } from './fetched';
import type { ShardScreen } from './shard-screen';
import { Timings, type IngestCounters } from './status';

/** Events per transaction while catching up (each commit rewrites the same hot pages once; also the sizer's largest slice). */
const CATCH_UP_CHUNK = 2000;
/**
 * A started consumer's first catch-up transactions take this many events, doubling up to
 * CATCH_UP_CHUNK: the first commit then waits for the freshly started precompute thread to precompute
 * a few hundred records, not 2,000 (its code not yet optimised by V8), and the two threads overlap
 * sooner.
 */
const CATCH_UP_FIRST = 250;
/**
 * How long a live transaction should take. The consumer has a thread of its own (ingest-thread.ts), so a
 * transaction never delays a request: what bounds it is freshness (a run is visible when its
 * transaction commits) against the cost of a commit. ~40 ms is ~500 events on this writer.
 */
export const SLICE_MS = 40;
/**
 * How long the consumer goes without a record before it writes the weeks and months waiting in its
 * memory (store/rollups.ts): an idle consumer leaves a database with nothing pending (its digest a
 * replay's, a snapshot complete), while a steady stream writes each period once, when it ends.
 */
const SETTLE_WHEN_IDLE_MS = 1000;
/**
 * Fetched events waiting to be written above which a fetched batch is not handed back to kafkajs
 * (whose next fetch waits for every batch of the last one). Below it, the next fetch travels while
 * the writer works through the last one: ~8,000 events are ~0.2 s of writing, more than a fetch of
 * 4 MB a partition takes on a LAN. It also bounds what a consumer holds in memory (~2 fetches).
 */
export const QUEUED_MAX = 8000;
/** Chunks handed to the precompute thread ahead of the one being written. */
const PRECOMPUTED_AHEAD = 2;

export interface WritePipelineOptions {
  /** Events per transaction; absent or 0: sized to take about `sliceMs`. */
  chunkSize?: number;
  /** How long a transaction should take when sized by time (default SLICE_MS). */
  sliceMs?: number;
  /** A transaction failed: the queue is dropped and halted; the owner restarts the consumer. */
  onFailure(error: Error): void;
  /** Something went wrong that is retried by itself (writing the roll-ups waiting in memory). */
  onError(message: string): void;
  /** A transaction dead-lettered events (the DLQ publisher has some to send). */
  onDeadLetters?(): void;
}

/** A chunk of one partition's records in the precompute thread; `generation` is the assignment it was fetched in. */
interface Chunk {
  source: string;
  size: number;
  generation: number;
  mode: ApplyMode;
  precomputed: Promise<PrecomputedEvent[]>;
}

export class WritePipeline {
  private readonly sizer: SliceSizer | null;
  private readonly chunkSize: number;
  private readonly positions: SourcePositions;
  /** Decodes and validates in a thread of its own while this one writes; replaced if it fails. */
  private precomputer: Precomputer | null = null;
  private readonly timings = new Timings();
  private readonly events = { applied: 0, duplicate: 0, stale: 0, dead_lettered: 0 };
  private redelivered = 0;
  private batches = 0;
  /** The mode of the last batch pushed: the chunks taken from now on are applied in it. */
  private mode: ApplyMode = 'live';
  /** The size of the next catch-up transaction while it grows to CATCH_UP_CHUNK (CATCH_UP_FIRST). */
  private catchUpChunk = CATCH_UP_FIRST;
  private settleTimer: NodeJS.Timeout | undefined;
  /** Chunks were applied since the last settle. */
  private unsettled = false;
  /** Fetched batches not yet written, oldest first, of every partition (see push). */
  private readonly fetched = new FetchedBatches<InboundMessage>();
  /** Chunks taken from `fetched` and being precomputed, oldest first. */
  private ahead: Chunk[] = [];
  /** Events in `fetched` and `ahead` not yet written. */
  private queued = 0;
  /** push calls waiting for `queued` to fall to QUEUED_MAX. */
  private roomWaiters: Array<() => void> = [];
  /** The loop writing the queue runs (write()); `writing` is its last promise. */
  private writerBusy = false;
  private writing: Promise<void> | null = null;
  /** Bumped when an assignment drops the queue: chunks of an older generation are not written. */
  private generation = 0;
  /**
   * A transaction failed: nothing more is queued until the next assignment, whose seek to the
   * stored offsets fetches again what was dropped (a later batch written first would leave a gap).
   */
  private halted: Error | null = null;
  private stopped = false;
  /** A shard's filter of foreign projects (null: every partition is this consumer's). */
  private screen: ShardScreen | null = null;

  constructor(private readonly db: Db, private readonly projector: Projector, private readonly opts: WritePipelineOptions) {
    this.chunkSize = opts.chunkSize ?? 0;
    this.sizer = opts.chunkSize ? null : new SliceSizer(opts.sliceMs ?? SLICE_MS, CATCH_UP_CHUNK);
    this.positions = new SourcePositions(db);
  }

  /** Boots the precompute thread (while the consumer connects and joins). */
  start(): void {
    this.precomputer = new Precomputer();
  }

  /** From now on, events of projects of other shards are dead-lettered (shard-screen.ts). */
  screenWith(screen: ShardScreen): void {
    this.screen = screen;
  }

  /** The error that halted the writes since the last assignment, if any. */
  get failure(): Error | null {
    return this.halted;
  }

  /**
   * Queues a fetched batch of `source` for the writer, applied in `mode`, and returns as soon as the
   * queue has room (QUEUED_MAX): kafkajs fetches again only when every batch of its last fetch is
   * handed back, so the next fetch travels while this one is written. Where a partition resumes is
   * still SQLite's: a record below its partition's stored offset is never applied (writeChunk).
   */
  async push(source: string, messages: InboundMessage[], mode: ApplyMode, control: Pick<BatchControl, 'isRunning' | 'heartbeat'>): Promise<void> {
    if (this.halted) throw this.halted;
    this.mode = mode;
    this.fetched.push(source, messages);
    this.queued += messages.length;
    if (!this.writerBusy) {
      this.writerBusy = true;
      this.writing = this.write();
    }
    while (this.queued > QUEUED_MAX && !this.stopped) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      if (control.isRunning()) await control.heartbeat();
    }
  }

  /** A new assignment: every partition is about to be sought to its stored offset, so what was fetched before is fetched again. */
  reassigned(): void {
    this.dropQueue();
    this.halted = null;
  }

  /** Stops taking batches and drops the queue (kafkajs's stop waits for every eachBatch: none waits for room any more). */
  halt(): void {
    this.stopped = true;
    clearTimeout(this.settleTimer);
    this.dropQueue();
  }

  /** After halt() and the consumer's stop: the thread ended, the last write done, what waits in memory written. */
  async close(quietly: (p: Promise<void> | null | undefined) => Promise<void>): Promise<void> {
    await quietly(this.precomputer?.close());
    await quietly(this.writing);
    // The weeks and months waiting in memory are written: a clean stop leaves nothing pending.
    this.settleNow();
  }

  counters(): IngestCounters {
    return {
      events: { ...this.events },
      redelivered: this.redelivered,
      batches: this.batches,
      batch_apply_seconds: this.timings.snapshot(),
    };
  }

  drainBatchSeconds(): number[] {
    return this.timings.drain();
  }

  /**
   * Writes the queue, one transaction per chunk, while the next chunks are precomputed in the
   * precompute thread; returns when the queue is empty (the next push starts it again).
   */
  private async write(): Promise<void> {
    try {
      for (;;) {
        this.precomputeAhead();
        const chunk = this.ahead.shift();
        if (!chunk) return;
        let events: PrecomputedEvent[];
        try {
          events = await chunk.precomputed;
        } catch (e) {
          if (this.stopped || chunk.generation !== this.generation) continue;
          this.failWrites(e);
          return;
        }
        // Stopped, or fetched before an assignment: the seek to the stored offsets fetches it again.
        if (this.stopped) return;
        if (chunk.generation !== this.generation) continue;
        this.precomputeAhead(); // the precompute thread works on the next chunks while this one is written
        try {
          this.writeChunk(chunk.source, events, chunk.mode);
        } catch (e) {
          this.failWrites(e);
          return;
        }
        this.queued -= chunk.size;
        if (this.queued <= QUEUED_MAX) this.wakeRoomWaiters();
      }
    } finally {
      this.writerBusy = false; // in the same turn as the last check of the queue: the next push starts a new loop
    }
  }

  /** One transaction, of the events above the partition's stored offset: none is ever applied twice. */
  private writeChunk(source: string, events: PrecomputedEvent[], mode: ApplyMode): void {
    const next = this.positions.nextOf(source);
    const unseen = next === undefined ? events : events.filter((e) => e.position >= next);
    this.redelivered += events.length - unseen.length;
    const fresh = this.screen ? this.screen.screen(source, unseen) : unseen;
    if (fresh.length === 0) return;
    const started = performance.now();
    const result = this.applyChunk(fresh, mode);
    this.sizer?.record(fresh.length, performance.now() - started);
    if (result.deadLettered > 0) this.opts.onDeadLetters?.();
  }

  /** Takes chunks from the queue into the precompute thread until PRECOMPUTED_AHEAD are there. */
  private precomputeAhead(): void {
    while (this.ahead.length < PRECOMPUTED_AHEAD) {
      const source = this.fetched.oldestSource;
      if (source === undefined) return;
      const mode = this.mode;
      const messages = this.fetched.take(source, this.chunkLength(mode));
      const precomputed = this.precompute(source, messages);
      precomputed.catch(() => undefined); // a chunk dropped before it is awaited is let go, not an error
      this.ahead.push({ source, size: messages.length, generation: this.generation, mode, precomputed });
    }
  }

  /**
   * A transaction failed (the disk is full, the precompute thread died): the queue is dropped, nothing
   * more is queued (`halted`), and the owner restarts the consumer as after a crash; its assignment
   * seeks every partition to what SQLite holds.
   */
  private failWrites(e: unknown): void {
    this.halted = e instanceof Error ? e : new Error(String(e));
    this.dropQueue();
    this.opts.onFailure(this.halted);
  }

  private dropQueue(): void {
    this.generation += 1;
    this.fetched.clear();
    this.ahead = [];
    this.queued = 0;
    this.wakeRoomWaiters();
  }

  private wakeRoomWaiters(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Events in the next transaction: by time (SLICE_MS), or CATCH_UP_CHUNK in bulk (after the first few: CATCH_UP_FIRST). */
  private chunkLength(mode: ApplyMode): number {
    const size = this.sizer?.size ?? this.chunkSize;
    if (mode !== 'bulk') return size;
    const n = Math.max(size, this.catchUpChunk);
    this.catchUpChunk = Math.min(CATCH_UP_CHUNK, this.catchUpChunk * 2);
    return n;
  }

  private precompute(source: string, chunk: InboundMessage[]): Promise<PrecomputedEvent[]> {
    if (!this.precomputer || this.precomputer.broken) this.precomputer = new Precomputer();
    return this.precomputer.precompute(source, chunk.map((m) => ({ position: m.offset, value: m.value })));
  }

  /** One SQLite transaction: facts, dead letters and the next offset of this partition. */
  private applyChunk(events: PrecomputedEvent[], mode: ApplyMode): BatchResult {
    const started = process.hrtime.bigint();
    const result = this.projector.applyPrecomputed(events, mode);
    this.timings.record(Number(process.hrtime.bigint() - started) / 1e9);
    this.batches += 1;
    this.settleWhenIdle();
    this.events.applied += result.applied;
    this.events.duplicate += result.duplicate;
    this.events.stale += result.stale;
    this.events.dead_lettered += result.deadLettered;
    return result;
  }

  /** (Re)arms the idle timer: SETTLE_WHEN_IDLE_MS after the last chunk, what waits in memory is written. */
  private settleWhenIdle(): void {
    this.unsettled = true;
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.settleNow(), SETTLE_WHEN_IDLE_MS);
    this.settleTimer.unref();
  }

  private settleNow(): void {
    if (!this.unsettled || !this.db.open) return;
    try {
      this.projector.settle();
      this.unsettled = false;
    } catch (e) {
      this.opts.onError(`writing the roll-ups waiting in memory failed: ${(e as Error).message}`); // tried again at the next idle moment
    }
  }
}
