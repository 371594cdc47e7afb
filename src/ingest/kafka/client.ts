// The only module that imports kafkajs. kafkajs has had no release since 2023, so everything else
// talks to the small interfaces of adapters.ts; swapping the client (e.g. for
// @confluentinc/kafka-javascript) means rewriting this file only. No kafkajs type appears in an exported signature.
import { createRequire } from 'node:module';
import net from 'node:net';
import tls from 'node:tls';
import { AssignerProtocol, Kafka, logLevel as KafkaJsLogLevel, Partitioners, type ISocketFactory, type KafkaConfig, type LogEntry, type PartitionAssigner, type SASLOptions } from 'kafkajs';
import type { KafkaConnection, KafkaLogLevel } from './config';
import {
  KafkaUnavailableError,
  type AdminAdapter, type ConsumerAdapter, type ConsumerOptions, type KafkaClient, type KafkaLog, type LogLevelName, type ProducerAdapter,
} from './adapters';

// The interfaces live in adapters.ts; re-exported so that what imports them from here keeps working.
export {
  KafkaUnavailableError, isKafkaSetupError,
  type AdminAdapter, type BatchControl, type ConsumerAdapter, type ConsumerHooks, type ConsumerOptions, type InboundBatch, type InboundMessage,
  type KafkaClient, type KafkaLog, type LogLevelName, type OutboundMessage, type PartitionOffsets, type ProducerAdapter, type StartOffset,
  type TopicPartition,
} from './adapters';

/** The part of kafkajs's internal RequestQueue that the patch below touches. */
interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/**
 * kafkajs 2.2.4 bug (tulios/kafkajs#1704, #1751, unfixed upstream): every connection reschedules its
 * pending-request check with a negative delay even when nothing is pending, i.e. a 1 ms timer loop per
 * connection for ever. It burns CPU, and a loop left behind by a connection that died in a broker
 * outage keeps the process alive after disconnect(). Same logic, minus the empty loop: schedule only
 * when something is pending (at the throttle end, or after kafkajs's 10 ms check interval).
 */
function patchRequestQueue(): void {
  const loaded = createRequire(__filename)('kafkajs/src/network/requestQueue') as { prototype?: Partial<RequestQueueInternals> };
  const proto = loaded.prototype;
  if (typeof proto?.scheduleCheckPendingRequests !== 'function' || typeof proto.checkPendingRequests !== 'function') return;
  proto.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
    if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
    const throttled = this.throttledUntil - Date.now();
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, throttled > 0 ? throttled : 10);
  };
}
patchRequestQueue();

const LEVELS: Record<KafkaLogLevel, KafkaJsLogLevel> = {
  nothing: KafkaJsLogLevel.NOTHING, error: KafkaJsLogLevel.ERROR, warn: KafkaJsLogLevel.WARN,
  info: KafkaJsLogLevel.INFO, debug: KafkaJsLogLevel.DEBUG,
};

function levelName(level: KafkaJsLogLevel): LogLevelName {
  if (level <= KafkaJsLogLevel.ERROR) return 'error';
  if (level === KafkaJsLogLevel.WARN) return 'warn';
  return level === KafkaJsLogLevel.INFO ? 'info' : 'debug';
}

const SEVERITY: Record<KafkaLogLevel, number> = { nothing: 0, error: 1, warn: 2, info: 3, debug: 4 };

/**
 * Entries at `minLevel` or more severe, handed to `write`. During an outage kafkajs repeats the same
 * error on every retry, so an identical entry is passed on at most once per `quietMs`.
 */
export function dedupedKafkaLog(write: KafkaLog, minLevel: KafkaLogLevel = 'warn', quietMs = 30_000): KafkaLog {
  const lastPrinted = new Map<string, number>();
  return (level, message) => {
    if (SEVERITY[level] > SEVERITY[minLevel]) return;
    const now = Date.now();
    const key = `${level} ${message}`;
    if (now - (lastPrinted.get(key) ?? -Infinity) < quietMs) return;
    if (lastPrinted.size > 1000) lastPrinted.clear();
    lastPrinted.set(key, now);
    write(level, message);
  };
}

/** dedupedKafkaLog onto stderr, one `kafka LEVEL: message` line per entry: the produce command's output. */
export function stderrKafkaLog(minLevel: KafkaLogLevel = 'warn', quietMs = 30_000): KafkaLog {
  return dedupedKafkaLog((level, message) => process.stderr.write(`kafka ${level}: ${message}\n`), minLevel, quietMs);
}

