import fs from 'node:fs';
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
import { intFlag, loggerFromEnv, parse, UsageError, type Parsed, requireString } from './args';
import { onStopSignal, type StopSignal } from './signals';
import { cursorSecretProblem } from '../serve/cursor-secret';

export const DEMO_EVENTS = 'fixtures/demo/events.ndjson.gz';
const DEMO_KEYS = 'fixtures/demo/keys.json';

const FLAGS = {
  db: { type: 'string' }, demo: { type: 'boolean' }, port: { type: 'string' }, 'ops-port': { type: 'string' },
  host: { type: 'string' }, 'ops-host': { type: 'string' }, 'window-days': { type: 'string' },
  'cache-max-bytes': { type: 'string' }, 'rate-limit': { type: 'string' }, 'build-threads': { type: 'string' },
  'kafka-brokers': { type: 'string' }, 'kafka-topics': { type: 'string' }, 'kafka-group-id': { type: 'string' },
  'log-hit-sample': { type: 'string' }, 'bootstrap-from': { type: 'string' }, 'max-ready-lag': { type: 'string' },
  'cursor-secret': { type: 'string' },
  'max-staleness': { type: 'string' },
  'ops-token': { type: 'string' }, 'bootstrap-timeout': { type: 'string' }, 'bootstrap-idle-timeout': { type: 'string' },
} as const;

const ENV = {
  db: 'VISIBILITY_DB', port: 'PORT', 'ops-port': 'OPS_PORT', host: 'HOST', 'ops-host': 'OPS_HOST',
  'window-days': 'WINDOW_DAYS', 'cache-max-bytes': 'CACHE_MAX_BYTES', 'rate-limit': 'RATE_LIMIT',
  'build-threads': 'BUILD_THREADS', 'log-hit-sample': 'LOG_HIT_SAMPLE', 'bootstrap-from': 'BOOTSTRAP_FROM', 'max-ready-lag': 'MAX_READY_LAG',
  'cursor-secret': 'CURSOR_SECRET',
  'max-staleness': 'MAX_STALENESS',
  'ops-token': 'OPS_TOKEN', 'bootstrap-timeout': 'BOOTSTRAP_TIMEOUT', 'bootstrap-idle-timeout': 'BOOTSTRAP_IDLE_TIMEOUT',
};

const flag = (p: Parsed, name: string): string | undefined => (typeof p.values[name] === 'string' ? p.values[name] : undefined);

/**
 * --demo: a fresh database filled from the committed demo fixtures, at --db or in a temporary
 * folder. The temporary folder is the service's own: `remove` deletes it once the service has stopped,
 * so that every `npm start` does not leave ~50 MB behind in the system's temporary directory.
 */
async function demoDb(p: Parsed, logger: Logger): Promise<{ file: string; remove: () => void }> {
  const given = flag(p, 'db');
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
  if (flag(p, 'kafka-brokers') === undefined && (process.env.KAFKA_BROKERS ?? '').trim() === '') return undefined;
  const kafka = await import('../ingest/kafka/index.js'); // no kafkajs without Kafka
  try {
    return kafka.kafkaIngestConfigFromEnv(process.env, {
      brokers: flag(p, 'kafka-brokers'), topics: flag(p, 'kafka-topics'), groupId: flag(p, 'kafka-group-id'),
    });
  } catch (e) {
    if (kafka.isKafkaSetupError(e)) throw new UsageError(e.message);
    throw e;
  }
}

function options(p: Parsed): Omit<StartOptions, 'dbFile' | 'kafka'> {
  return {
    port: intFlag(p, 'port', 8080, 0, 65535),
    opsPort: intFlag(p, 'ops-port', 9464, 0, 65535),
    windowDays: intFlag(p, 'window-days', 7, 1, 365),
    cacheMaxBytes: intFlag(p, 'cache-max-bytes', 256 * 1024 * 1024, 0, 64 * 1024 ** 3),
    rateLimit: intFlag(p, 'rate-limit', 0, 0, 1_000_000),
    buildThreads: intFlag(p, 'build-threads', defaultBuildThreads(), 0, 64),
    logHitSample: intFlag(p, 'log-hit-sample', DEFAULT_HIT_SAMPLE, 1, 1_000_000),
    maxReadyLag: intFlag(p, 'max-ready-lag', DEFAULT_MAX_READY_LAG, 0, Number.MAX_SAFE_INTEGER),
    maxStalenessMs: intFlag(p, 'max-staleness', DEFAULT_MAX_STALENESS_MS, 0, 3_600_000),
    ...bootstrapOption(p),
    ...cursorSecretOption(p),
    host: flag(p, 'host') ?? '0.0.0.0',
    ...opsAccess(p),
  };
}

/** --ops-host and --ops-token, checked before anything starts (a demo replay included): auth.ts says what is refused. */
function opsAccess(p: Parsed): Pick<StartOptions, 'opsHost' | 'opsToken'> {
  const opsHost = flag(p, 'ops-host') ?? '127.0.0.1';
  const opsToken = flag(p, 'ops-token');
  const problem = opsAccessProblem(opsHost, opsToken);
  if (problem !== null) throw new UsageError(problem);
  return { opsHost, opsToken };
}

/** --bootstrap-from: a peer's ops URL (http or https), e.g. http://10.0.0.5:9464. */
function bootstrapOption(p: Parsed): Pick<StartOptions, 'bootstrapFrom' | 'bootstrapTimeoutMs' | 'bootstrapIdleMs'> {
  const value = flag(p, 'bootstrap-from');
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
    bootstrapTimeoutMs: 1000 * intFlag(p, 'bootstrap-timeout', DEFAULT_BOOTSTRAP_TIMEOUT_MS / 1000, 1, 7 * 24 * 3600),
    bootstrapIdleMs: 1000 * intFlag(p, 'bootstrap-idle-timeout', DEFAULT_BOOTSTRAP_IDLE_MS / 1000, 1, 24 * 3600),
  };
}

/**
 * --cursor-secret (CURSOR_SECRET): the key that signs page cursors, the same on every replica that
 * builds its own database (docs/operations.md); absent or empty, the database's own.
 */
function cursorSecretOption(p: Parsed): Pick<StartOptions, 'cursorSecret'> {
  const value = flag(p, 'cursor-secret');
  if (value === undefined || value === '') return {};
  const problem = cursorSecretProblem(value);
  if (problem !== null) throw new UsageError(`--cursor-secret ${problem}`);
  return { cursorSecret: value };
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
  // The dashboard is at the origin's root, the reference under the API's base path (src/serve/pages.ts).
  logger.info({ url: new URL('/', url).toString() }, `dashboard: ${new URL('/', url).toString()}`);
  logger.info({ url: `${url}/docs` }, `API reference: ${url}/docs`);
  const key = keys.find((k) => !k.revoked);
  if (!key) return;
  const keyFile = `${dbFile}.api-key`;
  fs.writeFileSync(keyFile, `${key.key}\n`, { mode: 0o600 });
  logger.info({ account: key.account, key_file: keyFile }, `demo key of ${key.account} in ${keyFile}; try: curl -s -H "X-API-Key: $(cat ${keyFile})" ${url}/projects`);
}


/** Parses flags, starts the service, and stops it gracefully on SIGTERM or SIGINT (exit 0). */
export async function serveCommand(argv: string[]): Promise<number> {
  const p = parse(argv, FLAGS, ENV);
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
  const demo = p.values.demo === true ? await demoDb(p, logger) : null;
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
