// Kafka -> the same projector as file replay. The truth about what has been applied is SQLite:
// the projector stores `source_positions('kafka:<topic>:<partition>') = next offset` in the same
// transaction as the facts, every assignment seeks to those offsets, and records below them are
// skipped. So a crash at any instant resumes exactly where the data stops. Group offsets are also
// committed to Kafka, as records are queued for the writer (up to QUEUED_MAX ahead of SQLite), but
// only so standard tools can show the lag.
//
// The parts: supervisor.ts (lifecycle, restarts, health), lag.ts (watermarks, lag, apply mode),
// write-pipeline.ts (queue, precompute, transactions, settling), shard-setup.ts (a shard's checks at
// start), status.ts (what status() and /readyz show). This module is the entry.
import type { Db, Projector } from '../../store';
import { createKafkaClient, stderrKafkaLog, type KafkaClient, type KafkaLog } from './client';
import type { KafkaIngestConfig } from './config';
import { IngestSupervisor } from './supervisor';
import type { KafkaIngest } from './status';

export {
  kafkaReadiness, UNDRAINED,
  type DurationHistogram, type IngestCounters, type IngestState, type KafkaIngest, type KafkaIngestStatus, type KafkaReadiness, type PartitionStatus,
} from './status';

export interface KafkaIngestOptions {
  /**
   * Events per SQLite transaction. By default each transaction is sized to take about SLICE_MS
   * (write-pipeline.ts): long enough that a commit is worth its cost, short enough that a new run
   * shows within a fraction of a second.
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
 * Starts consuming `config.topics` into `db`. Rejects within seconds, naming the address, when the
 * cluster cannot be reached at startup (KafkaUnavailableError); after that, outages are retried in
 * the background and reported by status().
 */
export async function startKafkaIngest(db: Db, projector: Projector, config: KafkaIngestConfig, opts: KafkaIngestOptions = {}): Promise<KafkaIngest> {
  const log = opts.log ?? stderrKafkaLog(config.logLevel);
  const client = opts.client ?? createKafkaClient(config, log);
  await client.checkReachable();
  const supervisor = new IngestSupervisor(db, projector, config, client, log, opts);
  await supervisor.start();
  return supervisor;
}
