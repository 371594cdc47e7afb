// Kafka ingestion against a real broker of this file's own (test/helpers/broker.ts: Apache Kafka 3.9 KRaft from
// scripts/kafka-start.sh, on free ports, in a temporary directory), so it neither needs nor disturbs a
// broker at 127.0.0.1:9092. Every test has topics of its own; every wait polls with a deadline.
//   demo produced with `produce` -> same digest as a file replay; produced again -> nothing changes;
//   the offsets that count are SQLite's, not the group's;
//   records from Kafka's own console producer are applied;
//   the `serve` process SIGKILLed at random points of a large stream (seeded trials) ends with the
//   digest of a clean replay;
//   a member leaves the group while another is catching up: the other applies every record once;
//   the disk filling up mid-stream: once there is room, every record applied once;
//   poison records reach the dead letters and the DLQ topic (with headers) while consumption goes on;
//   broker stopped for 30 s under read load on `serve`: every read served, /readyz says why;
//   broker back: ingestion resumes, the digest of a replay of everything produced.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { Kafka, logLevel } from 'kafkajs';
import t, { type Test } from 'tap';
import { DEMO_OPTIONS, generateWorld } from '../../../fixtures/world';
import { replayFiles } from '../../../src/ingest';
import { INGEST_NICE } from '../../../src/lib/worker';
import {
  createKafkaClient, DLQ_HEADERS, eventKey, kafkaConnectionFromEnv, kafkaIngestConfigFromEnv,
  produceFiles, startKafkaIngest, type KafkaIngest, type KafkaIngestConfig, type KafkaLog, type OutboundMessage,
} from '../../../src/ingest/kafka';
import { digest, openDb, Projector, type Db } from '../../../src/store';
import { testBroker, type TestBroker } from '../../helpers/broker';
import { DEMO_FILE } from '../../helpers/demo';
import { ev, id, run, W, world, writeNdjson, type Ev } from '../../helpers/events';
import { tmpDir } from '../../helpers/db';
import { request, withKey } from '../../helpers/http';
import { runCli } from '../../helpers/processes';
import { ROOT } from '../../helpers/paths';
import { sleep } from '../../helpers/wait';
import { mulberry32 } from '../../../fixtures/random';

// The service as users run it. It also exits when this test process is gone (its parent changes), so
// a test killed by a timeout leaves no consumer behind.
const SERVICE = "const parent=process.ppid;setInterval(()=>{if(process.ppid!==parent)process.kill(process.pid,'SIGKILL')},500).unref();" +
  "require('./src/cli/main').main(process.argv.slice(1)).then(c=>process.exit(c))";

// ---------------------------------------------------------------- helpers

