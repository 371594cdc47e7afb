// Kafka -> the same projector as file replay. The truth about what has been applied is SQLite:
// the projector stores `source_positions('kafka:<topic>:<partition>') = next offset` in the same
// transaction as the facts, every assignment seeks to those offsets, and records below them are
// skipped. So a crash at any instant resumes exactly where the data stops. Group offsets are also
// committed to Kafka, as records are queued for the writer (up to QUEUED_MAX ahead of SQLite), but
// only so standard tools can show the lag.
import { covers, ownsPartition, ownsProject, shardName, WHOLE } from '../../lib/partition';
import { cutShard, hasReadModel, heldShard, holdShard, kafkaSource, parseKafkaSource, SourcePositions, type BatchResult, type Db, type PrecomputedEvent, type Projector } from '../../store';
import { Precomputer } from '../precomputer';
import { SliceSizer } from '../sliced-applier';
import {
  createKafkaClient, describeKafkaError, isUnknownTopicError, stderrKafkaLog, withDeadline, KafkaUnavailableError,
  type AdminAdapter, type BatchControl, type ConsumerAdapter, type ConsumerHooks, type InboundBatch, type InboundMessage,
  type KafkaClient, type KafkaLog, type StartOffset, type TopicPartition,
} from './client';
import { ConfigError, type KafkaIngestConfig } from './config';
import { DeadLetterPublisher, type DlqStatus } from './dlq';
import { FetchedBatches } from './fetched';
import { ShardScreen } from './shard-screen';

export interface KafkaIngestOptions {
  /**
   * Events per SQLite transaction. By default each transaction is sized to take about SLICE_MS:
   * long enough that a commit is worth its cost, short enough that a new run shows within a
   * fraction of a second.
   */
  chunkSize?: number;
  /** How long a transaction should take when sized by time (default SLICE_MS). */
  sliceMs?: number;
  /** How often high watermarks are fetched (lag) — also how fast an outage shows in status(). */
  lagPollMs?: number;
  /** First delay before this module restarts a consumer kafkajs gave up on (doubles up to 10 s). */
  restartDelayMs?: number;
  log?: KafkaLog;
  /** A client other than kafkajs, or a fake. */
  client?: KafkaClient;
}

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
/**
 * Lag (over every assigned partition) from which the consumer is catching up: its transactions take
 * CATCH_UP_CHUNK events until the lag is under CAUGHT_UP (a long transaction commits the same hot
 * pages once, where live SLICE_MS slices are a few hundred events each). One mode for all partitions, with a gap
 * between the two thresholds so that a lag near one does not switch back and forth.
 */
const CATCHING_UP = 20_000;
const CAUGHT_UP = 2_000;
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
const SLICE_MS = 40;
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
const QUEUED_MAX = 8000;
/** Chunks handed to the precompute thread ahead of the one being written. */
const PRECOMPUTED_AHEAD = 2;

class Timings {
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

interface Watermarks {
  low: number;
  high: number;
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

/** A chunk of one partition's records in the precompute thread; `generation` is the assignment it was fetched in. */
interface Chunk {
  source: string;
  size: number;
  generation: number;
  precomputed: Promise<PrecomputedEvent[]>;
}

class KafkaIngestRunner implements KafkaIngest {
  private readonly sizer: SliceSizer | null;
  private readonly chunkSize: number;
  private readonly positions: SourcePositions;
  /** Decodes and validates in a thread of its own while this one writes; replaced if it fails. */
  private precomputer: Precomputer | null = null;
  private readonly timings = new Timings();
  private readonly events = { applied: 0, duplicate: 0, stale: 0, dead_lettered: 0 };
  private redelivered = 0;
  /** Catching up (see CATCHING_UP): this consumer's transactions are large. */
  private bulk = false;
  /** The size of the next catch-up transaction while it grows to CATCH_UP_CHUNK (CATCH_UP_FIRST). */
  private catchUpChunk = CATCH_UP_FIRST;
  private batches = 0;
  private readonly watermarks = new Map<string, Watermarks>();
  private assigned = new Set<string>();
  private joined = false;
  private brokerAnswers = true;
  private crashed = false;
  private stopped = false;
  private state: IngestState = 'starting';
  private since = new Date().toISOString();
  private lastError: string | null = null;
  private lastErrorAt: string | null = null;
  private consumer: ConsumerAdapter | null = null;
  private admin: AdminAdapter | null = null;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | null = null;
  private restartTimer: NodeJS.Timeout | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  /** Chunks were applied since the last settle. */
  private unsettled = false;
  /** Fetched batches not yet written, oldest first, of every partition (see onBatch). */
  private readonly fetched = new FetchedBatches<InboundMessage>();
  /** Chunks taken from `fetched` and being precomputed, oldest first. */
  private ahead: Chunk[] = [];
  /** Events in `fetched` and `ahead` not yet written. */
  private queued = 0;
  /** onBatch calls waiting for `queued` to fall to QUEUED_MAX. */
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
  private restartDelay: number;
  private readonly dlq: DeadLetterPublisher | null;
  /** A shard's filter of foreign projects (null: every partition is this consumer's). */
  private screen: ShardScreen | null = null;

