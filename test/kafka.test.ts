// Kafka ingestion against a real broker (scripts/kafka-start.sh: Apache Kafka 3.9 KRaft on
// 127.0.0.1:9092). Every test has topics of its own; every wait polls with a deadline.
//   demo produced with `produce` -> same digest as a file replay; produced again -> nothing changes;
//   the offsets that count are SQLite's, not the group's;
//   records from Kafka's own console producer are applied;
//   the service SIGKILLed at random points of a large stream ends with the digest of a clean replay;
//   poison records reach the dead letters and the DLQ topic (with headers) while consumption goes on;
//   broker stopped: the API serves the last data and /readyz says why; broker back: it catches up.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import t, { type Test } from 'tap';
import { DEMO_OPTIONS, generateWorld } from '../fixtures/world';
import { replayFiles } from '../src/ingest';
import {
  createKafkaClient, DLQ_HEADERS, eventKey, hasReadModel, kafkaConnectionFromEnv, kafkaIngestConfigFromEnv, kafkaReadiness,
  produceFiles, startKafkaIngest, type KafkaIngest, type KafkaIngestConfig, type KafkaLog, type OutboundMessage,
} from '../src/ingest/kafka';
import { createOpsServer } from '../src/ops';
import { digest, openDb, Projector, type Db } from '../src/store';
import { DEMO_FILE } from './demo';
import { ev, id, run, tmpDir, W, world, writeNdjson, type Ev } from './helpers';
import { request, startApi, withKey } from './http';

const ROOT = path.join(__dirname, '..');
const BROKER = '127.0.0.1:9092';
const PID_FILE = path.join(ROOT, 'kafka', 'run', 'kafka.pid');
const SERVICE = "require('./src/cli/main').main(process.argv.slice(1)).then(c=>process.exit(c))";

// ---------------------------------------------------------------- helpers