/**
 * The broker's answers that kafkajs meets by refreshing its metadata and asking again (its
 * protocol/error.js, `staleMetadata`): a topic being auto-created, a leader being elected. kafkajs's
 * connection logs every error answer at error level all the same, so producing to a new topic
 * printed "kafka error: ... This server does not host this topic-partition" before succeeding.
 * Logged at debug here; one that outlasts the retries reaches the caller as its error.
 */
const RETRIED_ANSWERS = new Set([
  'This server does not host this topic-partition',
  'There is no leader for this topic-partition as we are in the middle of a leadership election',
  'This server is not the leader for that topic-partition',
]);

function logCreator(log: KafkaLog): NonNullable<KafkaConfig['logCreator']> {
  return () => (entry: LogEntry) => {
    const { message, error } = entry.log as { message: string; error?: unknown };
    const cause = typeof error === 'string' && error !== '' && !message.includes(error) ? ` (${error})` : '';
    const retried = entry.namespace === 'Connection' && message.startsWith('Response ') && typeof error === 'string' && RETRIED_ANSWERS.has(error);
    log(retried ? 'debug' : levelName(entry.level), `${entry.namespace ? `[${entry.namespace}] ` : ''}${message}${cause}`);
  };
}

/** Everything but the logger and the socket factory, which each instance gets in trackedKafka(). */
function kafkaJsConfig(conn: KafkaConnection): KafkaConfig {
  const config: KafkaConfig = {
    brokers: conn.brokers,
    clientId: conn.clientId,
    connectionTimeout: conn.connectTimeoutMs,
    authenticationTimeout: conn.connectTimeoutMs,
    requestTimeout: conn.requestTimeoutMs,
    logLevel: LEVELS[conn.logLevel],
    retry: { initialRetryTime: 300, maxRetryTime: 5000, retries: 8 },
  };
  if (conn.tls) {
    const { ca, cert, key } = conn.tls;
    config.ssl = ca || cert ? { ...(ca ? { ca: [ca] } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) } : true;
  }
  if (conn.sasl) config.sasl = { ...conn.sasl } as SASLOptions;
  return config;
}

/** The innermost cause of a kafkajs error, without the "Connection error: " prefix. */
export function describeKafkaError(e: unknown): string {
  let err: unknown = e;
  while (err instanceof Error && err.cause instanceof Error) err = err.cause;
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/^Connection error: /, '').replace(/\s+/g, ' ').trim();
}

/** The topic does not exist (yet): not a connection problem; auto-creation or an operator will fix it. */
export function isUnknownTopicError(e: unknown): boolean {
  for (let err: unknown = e; err instanceof Error; err = err.cause) {
    const type = (err as Error & { type?: unknown }).type;
    if (type === 'UNKNOWN_TOPIC_OR_PARTITION' || err.name === 'KafkaJSTopicMetadataNotLoaded') return true;
  }
  return false;
}

/** Rejects with `onTimeout()` when `promise` takes longer than `ms`. */
export function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

const toNumber = (offset: string): number => Number(offset);

/** A kafkajs instance whose sockets can all be closed: kafkajs can keep one open after disconnect(). */
interface TrackedKafka {
  kafka: Kafka;
  /**
   * Destroys every socket still open and refuses new ones (kafkajs may retry after disconnect). With
   * an error: kafkajs only notices 'error' and 'end', and a connection that missed its socket's end
   * keeps a 100 ms request-timeout interval running for ever.
   */
  closeSockets(): void;
}

/**
 * One kafkajs instance per adapter, with kafkajs's own socket factory plus bookkeeping. Needed because
 * a consumer that lived through a broker restart keeps its group-coordinator connection open after
 * disconnect(), which leaks a socket per restart and keeps a process from exiting.
 */
function trackedKafka(config: KafkaConfig, log: KafkaLog): TrackedKafka {
  const open = new Set<net.Socket>();
  let closed = false;
  // Once stopped, what kafkajs says about the connections being torn down is noise.
  const logUntilClosed: KafkaLog = (level, message) => {
    if (!closed) log(level, message);
  };
  const socketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
    const socket = ssl
      ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...(typeof ssl === 'object' ? ssl : {}) }, onConnect)
      : net.connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (closed) setImmediate(() => socket.destroy(new Error('client stopped')));
    return socket;
  };
  return {
    kafka: new Kafka({ ...config, logCreator: logCreator(logUntilClosed), socketFactory }),
    closeSockets() {
      closed = true;
      for (const socket of open) socket.destroy(new Error('client stopped'));
    },
  };
}

/**
 * A broker with auto.create.topics.enable creates a missing topic on the first metadata request but
 * answers "unknown topic" until it has a leader: retry for a few seconds, then say what is missing.
 */