  constructor(
    private readonly db: Db,
    private readonly projector: Projector,
    private readonly config: KafkaIngestConfig,
    private readonly client: KafkaClient,
    private readonly log: KafkaLog,
    private readonly opts: KafkaIngestOptions,
  ) {
    this.chunkSize = opts.chunkSize ?? 0;
    this.sizer = opts.chunkSize ? null : new SliceSizer(opts.sliceMs ?? SLICE_MS, CATCH_UP_CHUNK);
    this.restartDelay = opts.restartDelayMs ?? 5000;
    this.positions = new SourcePositions(db);
    this.dlq = config.dlqTopic === null ? null
      : new DeadLetterPublisher(db, client.producer({ retries: 2 }), config.dlqTopic, { log });
  }

  /** Connects and subscribes within a deadline; consumption then continues in the background. */
  async start(): Promise<void> {
    this.precomputer = new Precomputer(); // its thread boots while the consumer connects and joins
    this.dlq?.kick(); // dead letters left unpublished by a previous run
    await this.pollOffsets();
    // Before anything is written: a store of another shard is refused untouched, one to cut is cut first.
    if (this.config.shard.n > 1) this.screen = await this.shardScreen();
    else {
      // Consuming every partition into a shard's store would fill it with projects it then refuses to answer.
      const held = heldShard(this.db);
      if (held !== null) throw new ConfigError(`${this.db.name} holds shard ${shardName(held)}: start it with --shard ${shardName(held)} (SHARD), or start an unsharded replica on a new file`);
    }
    this.projector.settle(); // roll-ups a killed writer left pending are counted again from their runs
    const budget = this.config.connectTimeoutMs * 3 + this.config.requestTimeoutMs;
    try {
      await withDeadline(this.startConsumer(), budget,
        () => new KafkaUnavailableError(`Kafka at ${this.client.brokers.join(',')} did not accept the consumer within ${(budget / 1000).toFixed(0)} s`));
    } catch (e) {
      await this.stop();
      if (e instanceof KafkaUnavailableError) throw e;
      throw new KafkaUnavailableError(`cannot consume ${this.config.topics.join(',')} from Kafka at ${this.client.brokers.join(',')}: ${describeKafkaError(e)}`);
    }
    this.schedulePoll();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.setState();
    clearTimeout(this.pollTimer);
    clearTimeout(this.restartTimer);
    clearTimeout(this.settleTimer);
    // Bounded: with the broker gone, leaving the group must not hold up a SIGTERM.
    const quietly = async (p: Promise<void> | null | undefined): Promise<void> => {
      if (p) await withDeadline(p, 10_000, () => new Error('timeout')).catch(() => undefined);
    };
    this.dropQueue(); // kafkajs's stop waits for every eachBatch: none waits for room any more
    await quietly(this.consumer?.stop());
    await quietly(this.precomputer?.close());
    await quietly(this.writing);
    // The weeks and months waiting in memory are written: a clean stop leaves nothing pending.
    this.settleNow();
    await quietly(this.polling);
    await quietly(this.admin?.disconnect());
    await quietly(this.dlq?.stop());
  }

