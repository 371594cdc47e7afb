// The service as a library call: start(options) -> { close() }. It wires the database, the build
// threads, the Kafka thread, the hot path, Koa and the ops port; the CLI only parses flags.
import fs from 'node:fs';
import http from 'node:http';
import { BootstrapAborted, bootstrapFrom, BootstrapError } from './ingest';
import type { KafkaIngest, KafkaIngestConfig } from './ingest/kafka';
import { accessLog, accountFigures, Throttled, createMetrics, createOpsServer, opsAccessProblem, type IngestFigures, type Metrics, type Readiness, type SnapshotLimits } from './ops';
import { createLogger, type Logger } from './lib/log';
// The serving modules (Koa, the MCP SDK, ...: ~0.3 s) are loaded by start() once the Kafka thread is spawned.
import type { AppOptions, Service } from './serve';
import { BASE_PATH } from './serve/request/base-path';
import { DEFAULT_MAX_STALENESS_MS } from './readmodels/methodology';
import { StartError } from './start-error';
import type { DelivererOptions } from './deliver';
import { checkpoint, commitCounter, DbOpenError, heldShard, isCorruption, openDb, verifyDb, type Db } from './store';
import { shardName } from './lib/partition';
import { ThreadHeaps } from './lib/thread-heap';

export { BASE_PATH, StartError };

/** start() was stopped by its `signal` before it served (a bootstrap under way): nothing is left running or half-written. */
export class StartAborted extends Error {}

export interface StartOptions {
  /** The SQLite file to serve. Without Kafka it must exist and be a database; with Kafka it is created when missing. */
  dbFile: string;
  port?: number;
  host?: string;
  opsPort?: number;
  opsHost?: string;
  windowDays?: number;
  cacheMaxBytes?: number;
  rateLimit?: number;
  /** Builds one account may have queued or running (AppOptions.maxBuildsPerAccount). */
  maxBuildsPerAccount?: number;
  buildThreads?: number;
  /** How far behind the data a cached body may be served, in ms (AppOptions.maxStalenessMs; default 1000, 0: never). */
  maxStalenessMs?: number;
  /** Consume these topics into dbFile (in a thread of its own) while serving. */
  kafka?: KafkaIngestConfig;
  /** How long close() lets in-flight requests finish before their connections are cut (default 5 s). */
  drainMs?: number;
  /**
   * A peer's ops URL: when dbFile does not exist yet, it is first downloaded from the peer's GET
   * /snapshot (checked: length, SHA-256, schema version, quick_check), and the Kafka consumer then
   * resumes from the offsets stored in it. /readyz answers 503 "bootstrapping" meanwhile.
   */
  bootstrapFrom?: string;
  /**
   * The ops token: when set, every ops path but /livez, /healthz, /readyz and /metrics needs
   * `Authorization: Bearer TOKEN`, and a bootstrap sends it to the peer. Required (StartError
   * without it) when opsHost is not a loopback address. At least 16 characters.
   */
  opsToken?: string;
  /** A bootstrap gives up when the peer sends under 64 KiB/s over a window this long (ms; default 30 s): a stall or a trickle. */
  bootstrapIdleMs?: number;
  /** ... or when the whole bootstrap takes longer than this (ms; default 2 h). */
  bootstrapTimeoutMs?: number;
  /** Stops start() while it bootstraps: the download is removed and start() rejects with StartAborted. */
  signal?: AbortSignal;
  /** Readers, freshness and deadlines of the ops port's /snapshot (src/ops/snapshot-route.ts). */
  snapshotLimits?: Partial<SnapshotLimits>;
  /** With Kafka: /readyz is 503 while the known lag is above this many events (0: never for lag). Default 10,000. */
  maxReadyLag?: number;
  /** What signs page cursors (serve --cursor-secret); absent, the database's own key. See AppOptions.cursorSecret. */
  cursorSecret?: string;
  /** Serve the reference dashboard at / with these keys to pick from (serve --demo). */
  dashboard?: AppOptions['dashboard'];
  /** Where every log line goes, the access lines included (default: JSON at info on stdout). */
  logger?: Logger;
  /**
   * Pushed signals (src/deliver): without Kafka the service delivers; with Kafka the replica of the
   * shard that holds partition 0 of `topic` in consumer group `group` (default
   * visibility-webhooks-SHARD) does. Absent: no deliverer (a library caller's default).
   */
  webhooks?: Omit<DelivererOptions, 'dbFile' | 'logger' | 'ready' | 'leads'> & { group?: string; topic?: string };
  /** At info, one access line per this many cache hits of the hot path (default 100; 1 = all). See src/ops/access-log.ts. */
  logHitSample?: number;
}

