import fs from 'node:fs';
import { describeKafkaError, isKafkaSetupError, kafkaConnectionFromEnv, parseTopic, produceFiles, type ProduceTotals } from '../ingest/kafka';
import { boolFlag, intFlag, requireString, stringFlag, UsageError, type Command, type FlagTable, type Parsed } from './flags';
import { Progress, totalSize } from './progress';

const FLAGS = {
  brokers: { type: 'string', value: 'B', env: 'KAFKA_BROKERS', shows: 'required', help: 'the Kafka bootstrap servers, host:port,...' },
  topic: { type: 'string', value: 'T', env: 'KAFKA_TOPIC', shows: 'required', help: 'the topic to publish to' },
  'catalog-topic': { type: 'string', value: 'T', env: 'KAFKA_CATALOG_TOPIC', help: 'send the account-wide facts (accounts, keys, engines, projects) here instead, for a sharded fleet' },
  'batch-size': { type: 'int', value: 'N', default: 1000, min: 1, max: 100_000, help: 'events per send (each send is acknowledged before the next)' },
  quiet: { type: 'boolean', help: 'no progress line on a terminal: only the summary' },
} satisfies FlagTable;

/** `produce --brokers B --topic T [--batch-size N] EVENTS...`: NDJSON files (gzip too) to a Kafka topic. */
async function produceCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  const batchSize = intFlag(p, 'batch-size');
  if (p.positionals.length === 0) throw new UsageError('produce needs at least one events file');
  for (const f of p.positionals) if (!fs.existsSync(f) || !fs.statSync(f).isFile()) throw new UsageError(`events file not found: ${f}`);
  const started = Date.now();
  let sent = 0;
  const meter = { bytes: 0 };
  const progress = new Progress({ label: 'produce', unit: 'events', totalBytes: totalSize(p.positionals), quiet: boolFlag(p, 'quiet') });
  try {
    const conn = kafkaConnectionFromEnv(process.env, { brokers: requireString(p, 'brokers') });
    const topic = parseTopic(requireString(p, 'topic'), '--topic');
    const catalogRaw = stringFlag(p, 'catalog-topic');
    const catalogTopic = catalogRaw === undefined || catalogRaw.trim() === '' ? undefined : parseTopic(catalogRaw, '--catalog-topic');
    if (catalogTopic === topic) throw new UsageError('--catalog-topic must differ from --topic');
    const totals = await produceFiles(conn, topic, p.positionals, {
      batchSize, meter, ...(catalogTopic === undefined ? {} : { catalogTopic }),
      onBatch: (t: ProduceTotals) => {
        sent = t.sent;
        progress.update(t.sent, meter.bytes);
      },
    });
    progress.clear();
    const secs = (Date.now() - started) / 1000;
    console.log(`produced ${totals.sent} events to ${topic}${catalogTopic === undefined ? '' : ` and ${catalogTopic}`} in ${secs.toFixed(2)} s (${totals.batches} batches, ${totals.unkeyed} unkeyed, ${totals.blank} blank lines skipped)`);
    return 0;
  } catch (e) {
    progress.clear();
    if (isKafkaSetupError(e)) throw new UsageError(e.message);
    if (e instanceof UsageError) throw e;
    // Sends are acknowledged in order, so everything before this count is on the topic.
    console.error(`visibility-api produce: failed after ${sent} events were acknowledged: ${describeKafkaError(e)}`);
    return 1;
  }
}

export const command: Command<typeof FLAGS> = {
  synopsis: '--brokers B --topic T [flags] EVENTS.ndjson[.gz]...',
  flags: FLAGS,
  notes: ['TLS, SASL and the client id: the KAFKA_* settings in docs/kafka.md.'],
  run: produceCommand,
};
