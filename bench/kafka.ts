// npm run bench:kafka [-- --events N --rate R --seconds S]
// Against the local broker (npm run kafka:start): end-to-end events/s of the Kafka consumer feeding
// SQLite over a produced backlog, next to a consume-only kafkajs loop over the same backlog in the
// same run (the ratio is the figure), then freshness: produce -> visible through the API, at a
// steady rate.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { DEMO_OPTIONS, generateWorld, worldKeys } from '../fixtures/world';
import { createKafkaClient, kafkaIngestConfigFromEnv, produceLines, startKafkaIngest } from '../src/ingest/kafka';
import { packageRoot } from '../src/lib/root';
import { createService } from '../src/serve';
import { openDb, Projector, type Db } from '../src/store';
import { fmt, machineLine } from './machine';

const { values } = parseArgs({ options: { events: { type: 'string' }, rate: { type: 'string' }, seconds: { type: 'string' } } });
const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';
const EVENTS = Number(values.events ?? 200_000);
const RATE = Number(values.rate ?? 1000);
const SECONDS = Number(values.seconds ?? 30);
const OUT = path.join(packageRoot(), 'bench', 'out');
const RUN = Date.now().toString(36);
const WORLD = { ...DEMO_OPTIONS, seed: 21, accounts: 20, projectsPerAccount: 2, sharedProjects: 0, days: 70 };

const quiet = { log: () => {} };
const kafka = new Kafka({ clientId: 'bench', brokers: BROKERS.split(','), logLevel: logLevel.NOTHING });

function backlogLines(): string[] {
  const lines: string[] = [];
  for (const line of generateWorld(WORLD)) {
    lines.push(line);
    if (lines.length >= EVENTS) break;
  }
  return lines;
}

async function createTopic(topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();
}

async function produce(topic: string, lines: Iterable<string>): Promise<number> {
  const client = createKafkaClient(kafkaIngestConfigFromEnv({ KAFKA_BROKERS: BROKERS }), quiet.log);
  const producer = client.producer();
  await producer.connect();
  const started = performance.now();
  await produceLines(producer, topic, lines, { batchSize: 2000 });
  await producer.disconnect();
  return (performance.now() - started) / 1000;
}

