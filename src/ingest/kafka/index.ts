// Kafka ingestion: consumer (startKafkaIngest), DLQ outbox, producer of NDJSON files, configuration.
// Only client.ts imports kafkajs.
export {
  ConfigError, kafkaConnectionFromEnv, kafkaIngestConfigFromEnv, parseBrokers, parseTopic, KAFKA_DEFAULTS,
  type KafkaConnection, type KafkaIngestConfig, type KafkaOverrides, type KafkaTls, type SaslMechanism, type KafkaLogLevel,
} from './config';
export {
  createKafkaClient, describeKafkaError, isKafkaSetupError, stderrKafkaLog, KafkaUnavailableError,
  type KafkaClient, type KafkaLog, type ProducerAdapter, type OutboundMessage, type AdminAdapter, type PartitionOffsets,
} from './client';
export {
  startKafkaIngest, kafkaReadiness,
  type KafkaIngest, type KafkaIngestOptions, type KafkaIngestStatus, type KafkaReadiness, type IngestState,
  type PartitionStatus, type IngestCounters, type DurationHistogram,
} from './consumer';
// Where the readiness check of the main thread has always found it (the query is the store's).
export { hasReadModel } from '../../store';
export { startKafkaIngestThread, type ThreadStart } from './ingest-thread';
export { DeadLetterPublisher, DLQ_HEADERS, type DlqStatus } from './dlq';
export { eventKey, produceFiles, produceLines, type ProduceTotals, type ProduceOptions } from './produce';
