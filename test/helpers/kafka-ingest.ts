// What the Kafka ingestion tests share (test/ingest/kafka/consume*.test.ts): a broker of the test
// file's own (test/helpers/broker.ts: Apache Kafka 3.9 KRaft from scripts/kafka-start.sh, on free
// ports, in a temporary directory), so they neither need nor disturb a broker at 127.0.0.1:9092;
// fresh topics, the `serve` process as users run it, and waits that poll with a deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import t, { type Test } from 'tap';
import { DEMO_OPTIONS, generateWorld } from '../../fixtures/world';
import { replayFiles } from '../../src/ingest';
import { createKafkaClient, kafkaConnectionFromEnv, kafkaIngestConfigFromEnv, startKafkaIngest, type KafkaIngest, type KafkaIngestConfig, type KafkaLog, type OutboundMessage } from '../../src/ingest/kafka';
import { digest, openDb, Projector, type Db } from '../../src/store';
import { testBroker, type TestBroker } from './broker';
import { type Ev } from './events';
import { tmpDir } from './db';
import { ROOT } from './paths';
import { sleep } from './wait';

// The service as users run it. It also exits when this test process is gone (its parent changes), so
// a test killed by a timeout leaves no consumer behind.
export const SERVICE = "const parent=process.ppid;setInterval(()=>{if(process.ppid!==parent)process.kill(process.pid,'SIGKILL')},500).unref();" +
  "require('./src/cli/main').main(process.argv.slice(1)).then(c=>process.exit(c))";

// ---------------------------------------------------------------- helpers

/** The last kafka log lines, shown when a wait times out. */
export const recentLogs: string[] = [];
export const testLog: KafkaLog = (level, message) => {
  recentLogs.push(`${new Date().toISOString()} ${level} ${message}`);
  if (recentLogs.length > 30) recentLogs.shift();
};

