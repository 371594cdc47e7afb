// The Kafka consumer's lifecycle: start within a deadline, the group's assignments (each one seeks to
// the offsets SQLite holds), crashes restarted with backoff, the broker probed on a timer, the state
// that status() and /readyz show, and a stop that leaves nothing pending. It hands each fetched batch
// to the write pipeline with the apply mode the lag calls for; what is written, and how, is the
// pipeline's (write-pipeline.ts), where each partition stands is the lag tracker's (lag.ts).
import { ownsPartition } from '../../lib/partition';
import { kafkaSource, SourcePositions, type Db, type Projector } from '../../store';
import {
  describeKafkaError, withDeadline, KafkaUnavailableError,
  type BatchControl, type ConsumerAdapter, type ConsumerHooks, type InboundBatch, type KafkaClient, type KafkaLog, type StartOffset, type TopicPartition,
} from './client';
import type { KafkaIngestConfig } from './config';
import { DeadLetterPublisher } from './dlq';
import { LagTracker } from './lag';
import { refuseHeldShard, shardScreen } from './shard-setup';
import type { IngestState, KafkaIngest, KafkaIngestStatus } from './status';
import { WritePipeline } from './write-pipeline';

export interface SupervisorOptions {
  /** Events per SQLite transaction (absent: sized by time, see write-pipeline.ts). */
  chunkSize?: number;
  /** How long a transaction should take when sized by time. */
  sliceMs?: number;
  /** How often high watermarks are fetched (lag) — also how fast an outage shows in status(). */
  lagPollMs?: number;
  /** First delay before a consumer kafkajs gave up on is restarted (doubles up to 10 s). */
  restartDelayMs?: number;
}

export class IngestSupervisor implements KafkaIngest {
  private readonly positions: SourcePositions;
  private readonly lag: LagTracker;
  private readonly pipeline: WritePipeline;
  private joined = false;
  private brokerAnswers = true;
  private crashed = false;
  private stopped = false;
  private state: IngestState = 'starting';
  private since = new Date().toISOString();
  private lastError: string | null = null;
  private lastErrorAt: string | null = null;
  private consumer: ConsumerAdapter | null = null;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | null = null;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartDelay: number;
  private readonly dlq: DeadLetterPublisher | null;
  /** The events topics and the catalog topic, when there is one. */
  private readonly subscribed: string[];

  constructor(
    private readonly db: Db,
    private readonly projector: Projector,
    private readonly config: KafkaIngestConfig,
    private readonly client: KafkaClient,
    private readonly log: KafkaLog,
    private readonly opts: SupervisorOptions,
  ) {
    this.restartDelay = opts.restartDelayMs ?? 5000;
    this.positions = new SourcePositions(db);
    this.dlq = config.dlqTopic === null ? null
      : new DeadLetterPublisher(db, client.producer({ retries: 2 }), config.dlqTopic, { log });
    this.subscribed = config.catalogTopic === null ? config.topics : [...config.topics, config.catalogTopic];
    this.lag = new LagTracker(db, this.positions, client, this.subscribed, {
      answered: () => this.onBrokerAnswer(),
      failed: (e) => {
        this.noteError(`cannot reach Kafka at ${this.client.brokers.join(',')}: ${describeKafkaError(e)}`);
        this.brokerAnswers = false;
        this.setState();
      },
    });
    this.pipeline = new WritePipeline(db, projector, {
      ...(opts.chunkSize !== undefined ? { chunkSize: opts.chunkSize } : {}),
      ...(opts.sliceMs !== undefined ? { sliceMs: opts.sliceMs } : {}),
      onFailure: (e) => this.onCrash(e, false),
      onError: (message) => this.noteError(message),
      onDeadLetters: () => this.dlq?.kick(),
    });
  }

