import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_MAX_READY_LAG, DEFAULT_MAX_STALENESS_MS, start, StartAborted, type Running, type StartOptions } from '../index';
import { DEFAULT_HIT_SAMPLE, opsAccessProblem } from '../ops';
import { DEFAULT_BOOTSTRAP_IDLE_MS, DEFAULT_BOOTSTRAP_TIMEOUT_MS, replayFiles } from '../ingest';
import type { KafkaIngestConfig } from '../ingest/kafka';
import { flushLogger, type Logger } from '../lib/log';
import { packageRoot } from '../lib/root';
import { defaultBuildThreads } from '../lib/cores';
import { openDb, Projector, removeFiles } from '../store';
import { KAFKA_DEFAULTS } from '../ingest/kafka/config';
import { boolFlag, flagOrigin, intFlag, LOG_SETTINGS, loggerFromEnv, requireString, stringFlag, UsageError, type Command, type FlagTable, type Parsed as ParsedOf } from './flags';
import { onStopSignal, type StopSignal } from './stop-signals';
import { cursorSecretProblem } from '../serve/request/cursor-secret';
import { DEFAULT_RETRY_BASE_MS, DEFAULT_RETRY_FOR_MS } from '../deliver/deliverer';
import { DEFAULT_GRACE_MS } from '../deliver/plan';
import { DEFAULT_LEADER_TOPIC } from '../deliver/election';
import { DEFAULT_RATE_LIMIT } from '../serve/http/ratelimit';
import { MAX_BUILDS_PER_ACCOUNT } from '../serve/bodies/builders';

export const DEMO_EVENTS = 'fixtures/demo/events.ndjson.gz';
const DEMO_KEYS = 'fixtures/demo/keys.json';

