import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { DEMO_KEYS } from '../../fixtures/world';
import { replayFiles } from '../ingest';
import { packageRoot } from '../lib/root';
import type { KafkaIngest } from '../ingest/kafka';
import { createMetrics, createOpsServer, type IngestFigures, type Readiness } from '../ops';
import { BASE_PATH, createService } from '../serve';
import { commitCounter, openDb, Projector, type Db } from '../store';
import { intFlag, parse, requireString, UsageError, type Parsed } from './args';


export const DEMO_EVENTS = 'fixtures/demo/events.ndjson.gz';

const FLAGS = {
  db: { type: 'string' }, demo: { type: 'boolean' }, port: { type: 'string' }, 'ops-port': { type: 'string' },
  host: { type: 'string' }, 'ops-host': { type: 'string' }, 'window-days': { type: 'string' },
  'cache-max-bytes': { type: 'string' }, 'rate-limit': { type: 'string' }, 'build-threads': { type: 'string' },
  'kafka-brokers': { type: 'string' }, 'kafka-topics': { type: 'string' }, 'kafka-group-id': { type: 'string' },
} as const;

const ENV = {
  db: 'VISIBILITY_DB', port: 'PORT', 'ops-port': 'OPS_PORT', host: 'HOST', 'ops-host': 'OPS_HOST',
  'window-days': 'WINDOW_DAYS', 'cache-max-bytes': 'CACHE_MAX_BYTES', 'rate-limit': 'RATE_LIMIT',
  'build-threads': 'BUILD_THREADS',
};

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new UsageError(`cannot listen on ${host}:${port}: ${e.code ?? e.message}`)));
    server.listen(port, host, () => {
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

/** --demo: a fresh database in a temporary folder (or --db), filled from the committed demo fixtures. */
async function demoDb(p: Parsed): Promise<{ db: Db; file: string }> {
  const file = typeof p.values.db === 'string' ? p.values.db : path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'visibility-demo-')), 'demo.db');
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  const db = openDb(file, { fast: true });
  const started = Date.now();
  const totals = await replayFiles(db, new Projector(db), [path.join(packageRoot(), DEMO_EVENTS)], { batchSize: 2000 });
  console.log(`demo: replayed ${totals.lines} events in ${((Date.now() - started) / 1000).toFixed(1)} s into ${file}`);
  return { db, file };
}

/** The Kafka ingest as serve needs it: readiness for /readyz and figures for /metrics. */
interface KafkaWiring {
  ingest: KafkaIngest;
  isReady: () => boolean;
  readiness: () => Readiness;
  figures: () => IngestFigures;
}

const flag = (p: Parsed, name: string): string | undefined => (typeof p.values[name] === 'string' ? p.values[name] : undefined);

/** Kafka is on when --kafka-brokers or KAFKA_BROKERS is set; the other settings come from KAFKA_* (docs/kafka.md). */
function kafkaWanted(p: Parsed): boolean {
  return flag(p, 'kafka-brokers') !== undefined || (process.env.KAFKA_BROKERS ?? '').trim() !== '';
}

/** Starts consuming into `db` (loaded lazily: no kafkajs without Kafka). Bad settings or an unreachable cluster: exit 2, one line. */
async function startKafka(p: Parsed, db: Db): Promise<KafkaWiring> {
  const kafka = await import('../ingest/kafka/index.js');
  try {
    const config = kafka.kafkaIngestConfigFromEnv(process.env, {
      brokers: flag(p, 'kafka-brokers'), topics: flag(p, 'kafka-topics'), groupId: flag(p, 'kafka-group-id'),
    });
    // In a thread of its own, so transactions never hold the event loop that answers requests.
    const ingest = await kafka.startKafkaIngestThread({ dbFile: db.name, commits: commitCounter(), config, opts: {} });
    console.log(`kafka: consuming ${config.topics.join(',')} from ${config.brokers.join(',')} as group ${config.groupId}` +
      `${config.dlqTopic ? `, dead letters to ${config.dlqTopic}` : ''}`);
    // Once a read model is loaded it stays loaded: the check runs until the first data arrives.
    let loaded = false;
    const isReady = (): boolean => (loaded ||= kafka.hasReadModel(db));
    return {
      ingest,
      isReady,
      readiness: () => kafka.kafkaReadiness(ingest.status(), isReady()),
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
  } catch (e) {
    if (kafka.isKafkaSetupError(e)) throw new UsageError(e.message);
    throw e;
  }
}

export async function serveCommand(argv: string[]): Promise<number> {
  const p = parse(argv, FLAGS, ENV);
  const port = intFlag(p, 'port', 8080, 0, 65535);
  const opsPort = intFlag(p, 'ops-port', 9464, 0, 65535);
  const windowDays = intFlag(p, 'window-days', 7, 1, 365);
  const cacheMaxBytes = intFlag(p, 'cache-max-bytes', 256 * 1024 * 1024, 0, 64 * 1024 ** 3);
  const rateLimit = intFlag(p, 'rate-limit', 0, 0, 1_000_000);
  const buildThreads = intFlag(p, 'build-threads', 1, 0, 64);
  const host = typeof p.values.host === 'string' ? p.values.host : '0.0.0.0';
  const opsHost = typeof p.values['ops-host'] === 'string' ? p.values['ops-host'] : '127.0.0.1';
  let db: Db;
  if (p.values.demo === true) {
    db = (await demoDb(p)).db;
  } else {
    const file = requireString(p, 'db');
    // With Kafka the database is built from the topics, so a missing file is created.
    if (!fs.existsSync(file) && !kafkaWanted(p)) throw new UsageError(`database not found: ${file} (create one with: visibility-api replay --db ${file} EVENTS...)`);
    db = openDb(file);
  }
  let kafka: KafkaWiring | null = null;
  if (kafkaWanted(p)) {
    try {
      kafka = await startKafka(p, db); // with --demo: the demo first, then Kafka as well
    } catch (e) {
      db.close();
      throw e;
    }
  }
  let observe: (route: string, status: number, seconds: number) => void = () => {};
  const service = createService({ db, windowDays, cacheMaxBytes, rateLimit, buildThreads, onResponse: (r, s, t) => observe(r, s, t), ...(kafka ? { isReady: kafka.isReady } : {}) });
  const metrics = createMetrics(service.cache, kafka ? kafka.figures : undefined);
  observe = metrics.observeRequest;
  const httpServer = http.createServer(service.handler);
  // A port in use must not leave the Kafka consumer running (the process would never exit).
  const stopKafkaAndThrow = async (e: unknown): Promise<never> => {
    await kafka?.ingest.stop();
    httpServer.close();
    throw e;
  };
  const apiPort = await listen(httpServer, port, host).catch(stopKafkaAndThrow);
  const readiness = kafka ? kafka.readiness : (): Readiness => ({ ready: true, reasons: [] });
  const ops = createOpsServer({ cache: service.cache, readiness, metrics: metrics.render });
  const boundOps = await listen(ops, opsPort, opsHost).catch(stopKafkaAndThrow);
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host;
  console.log(`visibility-api listening on http://${shown}:${apiPort}${BASE_PATH} (ops on http://${opsHost}:${boundOps})`);
  if (p.values.demo === true) {
    const key = DEMO_KEYS.find((k) => !k.revoked)!;
    console.log(`demo key (${key.account}): ${key.key}`);
    console.log(`try: curl -s -H 'X-API-Key: ${key.key}' http://${shown}:${apiPort}${BASE_PATH}/projects`);
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      httpServer.close();
      ops.close();
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await kafka?.ingest.stop();
  db.close();
  return 0;
}