  /** Connects and subscribes within a deadline; consumption then continues in the background. */
  async start(): Promise<void> {
    this.pipeline.start(); // its thread boots while the consumer connects and joins
    this.dlq?.kick(); // dead letters left unpublished by a previous run
    await this.lag.poll();
    // Before anything is written: a store of another shard is refused untouched, one to cut is cut first.
    if (this.config.shard.n > 1) this.pipeline.screenWith(await shardScreen(this.db, this.config, this.lag, this.log));
    else refuseHeldShard(this.db);
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
    // Bounded: with the broker gone, leaving the group must not hold up a SIGTERM.
    const quietly = async (p: Promise<void> | null | undefined): Promise<void> => {
      if (p) await withDeadline(p, 10_000, () => new Error('timeout')).catch(() => undefined);
    };
    this.pipeline.halt(); // kafkajs's stop waits for every eachBatch: none waits for room any more
    await quietly(this.consumer?.stop());
    await this.pipeline.close(quietly);
    await quietly(this.polling);
    await quietly(this.lag.close());
    await quietly(this.dlq?.stop());
  }

  status(): KafkaIngestStatus {
    const partitions = this.lag.partitions();
    return {
      state: this.state,
      since: this.since,
      brokers: this.client.brokers,
      group_id: this.config.groupId,
      topics: this.config.topics,
      last_error: this.lastError,
      last_error_at: this.lastErrorAt,
      lag: this.lag.total(partitions),
      partitions,
      counters: this.pipeline.counters(),
      dlq: this.dlq?.status() ?? null,
    };
  }

  drainBatchSeconds(): number[] {
    return this.pipeline.drainBatchSeconds();
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

  private async startConsumer(): Promise<void> {
    const { shard, topics } = this.config;
    const consumer = this.client.consumer({
      groupId: this.config.groupId,
      sessionTimeoutMs: this.config.sessionTimeoutMs,
      // A shard takes its partitions of the events topics and the whole catalog topic.
      ...(shard.n > 1 ? { owns: (topic: string, partition: number) => !topics.includes(topic) || ownsPartition(shard, partition) } : {}),
    });
    this.consumer = consumer;
    await consumer.start(this.subscribed, this.hooks());
  }

  /**
   * A fetched batch goes to the write pipeline, with its offsets resolved: the group's committed
   * offsets (which may run a queue ahead of SQLite) are only for monitoring. What is applied, and
   * where a partition resumes, is decided by SQLite alone: an assignment seeks every partition to its
   * stored offset and drops the queue.
   */
  private async onBatch(batch: InboundBatch, control: BatchControl): Promise<void> {
    if (this.stopped || control.isStale()) return;
    const halted = this.pipeline.failure;
    if (halted) throw halted; // kafkajs backs off and fetches the batch again; the restart seeks
    const source = kafkaSource(batch.topic, batch.partition);
    this.lag.noteHighWatermark(source, batch.highWatermark);
    const last = batch.messages[batch.messages.length - 1];
    if (!last) return;
    control.resolveOffset(last.offset);
    await this.pipeline.push(source, batch.messages, this.lag.mode(), control);
  }

  private onAssigned(partitions: TopicPartition[]): StartOffset[] {
    if (this.stopped) return []; // the database may be closed already
    this.joined = true;
    this.crashed = false;
    this.restartDelay = this.opts.restartDelayMs ?? 5000;
    this.lag.assign(partitions.map((p) => kafkaSource(p.topic, p.partition)));
    // Every assigned partition is about to be sought to its stored offset: what was fetched before is fetched again.
    this.pipeline.reassigned();
    clearTimeout(this.restartTimer); // joined: a restart scheduled after a failed transaction is not needed
    this.setState();
    this.log('info', `assigned ${partitions.map((p) => `${p.topic}:${p.partition}`).join(', ') || 'no partitions'}`);
    return partitions.map((p) => {
      const next = this.positions.nextOf(kafkaSource(p.topic, p.partition));
      return { ...p, offset: next ?? 'earliest' };
    });
  }

  /** The consumer crashed, or a transaction failed (the pipeline dropped its queue and halted). */
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

  // ---- broker health and state

  private schedulePoll(): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => {
      this.polling = this.lag.poll().finally(() => {
        this.polling = null;
        this.schedulePoll();
      });
    }, this.opts.lagPollMs ?? 2000);
    this.pollTimer.unref();
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
}