/** The last kafka log lines, shown when a wait times out. */
const recentLogs: string[] = [];
const testLog: KafkaLog = (level, message) => {
  recentLogs.push(`${new Date().toISOString()} ${level} ${message}`);
  if (recentLogs.length > 30) recentLogs.shift();
};

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/** Polls `probe` until it returns something truthy; fails after `ms` with what it waited for. */
async function waitFor<T>(what: string, ms: number, probe: () => T | Promise<T>, every = 100): Promise<Truthy<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}\nrecent kafka log:\n${recentLogs.join('\n')}`);
    await sleep(every);
  }
}

/**
 * Closes every inherited descriptor above stderr, then runs the script (a JVM must not hold a
 * descriptor of the test runner open: tap hands one down to track descendant processes).
 */
const CLOSE_FDS_THEN_RUN = 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec bash "$@"';

/** scripts/NAME against this file's broker, without blocking the event loop. */
function script(name: string, args: string[] = [], timeoutMs = 150_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, KAFKA_PORT: BROKER.split(':')[1], KAFKA_RUN_DIR: tmpDir('kafka-tools-') };
    const child = spawn('bash', ['-c', CLOSE_FDS_THEN_RUN, 'bash', path.join(ROOT, 'scripts', name), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      fs.rmSync(env.KAFKA_RUN_DIR, { recursive: true, force: true });
      if (code === 0) resolve(out);
      else reject(new Error(`scripts/${name} ${args.join(' ')} failed (${code ?? signal}):\n${out}`));
    });
  });
}

// Set by t.before once this file's broker is up.
let broker: TestBroker | undefined;
let BROKER = '';
let admin: Kafka;
let conn: ReturnType<typeof kafkaConnectionFromEnv>;

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
/** A fresh topic with 3 partitions (the broker and its data go when the file ends). */
async function freshTopic(): Promise<string> {
  topicCounter += 1;
  const topic = `t-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}-${topicCounter}`;
  await withAdmin((a) => a.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true }));
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

/**
 * Caught up, and idle long enough that the consumer wrote the weeks and months waiting in its
 * memory (src/ingest/kafka/write-pipeline.ts SETTLE_WHEN_IDLE_MS): the digest is then a replay's.
 */
function settled(db: Db, topic: string, ends: number[]): boolean {
  return caughtUp(db, topic, ends) && db.prepare('SELECT count(*) FROM rollup_pending').pluck().get() === 0;
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

/**
 * A generated world (`accounts` x `projectsPerAccount`) as an NDJSON file in a directory of the test's
 * own (removed at its end), with its event count and a clean replay's digest. 2 % of its runs are sent
 * again later with changed facts (the generator's corrections): a record redelivered after a kill or a
 * rebalance may be a run, its correction, or both.
 */
async function generatedStream(t: Test, prefix: string, accounts: number, projectsPerAccount: number): Promise<{ dir: string; stream: string; total: number; clean: string }> {
  const dir = tmpDir(prefix);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const stream = path.join(dir, 'stream.ndjson');
  const generated = [...generateWorld({ ...DEMO_OPTIONS, accounts, projectsPerAccount, corrections: 0.02 })];
  fs.writeFileSync(stream, generated.join('\n') + '\n');
  return { dir, stream, total: generated.length, clean: await replayDigest(stream) };
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

interface Service {
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
  /** http://127.0.0.1:PORT/v1/public and http://127.0.0.1:PORT, once it listens. */
  urls: Promise<{ api: string; ops: string }>;
}

/**
 * `visibility-api serve --db FILE` consuming `topic` from this file's broker, as a child process
 * (killed when the test ends if it still runs).
 */
function startService(tt: Test, dbFile: string, topic: string): Service {
  // No rate limit: the read load below is one key's, past serve's default per-key rate, and counts every error.
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', SERVICE, 'serve', '--db', dbFile, '--port', '0', '--ops-port', '0', '--host', '127.0.0.1', '--rate-limit', '0'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, KAFKA_BROKERS: BROKER, KAFKA_TOPICS: topic, KAFKA_GROUP_ID: `g-${topic}`,
      KAFKA_DLQ_TOPIC: `${topic}.dlq`, KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let all = '';
  let found: (u: { api: string; ops: string }) => void = () => undefined;
  const urls = new Promise<{ api: string; ops: string }>((resolve) => (found = resolve));
  const keep = (c: Buffer): void => {
    output.push(c.toString());
    if (output.length > 50) output.shift();
    if (all.length < 10_000) {
      all += c.toString();
      const m = /listening on \S+ \((http:\/\/\S+?)\/?\); ops on \S+ \((http:\/\/[^\s)]+)\)/.exec(all);
      if (m) found({ api: m[1]!, ops: m[2]! });
    }
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  tt.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, output, exited, urls };
}

/** True while the service runs; throws with its output once it has exited. */
function alive(s: Service): true {
  if (s.child.exitCode !== null || s.child.signalCode !== null) throw new Error(`service exited (${s.child.exitCode ?? s.child.signalCode}):\n${s.output.join('')}`);
  return true;
}

/** Waits (bounded) for the service to exit after SIGTERM; its exit code. */
async function terminate(s: Service): Promise<number | null> {
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 30_000);
  try {
    return await s.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** The nice value of each thread of process `pid`, by thread id (Linux: /proc/PID/task/TID/stat, field 19). */
function threadNices(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]));
  }
  return out;
}

function dbDigest(file: string): { digest: string; deadLetters: unknown } {
  const db = openDb(file, { readonly: true });
  try {
    return { digest: digest(db), deadLetters: db.prepare('SELECT count(*) FROM dead_letters').pluck().get() };
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------- the broker

t.before(async () => {
  broker = await testBroker();
  BROKER = broker.brokers;
  admin = new Kafka({ clientId: 'kafka-test', brokers: [BROKER], logLevel: logLevel.NOTHING });
  conn = kafkaConnectionFromEnv({ KAFKA_BROKERS: BROKER, KAFKA_LOG_LEVEL: 'error' });
  t.comment(`broker ${BROKER}`);
});
t.teardown(() => broker?.close());

// ---------------------------------------------------------------- tests

t.test('demo events through Kafka', async (t) => {
  const topic = await freshTopic();
  const demoDigest = await replayDigest(DEMO_FILE);
  const count = (await produceFiles(conn, topic, [DEMO_FILE], { log: testLog })).sent;
  const ends = await endOffsets(topic);
  t.equal(ends.reduce((a, b) => a + b, 0), count, `${count} records on ${topic}`);
  const first = await consume(t, topic);

  await t.test('produced with produce(), consumed: the digest of a file replay', async (t) => {
    await waitFor('the demo to be applied', 90_000, () => settled(first.db, topic, ends));
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
    await waitFor('the copies to be consumed', 90_000, () => settled(first.db, topic, ends2));
    t.equal(digest(first.db), demoDigest, 'same digest');
    const after = first.ingest.status().counters.events;
    t.equal(after.applied, before.applied, 'no copy was applied');
    t.equal((after.duplicate - before.duplicate) + (after.stale - before.stale), count, 'every copy counted as duplicate or stale');
    ends.splice(0, ends.length, ...ends2);
  });

  await t.test('the offsets that count are in SQLite, not in the consumer group', async (t) => {
    // Idle for a while: a fetch is waiting at the broker for records that do not come. A stop waits
    // for it, so it must not wait long (SIGTERM: an orchestrator kills after ~10 s).
    await sleep(1000);
    const stopping = performance.now();
    await first.ingest.stop();
    const stopMs = performance.now() - stopping;
    t.ok(stopMs < 2500, `an idle consumer stopped in ${stopMs.toFixed(0)} ms (under 2.5 s)`);
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
    await waitFor('a fresh database to catch up', 90_000, () => settled(fresh.db, topic, ends));
    t.equal(digest(fresh.db), demoDigest);
  });
});

t.test('`visibility-api produce` to a topic that does not exist yet: one summary line, no kafkajs error on the way', async (t) => {
  // The broker creates the topic on the first metadata request and answers "does not host this
  // topic-partition" until it has; kafkajs asks again. That retry used to print "kafka error: ...".
  const topic = `new-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
  const dir = tmpDir('kafka-produce-cli-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = writeNdjson(path.join(dir, 'events.ndjson'), world());
  const out = await runCli(['produce', '--brokers', BROKER, '--topic', topic, '--quiet', file], { KAFKA_LOG_LEVEL: 'warn' });
  t.equal(out.code, 0, 'exit 0');
  t.match(out.stdout, new RegExp(`^produced ${world().length} events to ${topic} in `), 'the summary line');
  t.equal(out.stderr, '', 'nothing on stderr');
  t.equal((await endOffsets(topic)).reduce((a, b) => a + b, 0), world().length, 'every event on the new topic');
});