  status(): KafkaIngestStatus {
    const partitions = this.partitionStatuses();
    const counted = this.assigned.size > 0 ? partitions.filter((p) => p.assigned) : partitions;
    const lags = counted.map((p) => p.lag).filter((l): l is number => l !== null);
    return {
      state: this.state,
      since: this.since,
      brokers: this.client.brokers,
      group_id: this.config.groupId,
      topics: this.config.topics,
      last_error: this.lastError,
      last_error_at: this.lastErrorAt,
      lag: lags.length === 0 ? null : lags.reduce((a, b) => a + b, 0),
      partitions,
      counters: {
        events: { ...this.events },
        redelivered: this.redelivered,
        batches: this.batches,
        batch_apply_seconds: this.timings.snapshot(),
      },
      dlq: this.dlq?.status() ?? null,
    };
  }

  drainBatchSeconds(): number[] {
    return this.timings.drain();
  }

  // ---- consumer lifecycle

  private hooks(): ConsumerHooks {
    return {
      eachBatch: (batch, control) => this.onBatch(batch, control),
      startOffsets: (assigned) => this.onAssigned(assigned),
      onCrash: (error, restarting) => this.onCrash(error, restarting),
      onFetch: () => this.onBrokerAnswer(),
    };
  }

  /** The events topics and the catalog topic, when there is one. */
  private subscribed(): string[] {
    return this.config.catalogTopic === null ? this.config.topics : [...this.config.topics, this.config.catalogTopic];
  }

  private async startConsumer(): Promise<void> {
    const { shard, topics } = this.config;
    const consumer = this.client.consumer({
      groupId: this.config.groupId,
      sessionTimeoutMs: this.config.sessionTimeoutMs,
      // A shard takes its partitions of the events topics and the whole catalog topic.
      ...(shard.n > 1 ? { owns: (topic: string, partition: number) => !topics.includes(topic) || ownsPartition(shard, partition) } : {}),
    });
    this.consumer = consumer;
    await consumer.start(this.subscribed(), this.hooks());
  }

  /**
   * The partition count of the events topics (the producer's partitioner divides by it), checked
   * against what the database holds, which it then records. Refused: topics of different counts,
   * fewer partitions than shards, a database cut for another shard or another count.
   */
  private async shardScreen(): Promise<ShardScreen> {
    const { shard, topics } = this.config;
    const counts = await this.partitionCounts(topics);
    const partitions = counts[0]!;
    if (counts.some((c) => c !== partitions)) {
      throw new ConfigError(`SHARD=${shardName(shard)}: the events topics ${topics.join(', ')} have ${counts.join(', ')} partitions; a project's partition must mean the same in each`);
    }
    if (partitions < shard.n) throw new ConfigError(`SHARD=${shardName(shard)}: ${topics.join(', ')} has ${partitions} partitions, fewer than ${shard.n} shards`);
    const held = heldShard(this.db);
    if (held && held.partitions !== partitions) {
      throw new ConfigError(`SHARD=${shardName(shard)}: ${this.db.name} was cut from ${held.partitions} partitions, and ${topics.join(', ')} now has ${partitions}: a project's partition has changed (docs/scale-out.md)`);
    }
    if (held === null && !hasReadModel(this.db)) {
      holdShard(this.db, shard, partitions); // a new shard: nothing to cut
    } else if (held === null || held.k !== shard.k || held.n !== shard.n) {
      // Resharding: a store of every partition (or of a shard that holds this one's) keeps this shard's projects.
      const from = held ?? WHOLE;
      if (!covers(from, shard)) {
        throw new ConfigError(`SHARD=${shardName(shard)}: ${this.db.name} holds shard ${shardName(from)}, which lacks partitions of ${shardName(shard)}: start from a snapshot of a shard that holds them (docs/scale-out.md)`);
      }
      const cut = cutShard(this.db, shard, partitions, topics, (id) => ownsProject(shard, partitions, id));
      this.log('warn', `shard ${shardName(shard)}: cut from ${held === null ? 'every partition' : `shard ${shardName(held)}`}: the data of ${cut.projects} projects of other shards (${cut.runs} runs) deleted in ${cut.seconds.toFixed(2)} s`);
    }
    this.log('info', `shard ${shardName(shard)}: partitions p % ${shard.n} = ${shard.k} of ${partitions}, and every partition of ${this.config.catalogTopic}`);
    return new ShardScreen(shard, partitions, topics);
  }