const FLAGS = {
  db: { type: 'string', value: 'FILE', env: 'VISIBILITY_DB', shows: 'required unless --demo', help: 'the SQLite database to serve (an older schema is migrated in place first; with Kafka a missing file is created)' },
  demo: { type: 'boolean', help: `replay ${DEMO_EVENTS} into a fresh database first (at --db, else a temporary one removed at the stop)` },
  port: { type: 'int', value: 'N', env: 'PORT', default: 8080, min: 0, max: 65535, help: 'the API port (0: a free one, logged at start)' },
  host: { type: 'string', value: 'H', env: 'HOST', default: '0.0.0.0', help: 'the address the API listens on (0.0.0.0: every interface)' },
  'ops-port': { type: 'int', value: 'N', env: 'OPS_PORT', default: 9464, min: 0, max: 65535, help: 'the ops port: health, metrics, /cache, /snapshot (0: a free one)' },
  'ops-host': { type: 'string', value: 'H', env: 'OPS_HOST', default: '127.0.0.1', help: 'the address the ops port listens on; not loopback needs --ops-token' },
  'ops-token': { type: 'string', value: 'T', env: 'OPS_TOKEN', help: "with it (16+ characters) the ops port's /snapshot and /cache need Authorization: Bearer T" },
  'window-days': { type: 'int', value: 'N', env: 'WINDOW_DAYS', default: 7, min: 1, max: 365, help: 'the days a request covers when it names no start_date' },
  'cache-max-bytes': { type: 'int', value: 'N', env: 'CACHE_MAX_BYTES', default: 256 * 1024 * 1024, min: 0, max: 64 * 1024 ** 3, help: 'the bytes of response bodies the cache keeps' },
  'rate-limit': { type: 'int', value: 'N', env: 'RATE_LIMIT', default: DEFAULT_RATE_LIMIT, min: 0, max: 1_000_000, help: 'requests per second per API key, bursts of twice that; a build or a large answer costs more (0: off)' },
  'max-builds-per-account': { type: 'int', value: 'N', env: 'MAX_BUILDS_PER_ACCOUNT', default: MAX_BUILDS_PER_ACCOUNT, min: 0, max: 100_000, help: 'builds one account may have queued or running; past it a stale body or a 429 (0: no cap)' },
  'build-threads': { type: 'int', value: 'N', env: 'BUILD_THREADS', default: defaultBuildThreads, min: 0, max: 64, shows: `the cores but one, at least 2 (${defaultBuildThreads()} here)`, help: 'worker threads that build response bodies (0: build on the event loop)' },
  'log-hit-sample': { type: 'int', value: 'N', env: 'LOG_HIT_SAMPLE', default: DEFAULT_HIT_SAMPLE, min: 1, max: 1_000_000, help: 'at info, one access line per N cache hits of the hot path (1: every hit)' },
  'max-staleness': { type: 'int', value: 'MS', env: 'MAX_STALENESS', default: DEFAULT_MAX_STALENESS_MS, min: 0, max: 3_600_000, help: 'ms a cached body may be served behind the newest data while a newer one is built (0: only current bodies)' },
  'cursor-secret': { type: 'string', value: 'S', env: 'CURSOR_SECRET', shows: "the database's own", help: 'the key that signs page cursors (32+ characters): the same on replicas that each build their own database' },
  'bootstrap-from': { type: 'string', value: 'OPS_URL', env: 'BOOTSTRAP_FROM', help: "a peer's ops URL: when --db does not exist, start from the peer's snapshot" },
  'bootstrap-timeout': { type: 'int', value: 'S', env: 'BOOTSTRAP_TIMEOUT', default: DEFAULT_BOOTSTRAP_TIMEOUT_MS / 1000, min: 1, max: 7 * 24 * 3600, help: 'seconds a bootstrap may take in all' },
  'bootstrap-idle-timeout': { type: 'int', value: 'S', env: 'BOOTSTRAP_IDLE_TIMEOUT', default: DEFAULT_BOOTSTRAP_IDLE_MS / 1000, min: 1, max: 24 * 3600, help: 'seconds a bootstrap waits on a peer that sends under 64 KiB/s before it gives up' },
  'kafka-brokers': { type: 'string', value: 'B', env: 'KAFKA_BROKERS', envReadByOwner: true, help: 'host:port,...: consume Kafka into the database it serves (off without it)' },
  'kafka-topics': { type: 'string', value: 'T', env: 'KAFKA_TOPICS', envReadByOwner: true, shows: KAFKA_DEFAULTS.topics, help: 'the topics to consume, comma-separated' },
  'kafka-group-id': { type: 'string', value: 'G', env: 'KAFKA_GROUP_ID', envReadByOwner: true, shows: KAFKA_DEFAULTS.groupId, help: "the consumer group (its offsets are kept in the database, not the group's)" },
  'kafka-catalog-topic': { type: 'string', value: 'T', env: 'KAFKA_CATALOG_TOPIC', envReadByOwner: true, help: 'the topic of account-wide facts (accounts, keys, engines, projects), consumed whole; a shard needs it' },
  shard: { type: 'string', value: 'K/N', env: 'SHARD', envReadByOwner: true, shows: 'every partition', help: 'with Kafka: hold only the projects of partitions p with p % N = K of the topics (docs/scale-out.md)' },
  'webhooks-allow-loopback': { type: 'boolean', env: 'WEBHOOKS_LOOPBACK', help: 'webhooks may go to loopback addresses, over http too (tests and development only; private addresses stay refused)' },
  'webhooks-group': { type: 'string', value: 'G', env: 'WEBHOOKS_GROUP', shows: 'visibility-webhooks-SHARD', help: "with Kafka: the consumer group of the shard's replicas in which the holder of --webhooks-topic's partition 0 delivers" },
  'webhooks-topic': { type: 'string', value: 'T', env: 'WEBHOOKS_TOPIC', default: DEFAULT_LEADER_TOPIC, help: 'with Kafka: the topic (one partition) the replicas of a shard hold in turn to pick their deliverer' },
  'webhooks-grace': { type: 'int', value: 'S', env: 'WEBHOOKS_GRACE', default: DEFAULT_GRACE_MS / 1000, min: 0, max: 7 * 86400, help: "seconds after a UTC day closes before its signals are tested (late runs' time)" },
  'webhooks-retry-base': { type: 'int', value: 'MS', env: 'WEBHOOKS_RETRY_BASE', default: DEFAULT_RETRY_BASE_MS, min: 1, max: 3_600_000, help: 'the first retry of a failed delivery after about this many ms; each next waits twice as long, with jitter, up to an hour' },
  'webhooks-retry-for': { type: 'int', value: 'S', env: 'WEBHOOKS_RETRY_FOR', default: DEFAULT_RETRY_FOR_MS / 1000, min: 1, max: 7 * 86400, help: 'seconds a delivery is retried before it is dead-lettered' },
  'webhooks-plan-every': { type: 'int', value: 'MS', env: 'WEBHOOKS_PLAN_EVERY', default: 30_000, min: 100, max: 3_600_000, help: 'ms between looks at the subscriptions for closed days and changed data' },
  'max-ready-lag': { type: 'int', value: 'N', env: 'MAX_READY_LAG', default: DEFAULT_MAX_READY_LAG, min: 0, max: Number.MAX_SAFE_INTEGER, help: 'with Kafka, /readyz is 503 while more events than this are unconsumed (0: off)' },
} satisfies FlagTable;

