// Where each partition stands against Kafka: the watermarks (from fetched batches and a periodic
// admin probe), the offsets SQLite holds, the partitions assigned, and from these the lag that
// status() shows and the apply mode that the lag calls for. The probe doubles as the broker's
// liveness check: its outcome goes to the supervisor, which owns the consumer's state.
import { kafkaSource, parseKafkaSource, type ApplyMode, type Db, type SourcePositions } from '../../store';
import { isUnknownTopicError, type AdminAdapter, type KafkaClient } from './client';
import type { PartitionStatus } from './status';

/**
 * Lag (over every assigned partition) from which the consumer is catching up: its transactions take
 * CATCH_UP_CHUNK events (write-pipeline.ts) until the lag is under CAUGHT_UP (a long transaction
 * commits the same hot pages once, where live slices are a few hundred events each). One mode for all
 * partitions, with a gap between the two thresholds so that a lag near one does not switch back and forth.
 */
const CATCHING_UP = 20_000;
const CAUGHT_UP = 2_000;

interface Watermarks {
  low: number;
  high: number;
}

/** What a probe of the broker found: it answered, or it failed with this error. */
export interface ProbeOutcome {
  answered(): void;
  failed(error: unknown): void;
}

export class LagTracker {
  private readonly watermarks = new Map<string, Watermarks>();
  private assigned = new Set<string>();
  private admin: AdminAdapter | null = null;
  /** Catching up (see CATCHING_UP): the writes are bulk. */
  private bulk = false;

  constructor(
    private readonly db: Db,
    private readonly positions: SourcePositions,
    private readonly client: KafkaClient,
    /** The events topics and the catalog topic, when there is one. */
    private readonly subscribed: readonly string[],
    private readonly outcome: ProbeOutcome,
  ) {}

  /** The partitions the group gave this process (`kafka:<topic>:<partition>` sources). */
  assign(sources: Iterable<string>): void {
    this.assigned = new Set(sources);
  }

  noteHighWatermark(source: string, high: number): void {
    const known = this.watermarks.get(source);
    this.watermarks.set(source, { low: known?.low ?? 0, high: Math.max(high, known?.high ?? 0) });
  }

  /** Partitions known of `topic` (from the probes): 0 while it does not exist. */
  partitionCount(topic: string): number {
    return new Set([...this.watermarks.keys()].filter((s) => parseKafkaSource(s)?.topic === topic)).size;
  }

  /** High watermarks for the lag, and the liveness probe: a failure here is what /readyz reports. */
  async poll(): Promise<void> {
    try {
      if (!this.admin) {
        this.admin = this.client.admin();
        await this.admin.connect();
      }
      for (const topic of this.subscribed) {
        try {
          for (const o of await this.admin.fetchTopicOffsets(topic)) {
            this.watermarks.set(kafkaSource(topic, o.partition), { low: o.low, high: o.high });
          }
        } catch (e) {
          if (!isUnknownTopicError(e)) throw e;
        }
      }
      this.outcome.answered();
    } catch (e) {
      this.outcome.failed(e);
      // A fresh admin client next time: kafkajs clients do not always recover their connections.
      await this.close();
    }
  }

  async close(): Promise<void> {
    const admin = this.admin;
    this.admin = null;
    await admin?.disconnect().catch(() => undefined);
  }

  /**
   * How the next writes are applied: 'bulk' from CATCHING_UP behind until under CAUGHT_UP, over the
   * assigned partitions (a catch-up renders the trend's days when it settles), else 'live'.
   */
  mode(): ApplyMode {
    let lag = 0;
    for (const p of this.partitions()) if (p.assigned) lag += p.lag ?? 0;
    this.bulk = this.bulk ? lag >= CAUGHT_UP : lag >= CATCHING_UP;
    return this.bulk ? 'bulk' : 'live';
  }

  /** Sum of the lag of the assigned partitions (all known ones before the first assignment); null when none is known. */
  total(partitions: PartitionStatus[]): number | null {
    const counted = this.assigned.size > 0 ? partitions.filter((p) => p.assigned) : partitions;
    const lags = counted.map((p) => p.lag).filter((l): l is number => l !== null);
    return lags.length === 0 ? null : lags.reduce((a, b) => a + b, 0);
  }

  partitions(): PartitionStatus[] {
    if (!this.db.open) return []; // status() after stop() and the database closed
    const stored = this.positions.kafkaPositions();
    const sources = new Set([...this.watermarks.keys(), ...this.assigned, ...stored.keys()]);
    const statuses: PartitionStatus[] = [];
    for (const source of sources) {
      const tp = parseKafkaSource(source);
      if (!tp || !this.subscribed.includes(tp.topic)) continue;
      const w = this.watermarks.get(source);
      const next = stored.get(source) ?? null;
      statuses.push({
        ...tp,
        assigned: this.assigned.has(source),
        next_offset: next,
        low_watermark: w?.low ?? null,
        high_watermark: w?.high ?? null,
        lag: w ? Math.max(0, w.high - (next ?? w.low)) : null,
      });
    }
    return statuses.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  }
}