async function untilTopicsExist(subscribe: () => Promise<void>, topics: string[], waitMs = 15_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await subscribe();
    } catch (e) {
      if (!isUnknownTopicError(e)) throw e;
      if (Date.now() > deadline) {
        throw new KafkaUnavailableError(`topic ${topics.join(', ')} does not exist and was not created (create it, or enable auto.create.topics.enable on the brokers)`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/**
 * Gives the group's members (one, as every replica has a group of its own) the partitions `owns`
 * accepts, in turn: never a partition of another shard, whatever joins the group.
 */
function staticAssigner(owns: (topic: string, partition: number) => boolean): PartitionAssigner {
  const name = 'VisibilityShardAssigner';
  return ({ cluster }) => ({
    name,
    version: 1,
    async assign({ members, topics }) {
      const ids = members.map((m) => m.memberId).sort();
      const assignment = new Map<string, Record<string, number[]>>(ids.map((id) => [id, {}]));
      let turn = 0;
      for (const topic of [...topics].sort()) {
        const partitions = cluster.findTopicPartitionMetadata(topic).map((m) => m.partitionId).filter((p) => owns(topic, p)).sort((a, b) => a - b);
        for (const partition of partitions) {
          const of = assignment.get(ids[turn++ % ids.length]!)!;
          (of[topic] ??= []).push(partition);
        }
      }
      return ids.map((memberId) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: assignment.get(memberId)!, userData: Buffer.alloc(0) }),
      }));
    },
    protocol: ({ topics }) => ({ name, metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }) }),
  });
}

/**
 * Round robin over the partitions, except that the members that say they hold theirs (their
 * userData '1') come first in the turn: with one partition, its holder keeps it through a rebalance.
 */
function stickyAssigner(holds: () => boolean): PartitionAssigner {
  const name = 'VisibilityStickyAssigner';
  return ({ cluster }) => ({
    name,
    version: 1,
    async assign({ members, topics }) {
      const holding = (m: { memberMetadata: Buffer }): boolean => AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.userData.toString() === '1';
      const ids = [...members].sort((a, b) => Number(holding(b)) - Number(holding(a)) || (a.memberId < b.memberId ? -1 : 1)).map((m) => m.memberId);
      const assignment = new Map<string, Record<string, number[]>>(ids.map((id) => [id, {}]));
      let turn = 0;
      for (const topic of [...topics].sort()) {
        for (const partition of cluster.findTopicPartitionMetadata(topic).map((m) => m.partitionId).sort((a, b) => a - b)) {
          const of = assignment.get(ids[turn++ % ids.length]!)!;
          (of[topic] ??= []).push(partition);
        }
      }
      return ids.map((memberId) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: assignment.get(memberId)!, userData: Buffer.alloc(0) }),
      }));
    },
    protocol: ({ topics }) => ({ name, metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.from(holds() ? '1' : '0') }) }),
  });
}

function consumerAdapter({ kafka, closeSockets }: TrackedKafka, opts: ConsumerOptions): ConsumerAdapter {
  let stopping = false;
  const consumer = kafka.consumer({
    ...(opts.owns ? { partitionAssigners: [staticAssigner(opts.owns)] } : {}),
    ...(opts.sticky ? { partitionAssigners: [stickyAssigner(opts.sticky)] } : {}),
    groupId: opts.groupId,
    sessionTimeout: opts.sessionTimeoutMs,
    heartbeatInterval: Math.min(3000, Math.floor(opts.sessionTimeoutMs / 3)),
    allowAutoTopicCreation: true,
    // Up to ~2,800 events of ~1.5 KB a partition per fetch (kafkajs: 1 MB): a catch-up fetches less often.
    maxBytesPerPartition: 4 * 1024 * 1024,
    // How long an idle fetch waits at the broker (kafkajs: 5 s). A stop waits for the fetch in flight,
    // so an idle consumer took up to 5 s to stop on SIGTERM; records still arrive as soon as produced.
    maxWaitTimeInMs: 1000,
    // Retriable failures (an outage) end in a crash that kafkajs restarts from; see supervisor.ts. Not
    // after stop(): kafkajs can crash while disconnecting and would otherwise start consuming again.
    retry: { initialRetryTime: 300, maxRetryTime: 5000, retries: 8, restartOnFailure: async () => !stopping },
  });
  return {
    async start(topics, hooks) {
      consumer.on(consumer.events.GROUP_JOIN, (event) => {
        const assigned = Object.entries(event.payload.memberAssignment)
          .flatMap(([topic, partitions]) => partitions.map((partition) => ({ topic, partition })));
        for (const s of hooks.startOffsets(assigned)) {
          // '-2' is kafkajs's EARLIEST_OFFSET: resolved against the log start when fetching.
          consumer.seek({ topic: s.topic, partition: s.partition, offset: s.offset === 'earliest' ? '-2' : String(s.offset) });
        }
      });
      consumer.on(consumer.events.CRASH, (event) => hooks.onCrash(event.payload.error, event.payload.restart));
      consumer.on(consumer.events.FETCH, () => hooks.onFetch());
      await consumer.connect();
      // fromBeginning: a partition with no committed group offset (and no stored one) starts at the log start.
      await untilTopicsExist(() => consumer.subscribe({ topics, fromBeginning: true }), topics);
      const running = consumer.run({
        autoCommit: true,
        autoCommitInterval: 1000,
        eachBatchAutoResolve: false,
        // The batches of one fetch are handed over together, to one queue and one writer (write-pipeline.ts).
        partitionsConsumedConcurrently: 3,
        eachBatch: async (payload) => {
          const { batch } = payload;
          await hooks.eachBatch({
            topic: batch.topic,
            partition: batch.partition,
            highWatermark: toNumber(batch.highWatermark),
            messages: batch.messages.map((m) => ({ offset: toNumber(m.offset), key: m.key ?? null, value: m.value ?? null })),
          }, {
            resolveOffset: (offset) => payload.resolveOffset(String(offset)),
            heartbeat: () => payload.heartbeat(),
            isRunning: () => payload.isRunning(),
            isStale: () => payload.isStale(),
          });
        },
      });
      // run() resolves after the first group join, which can wait for a dead member's session to
      // expire: consume in the background and report failures through onCrash.
      running.catch((e: unknown) => hooks.onCrash(e instanceof Error ? e : new Error(String(e)), false));
    },
    async stop() {
      stopping = true;
      try {
        await consumer.disconnect();
      } finally {
        closeSockets();
      }
    },
  };
}