/** The baseline: kafkajs consuming the backlog and doing nothing with it. */
async function consumeOnly(topic: string, total: number): Promise<number> {
  const consumer = kafka.consumer({ groupId: `bench-noop-${RUN}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let seen = 0;
  let started = 0;
  const done = new Promise<number>((resolve) => {
    void consumer.run({
      eachBatch: async ({ batch }) => {
        if (started === 0) started = performance.now();
        seen += batch.messages.length;
        if (seen >= total) resolve((performance.now() - started) / 1000);
      },
    });
  });
  const seconds = await done;
  await consumer.disconnect();
  return seconds;
}

function appliedCount(db: Db, topic: string): number {
  return db.prepare("SELECT coalesce(sum(position), 0) FROM source_positions WHERE source LIKE ?").pluck().get(`kafka:${topic}:%`) as number;
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function freshDb(name: string): Db {
  fs.mkdirSync(OUT, { recursive: true });
  const file = path.join(OUT, name);
  for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true });
  return openDb(file, { fast: true });
}

async function endToEnd(topic: string, total: number): Promise<number> {
  const db = freshDb('kafka-bench.db');
  const config = kafkaIngestConfigFromEnv({ KAFKA_BROKERS: BROKERS, KAFKA_TOPICS: topic, KAFKA_GROUP_ID: `bench-e2e-${RUN}`, KAFKA_DLQ_TOPIC: '' });
  const started = performance.now();
  const ingest = await startKafkaIngest(db, new Projector(db), config, { log: quiet.log });
  await until(() => appliedCount(db, topic) >= total, 20 * 60_000);
  const seconds = (performance.now() - started) / 1000;
  await ingest.stop();
  db.close();
  return seconds;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/**
 * Freshness at a steady rate: prompt runs at RATE events/s, and every 100 ms a new run group whose
 * id the probe polls through the API until it answers 200. All in one process, as `serve` runs.
 */
async function freshness(topic: string): Promise<{ p50: number; p99: number; samples: number }> {
  const db = freshDb('kafka-fresh.db');
  const setup = [...generateWorld({ ...WORLD, accounts: 1, days: 1 })];
  const keyOf = worldKeys({ ...WORLD, accounts: 1, days: 1 }).find((k) => !k.revoked)!.key;
  const runs = setup.filter((l) => l.includes('"prompt_run.completed"'));
  const base = setup.filter((l) => !l.includes('"prompt_run.completed"'));
  const project = (JSON.parse(base.find((l) => l.includes('"project.upserted"'))!) as { data: { id: string } }).data.id;
  await produce(topic, base);
  const config = kafkaIngestConfigFromEnv({ KAFKA_BROKERS: BROKERS, KAFKA_TOPICS: topic, KAFKA_GROUP_ID: `bench-fresh-${RUN}`, KAFKA_DLQ_TOPIC: '' });
  const ingest = await startKafkaIngest(db, new Projector(db), config, { log: quiet.log });
  await until(() => appliedCount(db, topic) >= base.length, 60_000);
  const service = createService({ db });
  const server = http.createServer(service.handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/public`;
  const client = createKafkaClient(config, quiet.log);
  const producer = client.producer();
  await producer.connect();
  const latencies: number[] = [];
  const probes: Array<Promise<void>> = [];
  const stopAt = Date.now() + SECONDS * 1000;
  let n = 0;
  let seq = 0;
  const tickMs = 10;
  while (Date.now() < stopAt) {
    const tickStart = Date.now();
    const batch: string[] = [];
    for (let i = 0; i < (RATE * tickMs) / 1000; i++) {
      // Replays of real runs under new ids, so each is a new fact.
      const e = JSON.parse(runs[n++ % runs.length]!) as { event_id: string; data: { id: string } };
      e.data.id = `00000000-0000-4000-8000-${(++seq).toString(16).padStart(12, '0')}`;
      e.event_id = `10000000-0000-4000-8000-${seq.toString(16).padStart(12, '0')}`;
      batch.push(JSON.stringify(e));
    }
    if (seq % 100 < (RATE * tickMs) / 1000) probes.push(probe());
    await produceLines(producer, topic, batch);
    const wait = tickMs - (Date.now() - tickStart);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(probes);
  await producer.disconnect();
  await ingest.stop();
  server.close();
  await service.close();
  db.close();
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), samples: latencies.length };

  async function probe(): Promise<void> {
    const id = `20000000-0000-4000-8000-${(++seq).toString(16).padStart(12, '0')}`;
    const started = performance.now();
    await produceLines(producer, topic, [JSON.stringify({
      event_id: `30000000-0000-4000-8000-${seq.toString(16).padStart(12, '0')}`, type: 'run_group.started', schema_version: 1,
      occurred_at: new Date().toISOString(), data: { id, project_id: project, started_at: new Date().toISOString() },
    })]);
    for (;;) {
      const r = await fetch(`${api}/runs/${id}`, { headers: { 'x-api-key': keyOf } });
      await r.arrayBuffer();
      if (r.status === 200) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    latencies.push(performance.now() - started);
  }
}

async function main(): Promise<void> {
  console.log(`machine: ${machineLine()}`);
  const topic = `bench-${RUN}`;
  await createTopic(topic);
  const lines = backlogLines();
  const producedIn = await produce(topic, lines);
  console.log(`produced ${fmt(lines.length)} events in ${fmt(producedIn, 1)} s`);
  const noop = await consumeOnly(topic, lines.length);
  const e2e = await endToEnd(topic, lines.length);
  const freshTopic = `bench-fresh-${RUN}`;
  await createTopic(freshTopic);
  const fresh = await freshness(freshTopic);
  const md = [
    `Machine: ${machineLine()}`, '',
    '| measure | events | seconds | events/s |', '|---|---:|---:|---:|',
    `| consume only (kafkajs, no projection) | ${fmt(lines.length)} | ${fmt(noop, 1)} | ${fmt(lines.length / noop)} |`,
    `| end to end (Kafka -> SQLite read model) | ${fmt(lines.length)} | ${fmt(e2e, 1)} | ${fmt(lines.length / e2e)} |`,
    `| ratio end to end / consume only | | | ${fmt(noop / e2e, 2)} |`, '',
    `Freshness at ${fmt(RATE)} events/s for ${SECONDS} s (produce -> visible through the API, ${fresh.samples} probes): ` +
      `p50 ${fmt(fresh.p50, 1)} ms, p99 ${fmt(fresh.p99, 1)} ms.`,
  ].join('\n');
  fs.writeFileSync(path.join(OUT, 'kafka.md'), md + '\n');
  console.log(`\n${md}`);
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