type Parsed = ParsedOf<typeof FLAGS>;

/**
 * --demo: a fresh database filled from the committed demo fixtures, at --db or in a temporary
 * folder. The temporary folder is the service's own: `remove` deletes it once the service has stopped,
 * so that every `npm start` does not leave ~50 MB behind in the system's temporary directory.
 */
async function demoDb(p: Parsed, logger: Logger): Promise<{ file: string; remove: () => void }> {
  const given = stringFlag(p, 'db');
  const dir = given === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'visibility-demo-')) : null;
  const remove = (): void => {
    if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
  };
  const file = given ?? path.join(dir!, 'demo.db');
  removeFiles(file); // a database left at --db, and its WAL: the demo starts fresh
  try {
    const db = openDb(file, { fast: true });
    try {
      const started = Date.now();
      const totals = await replayFiles(db, new Projector(db), [path.join(packageRoot(), DEMO_EVENTS)], { batchSize: 2000 });
      logger.info({ events: totals.lines, db: file }, `demo: replayed ${totals.lines} events in ${((Date.now() - started) / 1000).toFixed(1)} s into ${file}`);
    } finally {
      db.close();
    }
  } catch (e) {
    remove();
    throw e;
  }
  return { file, remove };
}

/** Kafka is on when --kafka-brokers or KAFKA_BROKERS is set; the other settings come from KAFKA_* (docs/kafka.md). */
async function kafkaConfig(p: Parsed): Promise<KafkaIngestConfig | undefined> {
  if (stringFlag(p, 'kafka-brokers') === undefined && (process.env.KAFKA_BROKERS ?? '').trim() === '') {
    // A shard is a set of Kafka partitions: without Kafka there is nothing to cut.
    const shard = stringFlag(p, 'shard') ?? process.env.SHARD;
    if (shard !== undefined && shard.trim() !== '') throw new UsageError('--shard needs Kafka (--kafka-brokers or KAFKA_BROKERS)');
    return undefined;
  }
  const kafka = await import('../ingest/kafka/index.js'); // no kafkajs without Kafka
  try {
    return kafka.kafkaIngestConfigFromEnv(process.env, {
      brokers: stringFlag(p, 'kafka-brokers'), topics: stringFlag(p, 'kafka-topics'), groupId: stringFlag(p, 'kafka-group-id'),
      catalogTopic: stringFlag(p, 'kafka-catalog-topic'), shard: stringFlag(p, 'shard'),
    });
  } catch (e) {
    if (kafka.isKafkaSetupError(e)) throw new UsageError(e.message);
    throw e;
  }
}