  /** Partitions per topic, waiting a few seconds for topics being auto-created. */
  private async partitionCounts(topics: string[], waitMs = 15_000): Promise<number[]> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const counts = topics.map((t) => new Set([...this.watermarks.keys()].filter((s) => parseKafkaSource(s)?.topic === t)).size);
      if (counts.every((c) => c > 0)) return counts;
      if (Date.now() > deadline) {
        throw new KafkaUnavailableError(`topic ${topics.filter((_, i) => counts[i] === 0).join(', ')} does not exist: a shard needs its partition count (create the topics first)`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      await this.pollOffsets();
    }
  }

  private onAssigned(partitions: TopicPartition[]): StartOffset[] {
    if (this.stopped) return []; // the database may be closed already
    this.joined = true;
    this.crashed = false;
    this.restartDelay = this.opts.restartDelayMs ?? 5000;
    this.assigned = new Set(partitions.map((p) => kafkaSource(p.topic, p.partition)));
    // Every assigned partition is about to be sought to its stored offset: what was fetched before is fetched again.
    this.dropQueue();
    this.halted = null;
    clearTimeout(this.restartTimer); // joined: a restart scheduled after a failed transaction is not needed
    this.setState();
    this.log('info', `assigned ${partitions.map((p) => `${p.topic}:${p.partition}`).join(', ') || 'no partitions'}`);
    return partitions.map((p) => {
      const next = this.positions.nextOf(kafkaSource(p.topic, p.partition));
      return { ...p, offset: next ?? 'earliest' };
    });
  }

  private onCrash(error: Error, restarting: boolean): void {
    if (this.stopped) return;
    this.crashed = true;
    this.noteError(`consumer crashed: ${describeKafkaError(error)}`);
    this.setState();
    // kafkajs restarts by itself after retriable errors; after others we start a fresh consumer, with
    // backoff, so an outage or an unexpected error never ends consumption for good.
    if (!restarting) this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.stopped) return;
    clearTimeout(this.restartTimer);
    const delay = this.restartDelay;
    this.restartDelay = Math.min(this.restartDelay * 2, 10_000);
    this.log('warn', `restarting the Kafka consumer in ${(delay / 1000).toFixed(1)} s`);
    this.restartTimer = setTimeout(() => {
      const old = this.consumer;
      void (old ? old.stop().catch(() => undefined) : Promise.resolve())
        .then(() => (this.stopped ? undefined : this.startConsumer()))
        .catch((e: unknown) => {
          this.noteError(`consumer restart failed: ${describeKafkaError(e)}`);
          this.scheduleRestart();
        });
    }, delay);
    this.restartTimer.unref();
  }

  private onBrokerAnswer(): void {
    if (this.brokerAnswers && !this.crashed) return;
    this.brokerAnswers = true;
    this.crashed = false;
    this.setState();
  }

  private setState(): void {
    const next: IngestState = this.stopped ? 'stopped'
      : !this.brokerAnswers ? 'disconnected'
        : this.crashed ? 'restarting'
          : this.joined ? 'consuming' : 'starting';
    if (next === this.state) return;
    const trouble = next === 'disconnected' || next === 'restarting';
    const recovered = this.state === 'disconnected' || this.state === 'restarting';
    // A recovery is logged at the level of the trouble it ends, so the two lines are seen together.
    this.log(trouble || recovered ? 'warn' : 'info', `ingest ${this.state} -> ${next}${trouble && this.lastError ? `: ${this.lastError}` : ''}`);
    this.state = next;
    this.since = new Date().toISOString();
  }