export interface Running {
  /** http://HOST:PORT/v1/public, with 127.0.0.1 for a wildcard host: a URL to click, not what is bound. */
  url: string;
  port: number;
  /** What the API listens on: HOST:PORT as bound (0.0.0.0:8080 is every interface). */
  bind: string;
  opsUrl: string;
  opsPort: number;
  opsBind: string;
  service: Service;
  /** Graceful stop: not ready, stop accepting, drain, stop ingest, end threads, checkpoint, close. Idempotent. */
  close(): Promise<void>;
}


/** Everything start() opened, released in reverse on close or on a failed start. */
type Cleanup = Array<() => void | Promise<void>>;

async function unwind(cleanup: Cleanup, logger: Logger): Promise<void> {
  for (const step of cleanup.reverse()) {
    try {
      await step();
    } catch (err) {
      logger.error({ err }, 'while closing');
    }
  }
  cleanup.length = 0;
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (e: NodeJS.ErrnoException): void => reject(new StartError(`cannot listen on ${host}:${port}: ${e.code ?? e.message}`));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

function closeServer(server: http.Server, drainMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    // Idle keep-alive connections are closed at once, busy ones after their response (the handler
    // sends Connection: close while draining); whatever is still open at the deadline is cut.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => server.closeAllConnections(), drainMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

function openServedDb(o: StartOptions): Db {
  try {
    const db = openDb(o.dbFile, { mustExist: !o.kafka });
    verifyDb(db, o.dbFile);
    return db;
  } catch (e) {
    if (e instanceof DbOpenError) throw new StartError(e.message);
    throw e;
  }
}

interface KafkaWiring {
  ingest: KafkaIngest;
  /** A read model is loaded: false until the first data arrives, then true for good. */
  loaded: () => boolean;
  readiness: () => Readiness;
  figures: () => IngestFigures;
}

/** Starts consuming into `db` in a thread (kafkajs is loaded only when Kafka is on). */
async function startKafka(db: Db, config: KafkaIngestConfig, logger: Logger, maxReadyLag: number): Promise<KafkaWiring> {
  const kafka = await import('./ingest/kafka/index.js');
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

export const DEFAULT_MAX_READY_LAG = 10_000;
export { DEFAULT_MAX_STALENESS_MS };

/**
 * Downloads the peer's snapshot into o.dbFile while the ops port answers /livez 200 and /readyz 503
 * (a balancer sees a live instance that must not get traffic yet; the API port is not open).
 */
async function bootstrap(o: StartOptions, peer: string, logger: Logger): Promise<void> {
  if (o.signal?.aborted) throw new StartAborted('stopped before the bootstrap began');
  const reason = `bootstrapping: downloading a snapshot from ${peer}`;
  const ops = http.createServer((req, res) => {
    const live = req.url === '/livez' || req.url === '/healthz';
    res.writeHead(live ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(live ? { status: 'ok' } : { status: 'not ready', ready: false, reasons: [reason] }) + '\n');
  });
  await listen(ops, o.opsPort ?? 9464, o.opsHost ?? '127.0.0.1');
  logger.info({ peer }, reason);
  try {
    const b = await bootstrapFrom(peer, o.dbFile, { token: o.opsToken, signal: o.signal, idleMs: o.bootstrapIdleMs, timeoutMs: o.bootstrapTimeoutMs, shard: o.kafka?.shard });
    const from = b.url === new URL('/snapshot', peer).href ? b.url : `${b.url} (redirected from ${peer})`;
    logger.info({ peer, url: b.url, bytes: b.bytes, seconds: b.seconds, schema_version: b.schemaVersion },
      `bootstrapped ${o.dbFile} from ${from}: ${(b.bytes / 1024 / 1024).toFixed(1)} MiB in ${b.seconds.toFixed(1)} s`);
  } catch (e) {
    if (e instanceof BootstrapAborted) throw new StartAborted(e.message);
    if (e instanceof BootstrapError) throw new StartError(e.message);
    throw e;
  } finally {
    await closeServer(ops, 0);
  }
}

/**
 * Starts serving. Rejects with StartError (nothing left running) when the database is unusable, a
 * port is taken or Kafka cannot be reached. The returned close() is the graceful stop that
 * SIGTERM/SIGINT trigger in the CLI.
 */
export async function start(o: StartOptions): Promise<Running> {
  const logger = o.logger ?? createLogger();
  const cleanup: Cleanup = [];
  const opsProblem = opsAccessProblem(o.opsHost ?? '127.0.0.1', o.opsToken);
  if (opsProblem !== null) throw new StartError(opsProblem);
  try {
    if (o.bootstrapFrom !== undefined && !fs.existsSync(o.dbFile)) await bootstrap(o, o.bootstrapFrom, logger);
    const db = openServedDb(o);
    cleanup.push(() => {
      // A clean stop leaves no WAL to replay: the next start (or a copied file) is complete on its own.
      checkpoint(db);
      db.close();
    });
    const kafka = o.kafka ? await startKafka(db, o.kafka, logger, o.maxReadyLag ?? DEFAULT_MAX_READY_LAG) : null;
    if (kafka) {
      cleanup.push(() => kafka.ingest.stop());
      logger.info(`kafka: consuming ${o.kafka!.topics.join(',')} from ${o.kafka!.brokers.join(',')} as group ${o.kafka!.groupId}` +
        `${o.kafka!.catalogTopic ? `, the catalog from ${o.kafka!.catalogTopic}` : ''}${o.kafka!.dlqTopic ? `, dead letters to ${o.kafka!.dlqTopic}` : ''}`);
    }
    // Written by the consumer's start (or brought by a snapshot): what this process may answer.
    const shard = heldShard(db);
    let misrouted = 0;

    let draining = false;
    let corrupt: string | null = null;
    // Without Kafka the file was checked at open; with it, ready once the first data has arrived.
    const isLoaded = kafka ? kafka.loaded : (): boolean => true;
    let observeLatency: Metrics['observeRequest'] = () => {};
    const access = accessLog(logger, { hitSample: o.logHitSample });
    cleanup.push(() => access.flush()); // runs after the API has drained: the lines of its last requests included
    // Loaded now, while the Kafka thread (started above) boots on the other core. A require, not
    // import(): the test runner's TypeScript loader gives import() of a CommonJS barrel no named exports.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createHttpServer, createService } = require('./serve') as typeof import('./serve');
    const throttled = new Throttled();
    const service = createService({
      db, windowDays: o.windowDays, cacheMaxBytes: o.cacheMaxBytes, rateLimit: o.rateLimit, maxBuildsPerAccount: o.maxBuildsPerAccount, buildThreads: o.buildThreads,
      maxStalenessMs: o.maxStalenessMs, dashboard: o.dashboard, logger, cursorSecret: o.cursorSecret, shard,
      isReady: isLoaded, isDraining: () => draining,
      onResponse: (s) => {
        observeLatency(s.route, s.status, s.seconds);
        throttled.observe(s.status, s.accountId);
        if (s.reason !== undefined) misrouted += 1; // the only reason given today: a project of another shard
        access.observe(s);
      },
      onFailure: (err) => {
        // A corrupt file fails every read from now on: say so on /readyz so the balancer stops sending traffic here.
        if (isCorruption(err)) corrupt ??= `database file is corrupt: ${o.dbFile} (${(err as Error).message})`;
      },
    });
    cleanup.push(() => service.close());
    const threadHeaps = new ThreadHeaps();
    cleanup.push(() => threadHeaps.close());
    const shardFigures = shard === null ? undefined : { name: shardName(shard), partitions: shard.partitions, misrouted: () => misrouted };
    const accounts = accountFigures(service.builder, service.cache, throttled);
    const metrics = createMetrics(service.cache, kafka ? kafka.figures : undefined, threadHeaps, shardFigures, accounts);
    observeLatency = metrics.observeRequest;
    if (o.webhooks) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { Deliverer, KafkaElection, LazyElection, leaderGroup, DEFAULT_LEADER_TOPIC } = require('./deliver') as typeof import('./deliver');
      const { group, topic, ...settings } = o.webhooks;
      const kafkaConfig = o.kafka;
      // Replicas of a shard hold the same data: the one the group gives the partition delivers. Joined
      // once a subscription exists (a service without any never joins).
      const election = kafkaConfig ? new LazyElection(() => new KafkaElection(kafkaConfig, group ?? leaderGroup(shard === null ? null : shardName(shard)),
        topic ?? DEFAULT_LEADER_TOPIC, kafkaConfig.sessionTimeoutMs, logger), logger) : null;
      // Planning waits for a consumer to catch up: a day tested on half its runs would not be tested again.
      const deliverer: InstanceType<typeof Deliverer> = new Deliverer({
        ...settings, dbFile: o.dbFile, logger, ready: () => !draining && (kafka ? kafka.readiness().ready : true),
        ...(election ? { leads: () => election.leads(() => deliverer.hasSubscriptions()) } : {}),
      }).start();
      if (election) cleanup.push(() => election.stop());
      deliverer.register(metrics.registry);
      cleanup.push(() => deliverer.stop());
    }

    const readiness = (): Readiness => {
      const base: Readiness = kafka ? kafka.readiness() : { ready: true, reasons: [] };
      const reasons = [...(draining ? ['shutting down'] : []), ...(corrupt ? [corrupt] : []), ...base.reasons];
      const ready = base.ready && !draining && corrupt === null;
      return {
        ...base, ready, reasons, ...(ready ? {} : { status: 'not ready' }),
        // What a router must agree with: this process answers only the projects of these partitions.
        ...(shard === null ? {} : { shard: { shard: shardName(shard), k: shard.k, n: shard.n, partitions: shard.partitions, catalog_topic: o.kafka?.catalogTopic ?? null } }),
      };
    };
    const ops = createOpsServer({
      cache: service.cache, readiness, metrics: metrics.render, memoBytes: service.hotMemoBytes, accounts, dbFile: o.dbFile,
      token: o.opsToken, snapshotLimits: o.snapshotLimits, logger,
    });
    const api = createHttpServer(service);
    const drainMs = o.drainMs ?? 5000;
    const host = o.host ?? '0.0.0.0';
    const opsHost = o.opsHost ?? '127.0.0.1';
    cleanup.push(() => closeServer(ops, 1000));
    const opsPort = await listen(ops, o.opsPort ?? 9464, opsHost);
    cleanup.push(() => closeServer(api, drainMs));
    const port = await listen(api, o.port ?? 8080, host);
    const shown = (h: string): string => (h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h);
    const bound = (h: string, p: number): string => `${h.includes(':') ? `[${h}]` : h}:${p}`;

    let closing: Promise<void> | null = null;
    return {
      url: `http://${shown(host)}:${port}${BASE_PATH}`, port, bind: bound(host, port),
      opsUrl: `http://${shown(opsHost)}:${opsPort}`, opsPort, opsBind: bound(opsHost, opsPort),
      service,
      close: () => (closing ??= (async () => {
        draining = true; // /readyz says not ready; every answer from now on says Connection: close
        void kafka?.ingest.stop(); // commits and stops while the API drains (its cleanup step awaits the same stop)
        await unwind(cleanup, logger);
      })()),
    };
  } catch (e) {
    await unwind(cleanup, logger);
    throw e;
  }
}
