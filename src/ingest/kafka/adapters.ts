// The small interfaces everything but client.ts talks to Kafka through: a consumer that hands over
// batches and assignments, a producer, an admin probe, and the errors a start reports in one line.
// No kafkajs type appears here, so another client (or a test's fake, through
// KafkaIngestOptions.client) needs only this file; client.ts implements it with kafkajs.
import { ConfigError, type KafkaLogLevel } from './config';

export type LogLevelName = Exclude<KafkaLogLevel, 'nothing'>;
export type KafkaLog = (level: LogLevelName, message: string) => void;

/** A connection, TLS or authentication problem found when starting: reported as one line. */
export class KafkaUnavailableError extends Error {
  override name = 'KafkaUnavailableError';
}

/** A problem the operator must fix before starting (bad setting, unreachable cluster): one line, no stack. */
export function isKafkaSetupError(e: unknown): e is Error {
  return e instanceof ConfigError || e instanceof KafkaUnavailableError;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface InboundMessage {
  offset: number;
  key: Buffer | null;
  /** null for a tombstone; it is dead-lettered like any other unparseable record. */
  value: Buffer | null;
}

export interface InboundBatch extends TopicPartition {
  highWatermark: number;
  messages: InboundMessage[];
}

/** What eachBatch may do with the group while it hands a batch over. */
export interface BatchControl {
  /** The group offset to commit will be offset + 1. */
  resolveOffset(offset: number): void;
  heartbeat(): Promise<void>;
  isRunning(): boolean;
  /** A seek is pending for this partition (a rebalance happened): the batch is dropped. */
  isStale(): boolean;
}

/** Where to start reading an assigned partition: a stored next offset, or the earliest retained record. */
export type StartOffset = TopicPartition & { offset: number | 'earliest' };

export interface ConsumerHooks {
  eachBatch(batch: InboundBatch, control: BatchControl): Promise<void>;
  /**
   * Called on every assignment, synchronously on purpose: the seeks it returns are registered
   * before the first fetch of the new generation, so no record past the stored offset is read first.
   */
  startOffsets(assigned: TopicPartition[]): StartOffset[];
  /** The consumer failed; `restarting` says whether kafkajs will restart it by itself. */
  onCrash(error: Error, restarting: boolean): void;
  /** A fetch round-trip completed: the broker answers. */
  onFetch(): void;
}

export interface ConsumerOptions {
  groupId: string;
  sessionTimeoutMs: number;
  /**
   * A static assignment (a shard): the partitions of the subscribed topics this consumer takes, all of
   * them to its group's members in turn. Absent: kafkajs's round robin over every partition.
   */
  owns?: (topic: string, partition: number) => boolean;
  /**
   * Whether this member holds partitions it should keep: a member that joins (or rejoins) then takes
   * none from it, the others share what it does not hold. For a group whose partition picks a leader
   * (src/deliver/election.ts), so a replica that starts does not take over from one that works.
   */
  sticky?: () => boolean;
}

export interface ConsumerAdapter {
  /** Connects and subscribes (errors are thrown), then consumes in the background. */
  start(topics: string[], hooks: ConsumerHooks): Promise<void>;
  stop(): Promise<void>;
}

export interface OutboundMessage {
  key: string | null;
  value: Buffer | string;
  headers?: Record<string, string>;
}

export interface ProducerAdapter {
  connect(): Promise<void>;
  /** Resolves once every message is acknowledged by all in-sync replicas (acks -1). */
  send(topic: string, messages: OutboundMessage[]): Promise<void>;
  disconnect(): Promise<void>;
}

export interface PartitionOffsets {
  partition: number;
  /** First retained offset. */
  low: number;
  /** Offset the next record will get (the high watermark). */
  high: number;
}

export interface AdminAdapter {
  connect(): Promise<void>;
  fetchTopicOffsets(topic: string): Promise<PartitionOffsets[]>;
  disconnect(): Promise<void>;
}

export interface KafkaClient {
  readonly brokers: readonly string[];
  consumer(opts: ConsumerOptions): ConsumerAdapter;
  /** retries: how long a send keeps trying before it fails (the caller decides what a failure means). */
  producer(opts?: { retries?: number }): ProducerAdapter;
  /** For probes and watermarks: few retries, so a failure is reported in seconds; logs nothing itself. */
  admin(): AdminAdapter;
  /** Connects once with few retries and a deadline: a wrong address fails in seconds, not never. */
  checkReachable(): Promise<void>;
}