function options(p: Parsed): Omit<StartOptions, 'dbFile' | 'kafka'> {
  return {
    port: intFlag(p, 'port'),
    opsPort: intFlag(p, 'ops-port'),
    windowDays: intFlag(p, 'window-days'),
    cacheMaxBytes: intFlag(p, 'cache-max-bytes'),
    rateLimit: intFlag(p, 'rate-limit'),
    maxBuildsPerAccount: intFlag(p, 'max-builds-per-account'),
    buildThreads: intFlag(p, 'build-threads'),
    logHitSample: intFlag(p, 'log-hit-sample'),
    maxReadyLag: intFlag(p, 'max-ready-lag'),
    maxStalenessMs: intFlag(p, 'max-staleness'),
    webhooks: {
      allowLoopback: boolFlag(p, 'webhooks-allow-loopback'),
      group: stringFlag(p, 'webhooks-group'),
      topic: stringFlag(p, 'webhooks-topic')!,
      graceMs: intFlag(p, 'webhooks-grace') * 1000,
      retryBaseMs: intFlag(p, 'webhooks-retry-base'),
      retryForMs: intFlag(p, 'webhooks-retry-for') * 1000,
      planEveryMs: intFlag(p, 'webhooks-plan-every'),
    },
    ...bootstrapOption(p),
    ...cursorSecretOption(p),
    host: stringFlag(p, 'host')!,
    ...opsAccess(p),
  };
}

/** --ops-host and --ops-token, checked before anything starts (a demo replay included): ops/ops-access.ts says what is refused. */
function opsAccess(p: Parsed): Pick<StartOptions, 'opsHost' | 'opsToken'> {
  const opsHost = stringFlag(p, 'ops-host')!;
  const opsToken = stringFlag(p, 'ops-token');
  const problem = opsAccessProblem(opsHost, opsToken);
  if (problem !== null) throw new UsageError(problem);
  return { opsHost, opsToken };
}

/** --bootstrap-from: a peer's ops URL (http or https), e.g. http://10.0.0.5:9464. */
function bootstrapOption(p: Parsed): Pick<StartOptions, 'bootstrapFrom' | 'bootstrapTimeoutMs' | 'bootstrapIdleMs'> {
  const value = stringFlag(p, 'bootstrap-from');
  if (value === undefined || value.trim() === '') return {};
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UsageError(`--bootstrap-from must be a peer's ops URL such as http://HOST:9464, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--bootstrap-from must be an http(s) URL, got "${value}"`);
  return {
    bootstrapFrom: url.href,
    bootstrapTimeoutMs: 1000 * intFlag(p, 'bootstrap-timeout'),
    bootstrapIdleMs: 1000 * intFlag(p, 'bootstrap-idle-timeout'),
  };
}

/**
 * --cursor-secret (CURSOR_SECRET): the key that signs page cursors, the same on every replica that
 * builds its own database (docs/operations.md); absent or empty, the database's own.
 */
function cursorSecretOption(p: Parsed): Pick<StartOptions, 'cursorSecret'> {
  const value = stringFlag(p, 'cursor-secret');
  if (value === undefined || value === '') return {};
  const problem = cursorSecretProblem(value);
  if (problem !== null) throw new UsageError(`--cursor-secret ${problem}`);
  return { cursorSecret: value };
}

/** Whether `host:port` can be listened on now: the error's code (EADDRINUSE, EACCES...), or null. */
function tryListen(port: number, host: string): Promise<string | null> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/**
 * The API and ops ports, tried before anything slow (the demo's replay, a bootstrap): a port in use
 * is said at once, with the flag and the environment variable that choose it. A second `npm start`
 * otherwise replayed the demo and then failed on the ops port, which its user never chose. A port
 * taken between this and the real listen still fails there, with the address.
 */
async function checkPorts(p: Parsed, opts: Pick<StartOptions, 'port' | 'host' | 'opsPort' | 'opsHost'>): Promise<void> {
  const ports = [
    { flag: 'port', what: 'the API port', port: opts.port ?? 0, host: opts.host ?? '0.0.0.0' },
    { flag: 'ops-port', what: 'the ops port', port: opts.opsPort ?? 0, host: opts.opsHost ?? '127.0.0.1' },
  ] as const;
  for (const x of ports) {
    if (x.port === 0) continue;
    const code = await tryListen(x.port, x.host);
    if (code === null) continue;
    const env = FLAGS[x.flag].env;
    const why = code === 'EADDRINUSE' ? 'the port is in use (another visibility-api, or `npm start`, still running?)' : 'not allowed here';
    throw new UsageError(`cannot listen on ${x.host}:${x.port}: ${code}: ${why}; ${x.what} is ${flagOrigin(p, x.flag)}: ` +
      `choose another with --${x.flag} N or ${env}=N (0: a free one)`);
  }
}

