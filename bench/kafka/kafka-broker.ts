// kafkajs helpers of `npm run bench:kafka` (and bench:shards): the broker, the topic, the producer,
// the consume-only baseline, the high watermarks (what was produced) and the clean-up of the run's
// topic and consumer groups.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { Kafka, logLevel, Partitioners, type Admin, type Message, type Producer } from 'kafkajs';
import { eventKey } from '../../src/ingest/kafka';

export function kafkaOf(brokers: string, clientId: string): Kafka {
  return new Kafka({ clientId, brokers: brokers.split(','), logLevel: logLevel.NOTHING });
}

/** The Java client's partitioner (murmur2 of the key), as upstream producers use: a project stays in one partition. */
export function producerOf(kafka: Kafka): Producer {
  return kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false, retry: { retries: 0 } });
}

// The broker refuses a record batch over message.max.bytes (1 MiB): a send stays well below it.
const MAX_SEND_BYTES = 512 * 1024;
const MAX_SEND_RECORDS = 2000;

/** Cuts messages into sends the broker accepts (at most 512 KiB of values, 2,000 records). */
function sends(messages: Message[]): Message[][] {
  const out: Message[][] = [];
  let batch: Message[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = (m.value as string).length;
    if (batch.length > 0 && (bytes + size > MAX_SEND_BYTES || batch.length >= MAX_SEND_RECORDS)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(m);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/**
 * Sends keyed records with up to `inFlight` sends (acks=all) outstanding. One producer writes its
 * requests to a partition's leader on one connection, which the broker handles in order, and this
 * producer does not retry: each key keeps its order while encoding overlaps the round trips.
 */
export class Pipeline {
  private readonly pending = new Set<Promise<void>>();
  private failure: unknown = null;

  constructor(private readonly producer: Producer, private readonly topic: string, private readonly inFlight = 4) {}

  async send(messages: Message[]): Promise<void> {
    for (const batch of sends(messages)) {
      while (this.pending.size >= this.inFlight) await Promise.race(this.pending);
      if (this.failure) throw this.failure;
      const p: Promise<void> = this.producer.send({ topic: this.topic, acks: -1, messages: batch }).then(
        () => void this.pending.delete(p),
        (e: unknown) => {
          this.failure ??= e;
          this.pending.delete(p);
        },
      );
      this.pending.add(p);
    }
  }

  async flush(): Promise<void> {
    await Promise.all(this.pending);
    if (this.failure) throw this.failure;
  }
}

/** Sends keyed records and waits for every acknowledgement. */
export async function sendAll(producer: Producer, topic: string, messages: Message[]): Promise<void> {
  const pipeline = new Pipeline(producer, topic, 1);
  await pipeline.send(messages);
  await pipeline.flush();
}

/** The log file to the topic, keyed as `visibility-api produce` keys it; returns the records sent. */
export async function produceFile(kafka: Kafka, topic: string, file: string): Promise<number> {
  const producer = producerOf(kafka);
  await producer.connect();
  const pipeline = new Pipeline(producer, topic);
  let sent = 0;
  let pending: Message[] = [];
  try {
    for await (const line of readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      pending.push({ key: eventKey(line), value: line });
      if (pending.length >= 2000) {
        await pipeline.send(pending);
        sent += pending.length;
        pending = [];
      }
    }
    await pipeline.send(pending);
    sent += pending.length;
    await pipeline.flush();
  } finally {
    await producer.disconnect();
  }
  return sent;
}

export async function createTopic(admin: Admin, topic: string, partitions: number): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
}

/** Records produced so far: the sum of the high watermarks (the topic is fresh, so it starts at 0). */
export async function producedCount(admin: Admin, topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((s, o) => s + Number(o.high), 0);
}

export interface ConsumeOnly { events: number; wholeSeconds: number; steadySeconds: number }

/** The baseline: a kafkajs consumer reading the whole topic and doing nothing with the records. */
export async function consumeOnly(kafka: Kafka, topic: string, groupId: string, total: number, timeoutMs: number): Promise<ConsumeOnly> {
  const consumer = kafka.consumer({ groupId });
  const started = performance.now();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    let first = 0;
    const done = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consume-only: ${seen} of ${total} records after ${timeoutMs / 1000} s`)), timeoutMs);
      void consumer.run({
        eachBatch: async ({ batch }) => {
          if (first === 0) first = performance.now();
          seen += batch.messages.length;
          if (seen >= total) {
            clearTimeout(timer);
            resolve(performance.now());
          }
        },
      });
    });
    const end = await done;
    return { events: seen, wholeSeconds: (end - started) / 1000, steadySeconds: (end - first) / 1000 };
  } finally {
    await consumer.disconnect();
  }
}

/** Deletes the run's consumer groups, then its topics; bounded, and never fails the run. */
export async function cleanUp(admin: Admin, topics: string[], groups: string[], log: (s: string) => void): Promise<void> {
  const step = async (what: string, work: () => Promise<unknown>): Promise<void> => {
    try {
      await Promise.race([work(), new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 15 s')), 15_000))]);
    } catch (e) {
      log(`clean-up: could not delete ${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const existingGroups = new Set((await admin.listGroups().catch(() => ({ groups: [] }))).groups.map((g) => g.groupId));
  const mine = groups.filter((g) => existingGroups.has(g));
  if (mine.length > 0) await step(`groups ${mine.join(', ')}`, () => admin.deleteGroups(mine));
  const existing = new Set(await admin.listTopics().catch(() => [] as string[]));
  const topicsToGo = topics.filter((t) => existing.has(t));
  if (topicsToGo.length > 0) await step(`topics ${topicsToGo.join(', ')}`, () => admin.deleteTopics({ topics: topicsToGo, timeout: 10_000 }));
}

export interface BenchBroker {
  brokers: string;
  /** Whether this run started it (then stop() stops it). */
  started: boolean;
  stop(): Promise<void>;
}

const DEV_BROKER = '127.0.0.1:9092';

const answers = (hostPort: string): Promise<boolean> => new Promise((resolve) => {
  const [host, port] = [hostPort.slice(0, hostPort.lastIndexOf(':')), Number(hostPort.slice(hostPort.lastIndexOf(':') + 1))];
  const socket = net.connect({ host, port, timeout: 2000 });
  const done = (ok: boolean): void => {
    socket.destroy();
    resolve(ok);
  };
  socket.once('connect', () => done(true)).once('error', () => done(false)).once('timeout', () => done(false));
});

function script(root: string, name: string, env: NodeJS.ProcessEnv, log: (s: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path.join(root, 'scripts', name)], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('close', (code) => {
      for (const line of output.trim().split('\n').slice(-2)) if (line) log(`  ${line}`);
      if (code === 0) resolve();
      else reject(new Error(`scripts/${name} exited ${code}:\n${output.slice(-2000)}`));
    });
  });
}

/**
 * The broker of a run: KAFKA_BROKERS when set; else the development broker at 127.0.0.1:9092
 * (`npm run kafka:start`), started with scripts/kafka-start.sh when it does not answer, and then
 * stopped by stop(); a broker that was already up is left running. KAFKA_OWNER_PID: the script's
 * watchdog kills a broker this run started if the run dies without stopping it.
 */
export async function benchBroker(root: string, log: (s: string) => void): Promise<BenchBroker> {
  const given = process.env.KAFKA_BROKERS;
  if (given !== undefined && given !== '') return { brokers: given, started: false, stop: async () => undefined };
  if (await answers(DEV_BROKER)) {
    log(`broker: ${DEV_BROKER} is up (left running)`);
    return { brokers: DEV_BROKER, started: false, stop: async () => undefined };
  }
  log(`broker: starting the development broker on ${DEV_BROKER} (scripts/kafka-start.sh; stopped at the end)`);
  const env = { ...process.env, KAFKA_OWNER_PID: String(process.pid) };
  await script(root, 'kafka-start.sh', env, log);
  let stopping: Promise<void> | null = null;
  return { brokers: DEV_BROKER, started: true, stop: () => (stopping ??= script(root, 'kafka-stop.sh', env, log)) };
}
