// What the Kafka consumer reports: its state, lag and counters (status()), the batch apply
// histogram /metrics observes, and what /readyz makes of them. Kept apart from the consumer's
// moving parts so that a reader of /readyz or /metrics finds every field in one place.
import type { DlqStatus } from './dlq';

/**
 * starting: connected, waiting for the first partition assignment; consuming: assigned and the broker
 * answers; disconnected: the last broker probe failed; restarting: the consumer crashed and is being
 * restarted; stopped: stop() was called.
 */
export type IngestState = 'starting' | 'consuming' | 'disconnected' | 'restarting' | 'stopped';

export interface PartitionStatus {
  topic: string;
  partition: number;
  /** Assigned to this process by the consumer group. */
  assigned: boolean;
  /** Next offset to apply, as stored in SQLite with the facts; null before the first record. */
  next_offset: number | null;
  low_watermark: number | null;
  high_watermark: number | null;
  /** high_watermark - (next_offset, or low_watermark when nothing is stored); null until known. */
  lag: number | null;
}

/** Prometheus-style histogram: cumulative counts per upper bound `le` (seconds). */
export interface DurationHistogram {
  count: number;
  sum: number;
  buckets: Array<{ le: number; count: number }>;
  /** The most recent durations, newest last. */
  recent: number[];
}

/**
 * Counters since start, for /metrics (suggested names in parentheses):
 *   events.{applied,duplicate,stale,dead_lettered}  events by projector outcome (visibility_kafka_events_total{outcome})
 *   redelivered        records at or below the stored offset, skipped (visibility_kafka_events_total{outcome="redelivered"})
 *   batches            SQLite transactions committed (visibility_kafka_batches_total)
 *   batch_apply_seconds  time in projector.applyPrecomputed per transaction (visibility_kafka_batch_apply_seconds histogram)
 * Per-partition lag is in KafkaIngestStatus.partitions (visibility_kafka_lag{topic,partition}),
 * dead letters pending/published on the DLQ topic in KafkaIngestStatus.dlq.
 */
export interface IngestCounters {
  events: { applied: number; duplicate: number; stale: number; dead_lettered: number };
  redelivered: number;
  batches: number;
  batch_apply_seconds: DurationHistogram;
}

export interface KafkaIngestStatus {
  state: IngestState;
  /** When `state` last changed. */
  since: string;
  brokers: readonly string[];
  group_id: string;
  topics: string[];
  last_error: string | null;
  last_error_at: string | null;
  /** Sum of the lag of the partitions this process is assigned (all known ones before the first assignment). */
  lag: number | null;
  partitions: PartitionStatus[];
  counters: IngestCounters;
  /** null when KAFKA_DLQ_TOPIC is empty (dead letters stay in the table only). */
  dlq: DlqStatus | null;
}

export interface KafkaIngest {
  status(): KafkaIngestStatus;
  /** Batch apply durations (seconds) since the previous call: what a Prometheus histogram observes. */
  drainBatchSeconds(): number[];
  stop(): Promise<void>;
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const RECENT = 50;

/** Undrained durations kept at most (a scraper that stops scraping must not grow memory). */
export const UNDRAINED = 10_000;

/** Batch apply durations: a histogram for status(), and the durations since the last drain for /metrics. */
export class Timings {
  private count = 0;
  private sum = 0;
  private readonly perBucket = BUCKETS.map(() => 0);
  private readonly recent: number[] = [];
  private undrained: number[] = [];

  record(seconds: number): void {
    this.count += 1;
    this.sum += seconds;
    const i = BUCKETS.findIndex((le) => seconds <= le);
    if (i >= 0) this.perBucket[i]! += 1;
    this.recent.push(seconds);
    if (this.recent.length > RECENT) this.recent.shift();
    if (this.undrained.length < UNDRAINED) this.undrained.push(seconds);
  }

  drain(): number[] {
    const out = this.undrained;
    this.undrained = [];
    return out;
  }

  snapshot(): DurationHistogram {
    let cumulative = 0;
    const buckets = BUCKETS.map((le, i) => ({ le, count: (cumulative += this.perBucket[i]!) }));
    return { count: this.count, sum: this.sum, buckets, recent: [...this.recent] };
  }
}

/** What /readyz shows with Kafka on. Assignable to the ops Readiness type (extra fields are shown as-is). */
export interface KafkaReadiness {
  ready: boolean;
  /** Overrides the ops server's "ready"/"not ready": degraded = serving the last data, Kafka is not. */
  status: 'ready' | 'degraded' | 'not ready';
  reasons: string[];
  kafka: Pick<KafkaIngestStatus, 'state' | 'since' | 'last_error' | 'lag' | 'partitions' | 'dlq'>;
}

/** Ready means the API can serve data (a read model is loaded), even while Kafka is down. */
export function kafkaReadiness(status: KafkaIngestStatus, readModelLoaded: boolean, maxReadyLag = 0): KafkaReadiness {
  const reasons: string[] = [];
  if (!readModelLoaded) reasons.push('no read model loaded yet: waiting for the first events from Kafka');
  // Known lag only: with Kafka unreachable the lag is unknown and the replica serves what it has (degraded).
  const lagging = maxReadyLag > 0 && status.lag !== null && status.lag > maxReadyLag;
  if (lagging) reasons.push(`lagging ${status.lag} events behind Kafka (more than MAX_READY_LAG=${maxReadyLag})`);
  if (status.state === 'disconnected' || status.state === 'restarting') {
    reasons.push(`Kafka ${status.state} (${status.brokers.join(',')}) since ${status.since}: ${status.last_error ?? 'no detail'}; serving the last data applied`);
  }
  const { state, since, last_error, lag, partitions, dlq } = status;
  return {
    ready: readModelLoaded && !lagging,
    status: !readModelLoaded || lagging ? 'not ready' : reasons.length > 0 ? 'degraded' : 'ready',
    reasons,
    kafka: { state, since, last_error, lag, partitions, dlq },
  };
}