  private noteError(message: string): void {
    this.lastError = message;
    this.lastErrorAt = new Date().toISOString();
  }

  // ---- batches

  /**
   * A fetched batch is queued for the writer, and handed back to kafkajs (with its offsets resolved)
   * as soon as the queue has room: kafkajs fetches again only when every batch of its last fetch is
   * handed back, so the next fetch travels while this one is written. What is applied, and where a
   * partition resumes, is still decided by SQLite alone: an assignment seeks every partition to its
   * stored offset and drops the queue, a record below its partition's stored offset is never
   * applied (writeChunk), and the group's committed offsets (which may run a queue ahead of SQLite)
   * are only for monitoring.
   */
  private async onBatch(batch: InboundBatch, control: BatchControl): Promise<void> {
    if (this.stopped || control.isStale()) return;
    if (this.halted) throw this.halted; // kafkajs backs off and fetches the batch again; the restart seeks
    const source = kafkaSource(batch.topic, batch.partition);
    this.noteHighWatermark(source, batch.highWatermark);
    const last = batch.messages[batch.messages.length - 1];
    if (!last) return;
    control.resolveOffset(last.offset);
    this.fetched.push(source, batch.messages);
    this.queued += batch.messages.length;
    if (!this.writerBusy) {
      this.writerBusy = true;
      this.writing = this.write();
    }
    while (this.queued > QUEUED_MAX && !this.stopped) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      if (control.isRunning()) await control.heartbeat();
    }
  }

  /**
   * Writes the queue, one transaction per chunk, while the next chunks are precomputed in the
   * precompute thread; returns when the queue is empty (the next onBatch starts it again).
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
          this.writeChunk(chunk.source, events);
        } catch (e) {
          this.failWrites(e);
          return;
        }
        this.queued -= chunk.size;
        if (this.queued <= QUEUED_MAX) this.wakeRoomWaiters();
      }
    } finally {
      this.writerBusy = false; // in the same turn as the last check of the queue: the next onBatch starts a new loop
    }
  }

  /** One transaction, of the events above the partition's stored offset: none is ever applied twice. */
  private writeChunk(source: string, events: PrecomputedEvent[]): void {
    const next = this.positions.nextOf(source);
    const unseen = next === undefined ? events : events.filter((e) => e.position >= next);
    this.redelivered += events.length - unseen.length;
    const fresh = this.screen ? this.screen.screen(source, unseen) : unseen;
    if (fresh.length === 0) return;
    const started = performance.now();
    const result = this.applyChunk(fresh);
    this.sizer?.record(fresh.length, performance.now() - started);
    if (result.deadLettered > 0) this.dlq?.kick();
  }

  /** Takes chunks from the queue into the precompute thread until PRECOMPUTED_AHEAD are there. */
  private precomputeAhead(): void {
    while (this.ahead.length < PRECOMPUTED_AHEAD) {
      const source = this.fetched.oldestSource;
      if (source === undefined) return;
      const messages = this.fetched.take(source, this.chunkLength());
      const precomputed = this.precompute(source, messages);
      precomputed.catch(() => undefined); // a chunk dropped before it is awaited is let go, not an error
      this.ahead.push({ source, size: messages.length, generation: this.generation, precomputed });
    }
  }