export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/** Polls `probe` until it returns something truthy; fails after `ms` with what it waited for. */
export async function waitFor<T>(what: string, ms: number, probe: () => T | Promise<T>, every = 100): Promise<Truthy<T>> {
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
export const CLOSE_FDS_THEN_RUN = 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec bash "$@"';

/** scripts/NAME against this file's broker, without blocking the event loop. */
export function script(name: string, args: string[] = [], timeoutMs = 150_000): Promise<string> {
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

// Set by useTestBroker() once the test file's broker is up.
export let broker: TestBroker | undefined;
export let BROKER = '';
export let admin: Kafka;
export let conn: ReturnType<typeof kafkaConnectionFromEnv>;

export async function withAdmin<T>(fn: (a: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
  const a = admin.admin();
  await a.connect();
  try {
    return await fn(a);
  } finally {
    await a.disconnect();
  }
}

export let topicCounter = 0;
/** A fresh topic with 3 partitions (the broker and its data go when the file ends). */
export async function freshTopic(): Promise<string> {
  topicCounter += 1;
  const topic = `t-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}-${topicCounter}`;
  await withAdmin((a) => a.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true }));
  return topic;
}

/** High watermark of every partition, by partition number. */
export async function endOffsets(topic: string): Promise<number[]> {
  const offsets = await withAdmin((a) => a.fetchTopicOffsets(topic));
  const ends: number[] = [];
  for (const o of offsets) ends[o.partition] = Number(o.high);
  return ends;
}

export function storedNext(db: Db, topic: string): number[] {
  const rows = db.prepare('SELECT source, position FROM source_positions WHERE source GLOB ?').all(`kafka:${topic}:*`) as Array<{ source: string; position: number }>;
  const next: number[] = [];
  for (const r of rows) next[Number(r.source.split(':').pop())] = r.position;
  return next;
}

/** Every record up to the high watermarks is applied (positions are written with the facts). */
export function caughtUp(db: Db, topic: string, ends: number[]): boolean {
  const next = storedNext(db, topic);
  return ends.every((end, p) => end === 0 || (next[p] ?? 0) >= end);
}

/**
 * Caught up, and idle long enough that the consumer wrote the weeks and months waiting in its
 * memory (src/ingest/kafka/write-pipeline.ts SETTLE_WHEN_IDLE_MS): the digest is then a replay's.
 */
export function settled(db: Db, topic: string, ends: number[]): boolean {
  return caughtUp(db, topic, ends) && db.prepare('SELECT count(*) FROM rollup_pending').pluck().get() === 0;
}

export function ingestConfig(topic: string, extra: Record<string, string> = {}): KafkaIngestConfig {
  return kafkaIngestConfigFromEnv({
    KAFKA_BROKERS: BROKER, KAFKA_TOPICS: topic, KAFKA_GROUP_ID: `g-${topic}`, KAFKA_DLQ_TOPIC: `${topic}.dlq`,
    KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_LOG_LEVEL: 'warn', ...extra,
  });
}

export interface Consumer {
  db: Db;
  file: string;
  ingest: KafkaIngest;
}

/** A database of its own and an ingest into it; both closed when the test ends. */
export async function consume(tt: Test, topic: string, file?: string): Promise<Consumer> {
  const dbFile = file ?? path.join(tmpDir('kafka-'), 'k.db');
  const db = openDb(dbFile);
  const ingest = await startKafkaIngest(db, new Projector(db), ingestConfig(topic), { lagPollMs: 500, restartDelayMs: 1000, log: testLog });
  tt.teardown(async () => {
    await ingest.stop();
    if (db.open) db.close();
  });
  return { db, file: dbFile, ingest };
}

export async function replayDigest(file: string): Promise<string> {
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
export async function generatedStream(t: Test, prefix: string, accounts: number, projectsPerAccount: number): Promise<{ dir: string; stream: string; total: number; clean: string }> {
  const dir = tmpDir(prefix);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const stream = path.join(dir, 'stream.ndjson');
  const generated = [...generateWorld({ ...DEMO_OPTIONS, accounts, projectsPerAccount, corrections: 0.02 })];
  fs.writeFileSync(stream, generated.join('\n') + '\n');
  return { dir, stream, total: generated.length, clean: await replayDigest(stream) };
}

export async function produceMessages(topic: string, messages: OutboundMessage[]): Promise<void> {
  const producer = createKafkaClient(conn, testLog).producer();
  await producer.connect();
  try {
    await producer.send(topic, messages);
  } finally {
    await producer.disconnect();
  }
}

export const lines = (events: Ev[]): string[] => events.map((e) => JSON.stringify(e));

export interface Service {
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
export function startService(tt: Test, dbFile: string, topic: string): Service {
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
export function alive(s: Service): true {
  if (s.child.exitCode !== null || s.child.signalCode !== null) throw new Error(`service exited (${s.child.exitCode ?? s.child.signalCode}):\n${s.output.join('')}`);
  return true;
}

/** Waits (bounded) for the service to exit after SIGTERM; its exit code. */
export async function terminate(s: Service): Promise<number | null> {
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 30_000);
  try {
    return await s.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** The nice value of each thread of process `pid`, by thread id (Linux: /proc/PID/task/TID/stat, field 19). */
export function threadNices(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]));
  }
  return out;
}

export function dbDigest(file: string): { digest: string; deadLetters: unknown } {
  const db = openDb(file, { readonly: true });
  try {
    return { digest: digest(db), deadLetters: db.prepare('SELECT count(*) FROM dead_letters').pluck().get() };
  } finally {
    db.close();
  }
}

/** A broker of the test file's own, started before its first test and closed after its last. */
export function useTestBroker(): void {
  t.before(async () => {
    broker = await testBroker();
    BROKER = broker.brokers;
    admin = new Kafka({ clientId: 'kafka-test', brokers: [BROKER], logLevel: logLevel.NOTHING });
    conn = kafkaConnectionFromEnv({ KAFKA_BROKERS: BROKER, KAFKA_LOG_LEVEL: 'error' });
    t.comment(`broker ${BROKER}`);
  });
  t.teardown(() => broker?.close());
}