/** The last kafka log lines, shown when a wait times out. */
const recentLogs: string[] = [];
const testLog: KafkaLog = (level, message) => {
  recentLogs.push(`${new Date().toISOString()} ${level} ${message}`);
  if (recentLogs.length > 30) recentLogs.shift();
};

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/** Polls `probe` until it returns something truthy; fails after `ms` with what it waited for. */
async function waitFor<T>(what: string, ms: number, probe: () => T | Promise<T>, every = 100): Promise<Truthy<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}\nrecent kafka log:\n${recentLogs.join('\n')}`);
    await pause(every);
  }
}

function brokerRunning(): boolean {
  try {
    const pid = Number(fs.readFileSync(PID_FILE, 'utf8').trim());
    process.kill(pid, 0);
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka');
  } catch {
    return false;
  }
}

/**
 * Closes every inherited descriptor above stderr, then runs the script. A broker started here outlives
 * the test: it must not hold a descriptor of the test runner open (tap hands one down to track
 * descendant processes).
 */
const CLOSE_FDS_THEN_RUN = 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec bash "$@"';

/** scripts/NAME without blocking the event loop (in-process consumers and servers keep running). */
function script(name: string, args: string[] = [], timeoutMs = 150_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', CLOSE_FDS_THEN_RUN, 'bash', path.join(ROOT, 'scripts', name), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`scripts/${name} ${args.join(' ')} failed (${code ?? signal}):\n${out}`));
    });
  });
}

const admin = new Kafka({ clientId: 'kafka-test', brokers: [BROKER], logLevel: logLevel.NOTHING });
const conn = kafkaConnectionFromEnv({ KAFKA_BROKERS: BROKER, KAFKA_LOG_LEVEL: 'error' });

async function withAdmin<T>(fn: (a: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
  const a = admin.admin();
  await a.connect();
  try {
    return await fn(a);
  } finally {
    await a.disconnect();
  }
}

let topicCounter = 0;
/** A fresh topic with 3 partitions (and its DLQ name), deleted when the test ends. */
async function freshTopic(tt: Test): Promise<string> {
  topicCounter += 1;
  const topic = `t-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}-${topicCounter}`;
  await withAdmin((a) => a.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true }));
  tt.teardown(async () => {
    if (!brokerRunning()) return;
    await withAdmin(async (a) => {
      const existing = new Set(await a.listTopics());
      const mine = [topic, `${topic}.dlq`].filter((x) => existing.has(x));
      if (mine.length > 0) await a.deleteTopics({ topics: mine });
    }).catch(() => undefined);
  });
  return topic;
}

/** High watermark of every partition, by partition number. */
async function endOffsets(topic: string): Promise<number[]> {
  const offsets = await withAdmin((a) => a.fetchTopicOffsets(topic));
  const ends: number[] = [];
  for (const o of offsets) ends[o.partition] = Number(o.high);
  return ends;
}

function storedNext(db: Db, topic: string): number[] {
  const rows = db.prepare('SELECT source, position FROM source_positions WHERE source GLOB ?').all(`kafka:${topic}:*`) as Array<{ source: string; position: number }>;
  const next: number[] = [];
  for (const r of rows) next[Number(r.source.split(':').pop())] = r.position;
  return next;
}

/** Every record up to the high watermarks is applied (positions are written with the facts). */
function caughtUp(db: Db, topic: string, ends: number[]): boolean {
  const next = storedNext(db, topic);
  return ends.every((end, p) => end === 0 || (next[p] ?? 0) >= end);
}

function ingestConfig(topic: string, extra: Record<string, string> = {}): KafkaIngestConfig {
  return kafkaIngestConfigFromEnv({
    KAFKA_BROKERS: BROKER, KAFKA_TOPICS: topic, KAFKA_GROUP_ID: `g-${topic}`, KAFKA_DLQ_TOPIC: `${topic}.dlq`,
    KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_LOG_LEVEL: 'warn', ...extra,
  });
}

interface Consumer {
  db: Db;
  file: string;
  ingest: KafkaIngest;
}

/** A database of its own and an ingest into it; both closed when the test ends. */
async function consume(tt: Test, topic: string, file?: string): Promise<Consumer> {
  const dbFile = file ?? path.join(tmpDir('kafka-'), 'k.db');
  const db = openDb(dbFile);
  const ingest = await startKafkaIngest(db, new Projector(db), ingestConfig(topic), { lagPollMs: 500, restartDelayMs: 1000, log: testLog });
  tt.teardown(async () => {
    await ingest.stop();
    if (db.open) db.close();
  });
  return { db, file: dbFile, ingest };
}

async function replayDigest(file: string): Promise<string> {
  const dir = tmpDir('kafka-replay-');
  const db = openDb(path.join(dir, 'r.db'), { fast: true });
  try {
    await replayFiles(db, new Projector(db), [file], { batchSize: 2000 });
    return digest(db);
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function produceMessages(topic: string, messages: OutboundMessage[]): Promise<void> {
  const producer = createKafkaClient(conn, testLog).producer();
  await producer.connect();
  try {
    await producer.send(topic, messages);
  } finally {
    await producer.disconnect();
  }
}

const lines = (events: Ev[]): string[] => events.map((e) => JSON.stringify(e));

// ---------------------------------------------------------------- the broker

const startedHere = !brokerRunning();
t.before(async () => {
  await script('kafka-start.sh');
});
t.teardown(async () => {
  if (startedHere) await script('kafka-stop.sh');
  else if (!brokerRunning()) await script('kafka-start.sh'); // it was running when we came
});

// ---------------------------------------------------------------- tests

t.test('demo events through Kafka', async (t) => {
  const topic = await freshTopic(t);
  const demoDigest = await replayDigest(DEMO_FILE);
  const count = (await produceFiles(conn, topic, [DEMO_FILE], { log: testLog })).sent;
  const ends = await endOffsets(topic);
  t.equal(ends.reduce((a, b) => a + b, 0), count, `${count} records on ${topic}`);
  const first = await consume(t, topic);

  await t.test('produced with produce(), consumed: the digest of a file replay', async (t) => {
    await waitFor('the demo to be applied', 90_000, () => caughtUp(first.db, topic, ends));
    t.equal(digest(first.db), demoDigest);
    const s = first.ingest.status();
    t.equal(s.counters.events.applied + s.counters.events.duplicate + s.counters.events.stale, count, 'every record went through the projector once');
    t.equal(s.counters.events.dead_lettered, 0);
    await waitFor('lag 0 in status()', 10_000, () => first.ingest.status().lag === 0);
    t.same(first.ingest.status().partitions.map((p) => [p.partition, p.assigned, p.next_offset, p.high_watermark, p.lag]),
      ends.map((end, p) => [p, true, end, end, 0]), 'per-partition offsets and lag');
    t.ok(s.counters.batch_apply_seconds.count > 0 && s.counters.batch_apply_seconds.sum > 0, 'batch apply time recorded');
  });

  await t.test('produced again (duplicate deliveries): nothing changes', async (t) => {
    const before = first.ingest.status().counters.events;
    await produceFiles(conn, topic, [DEMO_FILE], { log: testLog });
    const ends2 = await endOffsets(topic);
    await waitFor('the copies to be consumed', 90_000, () => caughtUp(first.db, topic, ends2));
    t.equal(digest(first.db), demoDigest, 'same digest');
    const after = first.ingest.status().counters.events;
    t.equal(after.applied, before.applied, 'no copy was applied');
    t.equal((after.duplicate - before.duplicate) + (after.stale - before.stale), count, 'every copy counted as duplicate or stale');
    ends.splice(0, ends.length, ...ends2);
  });

  await t.test('the offsets that count are in SQLite, not in the consumer group', async (t) => {
    await first.ingest.stop();
    const groupId = `g-${topic}`;
    await withAdmin((a) => a.setOffsets({ groupId, topic, partitions: ends.map((_, partition) => ({ partition, offset: '0' })) }));
    const again = await consume(t, topic, first.file);
    // The seek to the stored offsets is committed to the group too (for lag monitoring).
    await waitFor('the group offsets to follow SQLite', 30_000, async () => {
      const [committed] = await withAdmin((a) => a.fetchOffsets({ groupId, topics: [topic] }));
      return committed!.partitions.every((p) => Number(p.offset) === ends[p.partition]);
    }, 250);
    const c = again.ingest.status().counters;
    t.same([c.events.applied, c.events.duplicate, c.redelivered, c.batches], [0, 0, 0, 0], 'group rewound to 0: nothing fetched again');
    await again.ingest.stop();
    again.db.close();

    // A fresh database in the same group (whose offsets say "done") still reads everything.
    const fresh = await consume(t, topic);
    await waitFor('a fresh database to catch up', 90_000, () => caughtUp(fresh.db, topic, ends));
    t.equal(digest(fresh.db), demoDigest);
  });
});

t.test("events produced by Kafka's own console producer are applied", async (t) => {
  const topic = await freshTopic(t);
  const events = [...world(), run({ n: 1, brand: 1, sentiment: 0.5, competitor: 2, citations: ['https://acme.com/a'] }),
    run({ n: 2, engine: W.engineB, brand: null, competitor: 1 }), run({ n: 3, prompt: W.prompt2, day: '2026-01-06', brand: 2 })];
  const dir = tmpDir('kafka-console-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const plain = writeNdjson(path.join(dir, 'events.ndjson'), events);
  const keyed = path.join(dir, 'keyed.tsv');
  fs.writeFileSync(keyed, lines(events).map((l) => `${eventKey(l)}\t${l}`).join('\n') + '\n');
  await script('kafka-console-produce.sh', ['--keyed', topic, keyed], 120_000);
  const ends = await endOffsets(topic);
  t.equal(ends.reduce((a, b) => a + b, 0), events.length, 'the console producer wrote every line');
  const c = await consume(t, topic);
  await waitFor('the events to be applied', 60_000, () => caughtUp(c.db, topic, ends));
  t.equal(digest(c.db), await replayDigest(plain), 'same digest as a file replay');
  t.equal(c.ingest.status().counters.events.dead_lettered, 0);
});

t.test('killed with SIGKILL at random points of a large stream: the digest of a clean replay', async (t) => {
  const topic = await freshTopic(t);
  const dir = tmpDir('kafka-crash-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const stream = path.join(dir, 'stream.ndjson');
  const world = [...generateWorld({ ...DEMO_OPTIONS, accounts: 10, projectsPerAccount: 2 })];
  fs.writeFileSync(stream, world.join('\n') + '\n');
  const total = world.length;
  t.ok(total > 50_000, `${total} events`);
  const dbFile = path.join(dir, 'service.db');
  openDb(dbFile).close(); // serve --db wants an existing database

  // Produced while the service consumes, so it is killed while both sides are busy.
  const producing = produceFiles(conn, topic, [stream], { log: testLog });
  producing.catch(() => undefined);

  const reader = openDb(dbFile, { readonly: true });
  t.teardown(() => reader.close());
  const consumed = (): number => (reader.prepare('SELECT coalesce(sum(position), 0) FROM source_positions WHERE source GLOB ?').pluck().get(`kafka:${topic}:*`) as number);

  let service: { child: ChildProcess; output: string[]; exited: Promise<number | null> } | null = null;
  const startService = (): NonNullable<typeof service> => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', SERVICE, 'serve', '--db', dbFile, '--port', '0', '--ops-port', '0'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME, KAFKA_BROKERS: BROKER, KAFKA_TOPICS: topic, KAFKA_GROUP_ID: `g-${topic}`,
        KAFKA_DLQ_TOPIC: `${topic}.dlq`, KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    const keep = (c: Buffer): void => {
      output.push(c.toString());
      if (output.length > 50) output.shift();
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, output, exited };
  };
  t.teardown(() => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  });
  const alive = (s: NonNullable<typeof service>): boolean => {
    if (s.child.exitCode !== null || s.child.signalCode !== null) throw new Error(`service exited (${s.child.exitCode ?? s.child.signalCode}):\n${s.output.join('')}`);
    return true;
  };

  const bands: Array<[number, number]> = [[0.05, 0.2], [0.25, 0.45], [0.5, 0.7], [0.75, 0.9]];
  const killedAt: number[] = [];
  for (const [lo, hi] of bands) {
    const threshold = Math.floor(total * (lo + Math.random() * (hi - lo)));
    const s = (service = startService());
    await waitFor(`${threshold} records applied`, 120_000, () => alive(s) && consumed() >= threshold);
    await pause(Math.random() * 300); // a random instant: inside a transaction or between two
    s.child.kill('SIGKILL');
    await s.exited;
    killedAt.push(consumed());
  }
  t.equal(killedAt.length, bands.length, `killed ${bands.length} times, after ${killedAt.join(', ')} of ${total} records`);
  t.ok(killedAt.every((n, i) => n > 0 && n < total && (i === 0 || n >= killedAt[i - 1]!)), 'each kill after some progress, before the end; never backwards');

  const s = (service = startService());
  t.equal((await producing).sent, total, 'every event produced');
  const ends = await endOffsets(topic);
  await waitFor('the restarted service to catch up', 180_000, () => alive(s) && consumed() === total, 250);
  t.ok(caughtUp(reader, topic, ends), 'stored offsets = high watermarks');
  s.child.kill('SIGTERM');
  t.equal(await s.exited, 0, 'SIGTERM: clean exit');
  const db = openDb(dbFile, { readonly: true });
  const served = digest(db);
  const deadLetters = db.prepare('SELECT count(*) FROM dead_letters').pluck().get();
  db.close();
  t.equal(deadLetters, 0, 'no dead letters');
  t.equal(served, await replayDigest(stream), 'same digest as a clean file replay');
});

t.test('poison records: dead letters in the table and on the DLQ topic, consumption goes on', async (t) => {
  const topic = await freshTopic(t);
  const notUtf8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"<ff><fe>"}
  const poison: Array<{ value: Buffer | string; reason: string }> = [
    { value: '{"event_id": not json', reason: 'unparseable' },
    { value: notUtf8, reason: 'unparseable' },
    { value: JSON.stringify(ev('no.such.type', { id: id(9) })), reason: 'unknown_type' },
    { value: JSON.stringify(ev('account.upserted', { account_id: 'not-a-uuid', name: 'X' })), reason: 'invalid_payload' },
  ];
  const valid = lines([...world(), run({ n: 1, brand: 1 })]);
  // One key: everything in one partition, the poison first, so what follows it must still be applied.
  await produceMessages(topic, [...poison.map((p) => ({ key: W.project, value: p.value })), ...valid.map((v) => ({ key: W.project, value: v }))]);
  const ends = await endOffsets(topic);
  const c = await consume(t, topic);
  await waitFor('everything to be consumed', 60_000, () => caughtUp(c.db, topic, ends));

  const dir = tmpDir('kafka-poison-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  t.equal(digest(c.db), await replayDigest(writeNdjson(path.join(dir, 'valid.ndjson'), valid)), 'the valid events after the poison are applied');

  type Row = { source: string; position: number; reason: string; raw: Buffer; published_at: string | null };
  const rows = c.db.prepare('SELECT source, position, reason, raw, published_at FROM dead_letters ORDER BY position').all() as Row[];
  t.same(rows.map((r) => r.reason), poison.map((p) => p.reason), 'each poison record dead-lettered, with its reason');
  t.ok(rows.every((r, i) => r.raw.equals(Buffer.from(poison[i]!.value))), 'raw bytes kept exactly (not-UTF-8 included)');
  const partition = Number(rows[0]!.source.split(':').pop());
  t.ok(rows.every((r, i) => r.source === `kafka:${topic}:${partition}` && r.position === i), 'source and offset');
  await waitFor('the dead letters to be published', 30_000, () =>
    c.db.prepare('SELECT count(*) FROM dead_letters WHERE published_at IS NULL').pluck().get() === 0 && c.ingest.status().dlq?.pending === 0);
  t.equal(c.ingest.status().dlq?.published, poison.length);

  // Read the DLQ topic with a plain kafkajs consumer.
  const reader = admin.consumer({ groupId: `dlq-reader-${topic}` });
  await reader.connect();
  t.teardown(() => reader.disconnect());
  await reader.subscribe({ topics: [`${topic}.dlq`], fromBeginning: true });
  const got: Array<{ value: Buffer; key: Buffer | null; headers: Record<string, string> }> = [];
  await reader.run({
    eachMessage: async ({ message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
      got.push({ value: message.value ?? Buffer.alloc(0), key: message.key, headers });
    },
  });
  await waitFor('4 records on the DLQ topic', 60_000, () => got.length >= poison.length, 200);
  got.sort((a, b) => Number(a.headers[DLQ_HEADERS.offset]) - Number(b.headers[DLQ_HEADERS.offset]));
  t.equal(got.length, poison.length, 'each dead letter once');
  got.forEach((m, i) => {
    t.ok(m.value.equals(Buffer.from(poison[i]!.value)), `record ${i}: the raw bytes`);
    t.equal(m.key, null, `record ${i}: no key`);
    t.match(m.headers, {
      [DLQ_HEADERS.reason]: poison[i]!.reason, [DLQ_HEADERS.topic]: topic, [DLQ_HEADERS.partition]: String(partition),
      [DLQ_HEADERS.offset]: String(i), [DLQ_HEADERS.detail]: /\S/,
    }, `record ${i}: headers`);
  });
});

t.test('broker stopped: the API serves the last data and /readyz says why; broker back: it catches up', async (t) => {
  const topic = await freshTopic(t);
  await produceMessages(topic, lines(world()).map((l) => ({ key: eventKey(l), value: l })));
  const ends = await endOffsets(topic);
  const c = await consume(t, topic);
  const api = await startApi({ db: c.db, isReady: () => hasReadModel(c.db) });
  t.teardown(() => api.close());
  const ops = createOpsServer({ cache: api.service.cache, readiness: () => kafkaReadiness(c.ingest.status(), hasReadModel(c.db)) });
  await new Promise<void>((resolve) => ops.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => ops.close(() => resolve())));
  const readyz = `http://127.0.0.1:${(ops.address() as AddressInfo).port}/readyz`;
  const projects = (): Promise<Array<{ id: string; name: string }>> =>
    request(`${api.base}/projects`, withKey(W.key)).then((r) => (r.status === 200 ? r.json as Array<{ id: string; name: string }> : []));

  await waitFor('the world to be applied', 60_000, () => caughtUp(c.db, topic, ends));
  const before = await waitFor('the project to be served', 10_000, async () => (await projects()).some((p) => p.id === W.project) && projects());
  const ready = await request(readyz);
  t.match([ready.status, ready.json], [200, { status: 'ready', ready: true, reasons: [], kafka: { state: 'consuming' } }], '/readyz before');

  t.teardown(async () => {
    if (!brokerRunning()) await script('kafka-start.sh');
  });
  await script('kafka-stop.sh');
  const degraded = await waitFor('/readyz to report the outage', 30_000, async () => {
    const r = await request(readyz);
    const body = r.json as { status: string; reasons: string[] };
    return body.status === 'degraded' && r;
  }, 250);
  t.equal(degraded.status, 200, '/readyz: 200 while the API can serve data');
  const body = degraded.json as { ready: boolean; reasons: string[]; kafka: { state: string; last_error: string; partitions: unknown[] } };
  t.equal(body.ready, true);
  // Whichever notices first words it: the lag probe (cannot reach Kafka) or kafkajs (No broker available).
  t.match(body.reasons.join('\n'), /Kafka disconnected \(127\.0\.0\.1:9092\).*(cannot reach Kafka|No broker available)/, `reason: ${body.reasons.join(' | ')}`);
  t.equal(body.kafka.state, 'disconnected');
  t.ok(body.kafka.partitions.length === 3, 'partitions still listed');
  const during = await request(`${api.base}/projects`, withKey(W.key));
  t.equal(during.status, 200, 'the API still answers');
  t.same(during.json, before, 'with the last data');

  await script('kafka-start.sh');
  const added = id(3, 'bbbbbbbb');
  const later = ev('project.upserted', { id: added, company_id: W.account, name: 'Acme Two', status: 'active', created_at: '2026-02-01T00:00:00Z', updated_at: '2026-02-01T00:00:00Z' }, '2026-02-01T00:00:00.000Z');
  await produceMessages(topic, [{ key: added, value: JSON.stringify(later) }]);
  const after = await waitFor('the new project to be served', 120_000, async () => {
    const list = await projects();
    return list.some((p) => p.id === added) && list;
  }, 250);
  t.ok(after.some((p) => p.id === added && p.name === 'Acme Two'), 'caught up: new data through the API');
  await waitFor('/readyz to be ready again', 30_000, async () => (((await request(readyz)).json as { status: string }).status === 'ready'), 250);
  t.equal(c.ingest.status().state, 'consuming');
});