type DemoKeys = Array<{ account: string; key: string; revoked: boolean }>;

function demoKeys(): DemoKeys {
  return JSON.parse(fs.readFileSync(path.join(packageRoot(), DEMO_KEYS), 'utf8')) as DemoKeys;
}

/**
 * Where to go next. A key is never written to a log line, demo keys included: the first usable one
 * goes to a file beside the demo database (readable by its owner only), and the hint reads it from there.
 */
function showDemo(logger: Logger, url: string, dbFile: string, keys: DemoKeys): void {
  // The dashboard is at the origin's root, the reference under the API's base path (src/serve/docs/pages.ts).
  logger.info({ url: new URL('/', url).toString() }, `dashboard: ${new URL('/', url).toString()}`);
  logger.info({ url: `${url}/docs` }, `API reference: ${url}/docs`);
  const key = keys.find((k) => !k.revoked);
  if (!key) return;
  const keyFile = `${dbFile}.api-key`;
  fs.writeFileSync(keyFile, `${key.key}\n`, { mode: 0o600 });
  logger.info({ account: key.account, key_file: keyFile }, `demo key of ${key.account} in ${keyFile}; try: curl -s -H "X-API-Key: $(cat ${keyFile})" ${url}/projects`);
}


/** Starts the service, and stops it gracefully on SIGTERM or SIGINT (exit 0). */
async function serveCommand(p: Parsed): Promise<number> {
  // Listening from the start: a signal while the demo replays or a snapshot downloads stops the
  // service as soon as it is up, with exit 0, instead of killing it half-started (a second one exits at once).
  // The same signal aborts a bootstrap under way (it could otherwise hold the stop for minutes).
  const aborter = new AbortController();
  const stopSignal = new Promise<StopSignal>((resolve) => onStopSignal('serve', 'exiting now, without finishing the stop', (s) => {
    aborter.abort();
    resolve(s);
  }));
  const logger = loggerFromEnv(process.env);
  const opts = options(p);
  const kafka = await kafkaConfig(p);
  await checkPorts(p, opts);
  const demo = boolFlag(p, 'demo') ? await demoDb(p, logger) : null;
  try {
    const dbFile = demo?.file ?? requireString(p, 'db');
    const keys = demo ? demoKeys() : null;
    let running: Running;
    try {
      running = await start({ ...opts, dbFile, kafka, logger, signal: aborter.signal, ...(keys ? { dashboard: { keys } } : {}) });
    } catch (e) {
      if (!(e instanceof StartAborted)) throw e;
      logger.info({ signal: await stopSignal }, `visibility-api: ${await stopSignal} during the bootstrap: stopped it (the partial download is removed)`);
      return await stopped(logger);
    }
    // The address bound, then a URL to click (127.0.0.1 for a wildcard host).
    logger.info({ bind: running.bind, url: running.url, ops_bind: running.opsBind, ops_url: running.opsUrl },
      `visibility-api listening on ${running.bind} (${running.url}); ops on ${running.opsBind} (${running.opsUrl})`);
    if (keys) showDemo(logger, running.url, dbFile, keys);
    const signal = await stopSignal;
    logger.info({ signal }, `visibility-api: ${signal}: stopping (draining requests, then closing)`);
    await running.close();
  } finally {
    demo?.remove();
  }
  return stopped(logger);
}

async function stopped(logger: Logger): Promise<number> {
  logger.info('visibility-api: stopped');
  await flushLogger(logger);
  return 0;
}

export const command: Command<typeof FLAGS> = {
  synopsis: '(--db FILE | --demo) [flags]',
  flags: FLAGS,
  env: LOG_SETTINGS,
  notes: ['Kafka: the other KAFKA_* settings (client id, dead-letter topic, TLS, SASL, timeouts) are in docs/kafka.md.', 'Start-up, stopping, health endpoints and exit statuses: docs/operations.md.'],
  run: serveCommand,
};
