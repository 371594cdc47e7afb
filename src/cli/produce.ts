import fs from 'node:fs';
import { describeKafkaError, isKafkaSetupError, kafkaConnectionFromEnv, parseTopic, produceFiles, type ProduceTotals } from '../ingest/kafka';
import { intFlag, parse, requireString, UsageError } from './args';
import { Progress, totalSize } from './progress';

/** `produce --brokers B --topic T [--batch-size N] EVENTS...`: NDJSON files (gzip too) to a Kafka topic. */
export async function produceCommand(argv: string[]): Promise<number> {
  const p = parse(argv, {
    brokers: { type: 'string' }, topic: { type: 'string' }, 'batch-size': { type: 'string' }, quiet: { type: 'boolean' },
  }, { brokers: 'KAFKA_BROKERS', topic: 'KAFKA_TOPIC' });
  const batchSize = intFlag(p, 'batch-size', 1000, 1, 100_000);
  if (p.positionals.length === 0) throw new UsageError('produce needs at least one events file');
  for (const f of p.positionals) if (!fs.existsSync(f) || !fs.statSync(f).isFile()) throw new UsageError(`events file not found: ${f}`);
  const started = Date.now();
  let sent = 0;
  const meter = { bytes: 0 };
  const progress = new Progress({ label: 'produce', unit: 'events', totalBytes: totalSize(p.positionals), quiet: p.values.quiet === true });
  try {
    const conn = kafkaConnectionFromEnv(process.env, { brokers: requireString(p, 'brokers') });
    const topic = parseTopic(requireString(p, 'topic'), '--topic');
    const totals = await produceFiles(conn, topic, p.positionals, {
      batchSize, meter,
      onBatch: (t: ProduceTotals) => {
        sent = t.sent;
        progress.update(t.sent, meter.bytes);
      },
    });
    progress.clear();
    const secs = (Date.now() - started) / 1000;
    console.log(`produced ${totals.sent} events to ${topic} in ${secs.toFixed(2)} s (${totals.batches} batches, ${totals.unkeyed} unkeyed, ${totals.blank} blank lines skipped)`);
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