t.test("events produced by Kafka's own console producer are applied", async (t) => {
  const topic = await freshTopic();
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
  await waitFor('the events to be applied', 60_000, () => settled(c.db, topic, ends));
  t.equal(digest(c.db), await replayDigest(plain), 'same digest as a file replay');
  t.equal(c.ingest.status().counters.events.dead_lettered, 0);
});

t.test('killed with SIGKILL at random points of a stream, in seeded trials: the digest of a clean replay', async (t) => {
  // Seeded: the seed is printed, and KAFKA_CRASH_SEED=N repeats the trials' choices (the instants
  // still depend on the machine's pace, so a failure is a matter of where, not exactly when).
  const seed = Number(process.env.KAFKA_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.comment(`seed ${seed} (KAFKA_CRASH_SEED=${seed} to repeat)`);
  // Big enough for kills inside large batches and between them, small enough for several trials.
  const { dir, stream, total, clean } = await generatedStream(t, 'kafka-crash-', 4, 2);
  t.ok(total > 20_000, `${total} events`);

  const TRIALS = 3;
  for (let trial = 1; trial <= TRIALS; trial++) {
    await t.test(`trial ${trial} of ${TRIALS} (seed ${seed + trial})`, async (t) => {
      const random = mulberry32(seed + trial); // seeded: a failing trial can be run again with the same choices
      const started = Date.now();
      const topic = await freshTopic();
      const dbFile = path.join(dir, `service-${trial}.db`);
      t.teardown(() => {
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(dbFile + suffix, { force: true });
      });
      openDb(dbFile).close(); // so that the test can read it from the start

      // Produced while the service consumes, so it is killed while both sides are busy.
      const producing = produceFiles(conn, topic, [stream], { log: testLog });
      producing.catch(() => undefined);

      const reader = openDb(dbFile, { readonly: true });
      t.teardown(() => reader.close());
      const consumed = (): number => (reader.prepare('SELECT coalesce(sum(position), 0) FROM source_positions WHERE source GLOB ?').pluck().get(`kafka:${topic}:*`) as number);

      // 2 kills, one in each half of 5 %..70 % of the stream: late enough to have progress, early
      // enough that the pause before the kill cannot reach the end (it did once at 90 % + 300 ms).
      const kills = 2;
      const killedAt: number[] = [];
      const pendingAtKill: number[] = [];
      for (let k = 0; k < kills; k++) {
        const lo = 0.05 + (0.65 * k) / kills;
        const threshold = Math.floor(total * (lo + random() * (0.65 / kills)));
        const s = startService(t, dbFile, topic);
        await waitFor(`${threshold} records applied`, 120_000, () => alive(s) && consumed() >= threshold);
        await sleep(random() * 100); // a random instant: inside a transaction or between two
        s.child.kill('SIGKILL');
        await s.exited;
        killedAt.push(consumed());
        pendingAtKill.push(reader.prepare('SELECT count(*) FROM rollup_pending').pluck().get() as number);
      }
      t.comment(`killed ${kills} times, after ${killedAt.join(', ')} of ${total} records (${((Date.now() - started) / 1000).toFixed(0)} s), week/month periods pending then: ${pendingAtKill.join(', ')}`);
      // The latest weeks and months wait in the consumer's memory: a kill leaves them pending, and the restart counts them again.
      t.ok(pendingAtKill.some((n) => n > 0), 'killed with roll-ups pending');
      t.ok(killedAt.every((n, i) => n > 0 && n < total && (i === 0 || n >= killedAt[i - 1]!)), 'each kill after some progress, before the end; never backwards');

      const s = startService(t, dbFile, topic);
      t.equal((await producing).sent, total, 'every event produced');
      const ends = await endOffsets(topic);
      await waitFor('the restarted service to catch up', 180_000, () => alive(s) && consumed() === total, 250);
      t.ok(caughtUp(reader, topic, ends), 'stored offsets = high watermarks');
      t.equal(await terminate(s), 0, 'SIGTERM: clean exit');
      const served = dbDigest(dbFile);
      t.equal(served.deadLetters, 0, 'no dead letters');
      t.equal(served.digest, clean, 'same digest as a clean file replay');
      t.equal(reader.prepare('SELECT count(*) FROM rollup_pending').pluck().get(), 0, 'caught up: nothing pending');
    });
  }
});

t.test('a member leaves the group while another is catching up: the other applies every record once', async (t) => {
  // A rebalance drops what a member has fetched but not yet written (its queue), and every partition
  // it is given resumes at the offset its own SQLite holds: nothing applied twice, nothing skipped.
  // Large enough that both members are still catching up when the group is shared, and often when
  // the member that stays learns of the leave (its next heartbeat, up to 2 s later).
  const { stream, total, clean } = await generatedStream(t, 'kafka-rebalance-', 6, 4);
  const topic = await freshTopic();
  t.equal((await produceFiles(conn, topic, [stream], { log: testLog })).sent, total, `${total} events produced`);
  const ends = await endOffsets(topic);
  const members = await Promise.all([consume(t, topic), consume(t, topic)]);
  const assigned = (c: Consumer): number[] => c.ingest.status().partitions.filter((p) => p.assigned).map((p) => p.partition);
  // Each member's own view: the one assigned first sees the new split at its next heartbeat.
  const shared = (): boolean => members.every((m) => assigned(m).length > 0) && assigned(members[0]!).length + assigned(members[1]!).length === 3;
  await waitFor('the partitions shared by the two members', 30_000, shared, 20);
  // The member with the largest partition stays (keyed by project, the partitions are uneven).
  const largest = ends.indexOf(Math.max(...ends));
  const [stays, leaves] = assigned(members[0]!).includes(largest) ? members : [members[1]!, members[0]!];
  t.same([...assigned(stays!), ...assigned(leaves!)].sort(), [0, 1, 2], `shared: ${assigned(stays!).join(',')} and ${assigned(leaves!).join(',')}`);
  await leaves!.ingest.stop();
  await waitFor('the member that stays to have every partition', 30_000, () => assigned(stays!).length === 3, 20);
  await waitFor('the member that stays to catch up and settle', 120_000, () => settled(stays!.db, topic, ends), 100);
  const e = stays!.ingest.status().counters.events;
  t.equal(e.applied + e.duplicate + e.stale + e.dead_lettered, total, `each of the ${total} records applied once`);
  t.equal(digest(stays!.db), clean, 'the digest of a clean file replay');
});

t.test('the disk filling up under Kafka ingestion: once there is room, every record applied once', async (t) => {
  // A failed transaction drops what was fetched and restarts the consumer at SQLite's offsets. Until
  // then nothing fetched after the failure may be written: that would leave a gap behind the offset.
  const dir = tmpDir('kafka-full-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const demo = zlib.gunzipSync(fs.readFileSync(DEMO_FILE)).toString('utf8').split('\n').filter((l) => l !== '');
  const half = Math.floor(demo.length / 2);
  const [before, after] = [writeNdjson(path.join(dir, 'a.ndjson'), demo.slice(0, half)), writeNdjson(path.join(dir, 'b.ndjson'), demo.slice(half))];
  const topic = await freshTopic();
  await produceFiles(conn, topic, [before], { log: testLog });
  const c = await consume(t, topic);
  // Room for about a third of the first half, then SQLITE_FULL as from a full disk (a limit of the
  // consumer's connection: the test shares it).
  c.db.pragma('max_page_count = 400');
  await waitFor('a transaction to fail: the disk is full', 60_000, () => /full/.test(c.ingest.status().last_error ?? ''), 20);
  c.db.pragma('max_page_count = 1073741823'); // room again
  await produceFiles(conn, topic, [after], { log: testLog });
  const ends = await endOffsets(topic);
  await waitFor('the consumer to catch up and settle', 120_000, () => settled(c.db, topic, ends), 100);
  const e = c.ingest.status().counters.events;
  t.equal(e.applied + e.duplicate + e.stale + e.dead_lettered, demo.length, `each of the ${demo.length} records applied once`);
  t.equal(digest(c.db), await replayDigest(DEMO_FILE), 'the digest of a clean file replay');
});

t.test('poison records: dead letters in the table and on the DLQ topic, consumption goes on', async (t) => {
  const topic = await freshTopic();
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
  await waitFor('everything to be consumed', 60_000, () => settled(c.db, topic, ends));

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

interface Got { status: number; etag: string | undefined; body: string }

/** GET over a keep-alive agent, the body read whole (a read only counts once it has arrived). */
function get(url: string, agent: http.Agent, headers: Record<string, string>): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
  });
}

/** Resolves with `p`, or fails after `ms` saying what it waited for. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

interface ReadyzBody { status: string; ready: boolean; reasons: string[]; kafka: { state: string; last_error: string | null; partitions: unknown[] } }

t.test('broker stopped for 30 s under read load: every read served, /readyz says why; broker back: ingestion resumes', async (t) => {
  const OUTAGE_MS = 30_000;
  const CLIENTS = 4;
  const topic = await freshTopic();
  const dir = tmpDir('kafka-outage-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const before = [...world(), run({ n: 1, brand: 1, sentiment: 0.5, competitor: 2, citations: ['https://acme.com/a'] }), run({ n: 2, engine: W.engineB, brand: 2 })];
  await produceMessages(topic, lines(before).map((l) => ({ key: eventKey(l), value: l })));
  const ends = await endOffsets(topic);

  const dbFile = path.join(dir, 'service.db');
  const s = startService(t, dbFile, topic);
  const urls = await within(Promise.race([s.urls, s.exited.then(() => alive(s) && s.urls)]), 60_000, 'the service to listen');
  const readyz = async (): Promise<{ status: number; body: ReadyzBody }> => {
    const r = await request(`${urls.ops}/readyz`);
    return { status: r.status, body: r.json as ReadyzBody };
  };
  const reader = await waitFor('the database', 30_000, () => alive(s) && fs.existsSync(dbFile) && openDb(dbFile, { readonly: true }));
  t.teardown(() => reader.close());
  await waitFor('the first events to be applied', 60_000, () => alive(s) && caughtUp(reader, topic, ends), 200);
  const ready = await waitFor('/readyz ready', 30_000, async () => {
    const r = await readyz();
    return r.body.status === 'ready' && r;
  }, 200);
  t.match(ready, { status: 200, body: { ready: true, reasons: [], kafka: { state: 'consuming' } } }, '/readyz before the outage');
  // The serving thread keeps the default priority; the Kafka thread and its preparing thread run below it.
  const nices = threadNices(s.child.pid!);
  const own = os.getPriority(); // the service inherits this process's nice value (0 unless the tests run niced)
  t.equal(nices.get(s.child.pid!), own, `the serving (main) thread at nice ${own}`);
  const lowered = [...nices.values()].filter((n) => n === INGEST_NICE).length;
  if (own < INGEST_NICE) t.equal(lowered, 2, `two threads (Kafka, preparing) at nice ${INGEST_NICE}`);
  else t.equal(lowered, own === INGEST_NICE ? nices.size : 0, `tests run at nice ${own}: no thread is raised or lowered`);
  const projectsBefore = (await request(`${urls.api}/projects`, withKey(W.key))).json;

  // The read load: a few keep-alive clients, each request after the previous answer and a short pause
  // (bounded: ~100 requests/s at most, and never past loadDeadline).
  const paths = ['/projects', `/projects/${W.project}`, `/projects/${W.project}/visibility`, `/projects/${W.project}/runs`,
    `/projects/${W.project}/mentions`, `/projects/${W.project}/citations`, `/projects/${W.project}/competitor-rankings`, `/runs/${W.group}`];
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  t.teardown(() => agent.destroy());
  type Phase = 'before' | 'outage' | 'after';
  let phase: Phase = 'before';
  const served: Record<Phase, { 200: number; 304: number }> = { before: { 200: 0, 304: 0 }, outage: { 200: 0, 304: 0 }, after: { 200: 0, 304: 0 } };
  const errors: string[] = [];
  let errorCount = 0;
  let stopLoad = false;
  const loadDeadline = Date.now() + 240_000;
  const etags = new Map<string, string>();
  const client = async (i: number): Promise<void> => {
    for (let n = i; !stopLoad && Date.now() < loadDeadline; n++) {
      const p = paths[n % paths.length]!;
      const etag = etags.get(p);
      const conditional = etag !== undefined && n % 2 === 0; // half of them revalidate: 304 while nothing changed
      const at = phase;
      try {
        const r = await get(`${urls.api}${p}`, agent, { 'x-api-key': W.key, 'accept-encoding': 'gzip', ...(conditional ? { 'if-none-match': etag } : {}) });
        if (r.status === 200 || r.status === 304) {
          served[at][r.status] += 1;
          if (r.status === 200 && r.etag) etags.set(p, r.etag);
        } else {
          errorCount += 1;
          if (errors.length < 10) errors.push(`${at}: ${r.status} ${p} ${r.body.slice(0, 200)}`);
        }
      } catch (e) {
        errorCount += 1;
        if (errors.length < 10) errors.push(`${at}: ${p}: ${(e as Error).message}`);
      }
      await sleep(40);
    }
  };
  const load = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  t.teardown(async () => {
    stopLoad = true;
    await load;
  });
  await waitFor('reads before the outage', 30_000, () => served.before[200] + served.before[304] >= 20, 100);

  // /readyz sampled twice a second through the outage.
  const samples: Array<{ phase: Phase; at: number; status: number; body: ReadyzBody }> = [];
  let stopSampling = false;
  const sampling = (async () => {
    while (!stopSampling && Date.now() < loadDeadline) {
      const at = phase;
      const r = await readyz();
      samples.push({ phase: at, at: Date.now(), ...r });
      await sleep(500);
    }
  })();
  t.teardown(async () => {
    stopSampling = true;
    await sampling;
  });

  phase = 'outage';
  await broker!.stop();
  const down = Date.now();
  const degraded = await waitFor('/readyz to report the outage', 30_000, () => samples.find((x) => x.body.status === 'degraded'), 100);
  t.equal(degraded.status, 200, '/readyz: 200 while the API serves data');
  t.equal(degraded.body.ready, true);
  const reason = degraded.body.reasons.join(' | ');
  // Whichever notices first words it: the lag probe (cannot reach Kafka) or kafkajs (No broker available, ...).
  t.match(reason, new RegExp(`Kafka (disconnected|restarting) \\(${BROKER.replace(/\./g, '\\.')}\\) since \\S+: \\S.*serving the last data applied`), `reason: ${reason}`);
  t.ok(['disconnected', 'restarting'].includes(degraded.body.kafka.state), `state ${degraded.body.kafka.state}`);
  t.equal(degraded.body.kafka.partitions.length, 3, 'partitions still listed');
  const during = await request(`${urls.api}/projects`, withKey(W.key));
  t.equal(during.status, 200, 'the API still answers');
  t.same(during.json, projectsBefore, 'with the last data');
  await sleep(Math.max(0, down + OUTAGE_MS - Date.now()));
  const outageMs = Date.now() - down;

  phase = 'after';
  await broker!.start();
  const outage = samples.filter((x) => x.at >= degraded.at && x.at <= down + outageMs);
  t.ok(outage.length >= 10, `${outage.length} /readyz samples during the outage`);
  t.same(outage.filter((x) => x.status !== 200 || x.body.status !== 'degraded' || x.body.reasons.length === 0).map((x) => [x.status, x.body.status]), [],
    'every /readyz answer during the outage: 200, degraded, with a reason');

  // Produced after the broker is back: a new project and a new run of the first one.
  const added = id(3, 'bbbbbbbb');
  const later = [
    ev('project.upserted', { id: added, company_id: W.account, name: 'Acme Two', status: 'active', created_at: '2026-02-01T00:00:00Z', updated_at: '2026-02-01T00:00:00Z' }, '2026-02-01T00:00:00.000Z'),
    run({ n: 3, prompt: W.prompt2, day: '2026-01-06', brand: 3, citations: ['https://acme.com/b'] }),
  ];
  await produceMessages(topic, lines(later).map((l) => ({ key: eventKey(l), value: l })));
  const after = await waitFor('the new project to be served', 120_000, async () => {
    alive(s);
    const r = await request(`${urls.api}/projects`, withKey(W.key));
    const list = r.status === 200 ? (r.json as Array<{ id: string; name: string }>) : [];
    return list.some((p) => p.id === added) && list;
  }, 250);
  t.ok(after.some((p) => p.id === added && p.name === 'Acme Two'), 'ingestion resumed: an event produced after the restart is served');
  const back = await waitFor('/readyz to be ready again', 60_000, async () => {
    const r = await readyz();
    return r.body.status === 'ready' && r;
  }, 250);
  t.match(back, { status: 200, body: { reasons: [], kafka: { state: 'consuming' } } }, '/readyz after the outage');
  await waitFor('reads after the outage', 30_000, () => served.after[200] + served.after[304] >= 20, 100);

  stopLoad = true;
  stopSampling = true;
  await Promise.all([load, sampling]);
  t.comment(`reads served: ${JSON.stringify(served)}; outage ${(outageMs / 1000).toFixed(1)} s`);
  t.same(errors, [], 'no read failed');
  t.equal(errorCount, 0, '0 errors');
  t.ok(served.outage[200] + served.outage[304] >= 50, `${served.outage[200] + served.outage[304]} reads during the outage`);
  t.ok(served.before[304] + served.outage[304] > 0 && served.after[200] > 0, 'both 200 and 304 answers');

  t.equal(await terminate(s), 0, 'SIGTERM: clean exit');
  const all = writeNdjson(path.join(dir, 'all.ndjson'), [...before, ...later]);
  const final = dbDigest(dbFile);
  t.equal(final.deadLetters, 0, 'no dead letters');
  t.equal(final.digest, await replayDigest(all), 'the digest of a replay of everything produced, before and after the outage');
});
