// The Kafka side of a started service: the consumer in a thread of its own, and what the rest of the
// service asks of it (is a read model loaded, /readyz, the /metrics figures). kafkajs is loaded
// only when Kafka is on.
import type { KafkaIngest, KafkaIngestConfig } from '../ingest/kafka';
import type { Logger } from '../lib/log';
import type { IngestFigures, Readiness } from '../ops';
import { commitCounter, type Db } from '../store';
import { StartError } from '../start-error';

export interface KafkaWiring {
  ingest: KafkaIngest;
  /** A read model is loaded: false until the first data arrives, then true for good. */
  loaded: () => boolean;
  readiness: () => Readiness;
  figures: () => IngestFigures;
}

/** Starts consuming into `db` in a thread (kafkajs is loaded only when Kafka is on). */
export async function startKafka(db: Db, config: KafkaIngestConfig, logger: Logger, maxReadyLag: number): Promise<KafkaWiring> {
  const kafka = await import('../ingest/kafka/index.js');
  let ingest: KafkaIngest;
  try {
    ingest = await kafka.startKafkaIngestThread({ dbFile: db.name, commits: commitCounter(), config, opts: {} }, logger);
  } catch (e) {
    if (kafka.isKafkaSetupError(e)) throw new StartError(e.message);
    throw e;
  }
  let loaded = false;
  const isLoaded = (): boolean => (loaded ||= kafka.hasReadModel(db));
  return {
    ingest,
    loaded: isLoaded,
    readiness: () => kafka.kafkaReadiness(ingest.status(), isLoaded(), maxReadyLag),
    figures: () => {
      const s = ingest.status();
      const e = s.counters.events;
      return {
        applied: e.applied, duplicate: e.duplicate, stale: e.stale, deadLettered: e.dead_lettered, batches: s.counters.batches,
        drainBatchSeconds: () => ingest.drainBatchSeconds(),
        lag: () => s.partitions.filter((x) => x.lag !== null).map((x) => ({ topic: x.topic, partition: x.partition, lag: x.lag ?? 0 })),
      };
    },
  };
}

/** The line that says what is consumed, from where, and where dead letters go. */
export function consumingLine(k: KafkaIngestConfig): string {
  return `kafka: consuming ${k.topics.join(',')} from ${k.brokers.join(',')} as group ${k.groupId}` +
    `${k.catalogTopic ? `, the catalog from ${k.catalogTopic}` : ''}${k.dlqTopic ? `, dead letters to ${k.dlqTopic}` : ''}`;
}