  /**
   * A transaction failed (the disk is full, the precompute thread died): the queue is dropped, nothing
   * more is queued (`halted`), and the consumer is restarted as after a crash; its assignment seeks
   * every partition to what SQLite holds.
   */
  private failWrites(e: unknown): void {
    this.halted = e instanceof Error ? e : new Error(String(e));
    this.dropQueue();
    this.onCrash(this.halted, false);
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

  /** Events in the next transaction: by time (SLICE_MS), or CATCH_UP_CHUNK when far behind (after the first few: CATCH_UP_FIRST). */
  private chunkLength(): number {
    const size = this.sizer?.size ?? this.chunkSize;
    if (!this.catchingUp()) return size;
    const n = Math.max(size, this.catchUpChunk);
    this.catchUpChunk = Math.min(CATCH_UP_CHUNK, this.catchUpChunk * 2);
    return n;
  }

  private precompute(source: string, chunk: InboundMessage[]): Promise<PrecomputedEvent[]> {
    if (!this.precomputer || this.precomputer.broken) this.precomputer = new Precomputer();
    return this.precomputer.precompute(source, chunk.map((m) => ({ position: m.offset, value: m.value })));
  }

  /** Whether the next chunk is large: from CATCHING_UP behind until under CAUGHT_UP, over the assigned partitions. */
  private catchingUp(): boolean {
    let lag = 0;
    for (const p of this.partitionStatuses()) if (p.assigned) lag += p.lag ?? 0;
    this.bulk = this.bulk ? lag >= CAUGHT_UP : lag >= CATCHING_UP;
    this.projector.deferTrend = this.bulk; // a catch-up renders the trend's days when it settles
    return this.bulk;
  }

  /** One SQLite transaction: facts, dead letters and the next offset of this partition. */
  private applyChunk(events: PrecomputedEvent[]): BatchResult {
    const started = process.hrtime.bigint();
    const result = this.projector.applyPrecomputed(events);
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
      this.noteError(`writing the roll-ups waiting in memory failed: ${(e as Error).message}`); // tried again at the next idle moment
    }
  }

  // ---- watermarks and broker health

  private noteHighWatermark(source: string, high: number): void {
    const known = this.watermarks.get(source);
    this.watermarks.set(source, { low: known?.low ?? 0, high: Math.max(high, known?.high ?? 0) });
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => {
      this.polling = this.pollOffsets().finally(() => {
        this.polling = null;
        this.schedulePoll();
      });
    }, this.opts.lagPollMs ?? 2000);
    this.pollTimer.unref();
  }

  /** High watermarks for the lag, and the liveness probe: a failure here is what /readyz reports. */
  private async pollOffsets(): Promise<void> {
    try {
      if (!this.admin) {
        this.admin = this.client.admin();
        await this.admin.connect();
      }
      for (const topic of this.subscribed()) {
        try {
          for (const o of await this.admin.fetchTopicOffsets(topic)) {
            this.watermarks.set(kafkaSource(topic, o.partition), { low: o.low, high: o.high });
          }
        } catch (e) {
          if (!isUnknownTopicError(e)) throw e;
        }
      }
      this.onBrokerAnswer();
    } catch (e) {
      this.noteError(`cannot reach Kafka at ${this.client.brokers.join(',')}: ${describeKafkaError(e)}`);
      this.brokerAnswers = false;
      this.setState();
      // A fresh admin client next time: kafkajs clients do not always recover their connections.
      const admin = this.admin;
      this.admin = null;
      await admin?.disconnect().catch(() => undefined);
    }
  }

  private partitionStatuses(): PartitionStatus[] {
    if (!this.db.open) return []; // status() after stop() and the database closed
    const stored = this.positions.kafkaPositions();
    const sources = new Set([...this.watermarks.keys(), ...this.assigned, ...stored.keys()]);
    const statuses: PartitionStatus[] = [];
    for (const source of sources) {
      const tp = parseKafkaSource(source);
      if (!tp || !this.subscribed().includes(tp.topic)) continue;
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

/**
 * Starts consuming `config.topics` into `db`. Rejects within seconds, naming the address, when the
 * cluster cannot be reached at startup (KafkaUnavailableError); after that, outages are retried in
 * the background and reported by status().
 */
export async function startKafkaIngest(db: Db, projector: Projector, config: KafkaIngestConfig, opts: KafkaIngestOptions = {}): Promise<KafkaIngest> {
  const log = opts.log ?? stderrKafkaLog(config.logLevel);
  const client = opts.client ?? createKafkaClient(config, log);
  await client.checkReachable();
  const runner = new KafkaIngestRunner(db, projector, config, client, log, opts);
  await runner.start();
  return runner;
}