function producerAdapter({ kafka, closeSockets }: TrackedKafka, retries: number): ProducerAdapter {
  // Not the kafkajs idempotent producer (documented as experimental): one request in flight keeps
  // per-partition order through retries, and a duplicate from a retried send changes nothing
  // downstream because the projector is idempotent.
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: true,
    maxInFlightRequests: 1,
    idempotent: false,
    retry: { initialRetryTime: 300, maxRetryTime: 5000, retries },
  });
  return {
    connect: () => producer.connect(),
    async send(topic, messages) {
      await producer.send({
        topic,
        acks: -1,
        messages: messages.map((m) => ({
          key: m.key,
          value: m.value,
          ...(m.headers ? { headers: m.headers } : {}),
        })),
      });
    },
    disconnect: () => producer.disconnect().finally(closeSockets),
  };
}

function adminAdapter({ kafka, closeSockets }: TrackedKafka): AdminAdapter {
  const admin = kafka.admin();
  return {
    connect: () => admin.connect(),
    async fetchTopicOffsets(topic) {
      const offsets = await admin.fetchTopicOffsets(topic);
      return offsets.map((o) => ({ partition: o.partition, low: toNumber(o.low), high: toNumber(o.high) }))
        .sort((a, b) => a.partition - b.partition);
    },
    disconnect: () => admin.disconnect().finally(closeSockets),
  };
}

export function createKafkaClient(conn: KafkaConnection, log: KafkaLog = stderrKafkaLog(conn.logLevel)): KafkaClient {
  // Connection retries are set per kafkajs instance, not per client: the consumer and producer ride
  // out outages; admin probes must fail fast and leave the reporting to us.
  const resilient = kafkaJsConfig(conn);
  const quick: KafkaConfig = {
    ...resilient,
    logLevel: KafkaJsLogLevel.NOTHING,
    // One attempt per bootstrap broker: kafkajs moves to another seed broker after each failure.
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: conn.brokers.length },
  };
  const where = conn.brokers.join(',');
  return {
    brokers: conn.brokers,
    consumer: (opts) => consumerAdapter(trackedKafka(resilient, log), opts),
    producer: (opts = {}) => producerAdapter(trackedKafka(resilient, log), opts.retries ?? 8),
    admin: () => adminAdapter(trackedKafka(quick, log)),
    async checkReachable() {
      const probe = adminAdapter(trackedKafka(quick, log));
      const budget = conn.connectTimeoutMs * (conn.brokers.length + 1) + 3000;
      try {
        await withDeadline(probe.connect(), budget,
          () => new KafkaUnavailableError(`cannot reach Kafka at ${where}: no answer within ${(budget / 1000).toFixed(1)} s`));
      } catch (e) {
        if (e instanceof KafkaUnavailableError) throw e;
        throw new KafkaUnavailableError(`cannot reach Kafka at ${where}: ${describeKafkaError(e)}`);
      } finally {
        await probe.disconnect().catch(() => undefined);
      }
    },
  };
}
