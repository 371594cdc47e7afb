import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { DEMO_KEYS } from '../../fixtures/world';
import { replayFiles } from '../ingest';
import { packageRoot } from '../lib/root';
import { createMetrics, createOpsServer } from '../ops';
import { BASE_PATH, createService } from '../serve';
import { openDb, Projector, type Db } from '../store';
import { intFlag, parse, requireString, UsageError, type Parsed } from './args';


export const DEMO_EVENTS = 'fixtures/demo/events.ndjson.gz';

const FLAGS = {
  db: { type: 'string' }, demo: { type: 'boolean' }, port: { type: 'string' }, 'ops-port': { type: 'string' },
  host: { type: 'string' }, 'ops-host': { type: 'string' }, 'window-days': { type: 'string' },
  'cache-max-bytes': { type: 'string' }, 'rate-limit': { type: 'string' },
} as const;

const ENV = {
  db: 'VISIBILITY_DB', port: 'PORT', 'ops-port': 'OPS_PORT', host: 'HOST', 'ops-host': 'OPS_HOST',
  'window-days': 'WINDOW_DAYS', 'cache-max-bytes': 'CACHE_MAX_BYTES', 'rate-limit': 'RATE_LIMIT',
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

export async function serveCommand(argv: string[]): Promise<number> {
  const p = parse(argv, FLAGS, ENV);
  const port = intFlag(p, 'port', 8080, 0, 65535);
  const opsPort = intFlag(p, 'ops-port', 9464, 0, 65535);
  const windowDays = intFlag(p, 'window-days', 7, 1, 365);
  const cacheMaxBytes = intFlag(p, 'cache-max-bytes', 256 * 1024 * 1024, 0, 64 * 1024 ** 3);
  const rateLimit = intFlag(p, 'rate-limit', 0, 0, 1_000_000);
  const host = typeof p.values.host === 'string' ? p.values.host : '0.0.0.0';
  const opsHost = typeof p.values['ops-host'] === 'string' ? p.values['ops-host'] : '127.0.0.1';
  let db: Db;
  if (p.values.demo === true) {
    db = (await demoDb(p)).db;
  } else {
    const file = requireString(p, 'db');
    if (!fs.existsSync(file)) throw new UsageError(`database not found: ${file} (create one with: visibility-api replay --db ${file} EVENTS...)`);
    db = openDb(file);
  }
  let observe: (route: string, status: number, seconds: number) => void = () => {};
  const service = createService({ db, windowDays, cacheMaxBytes, rateLimit, onResponse: (r, s, t) => observe(r, s, t) });
  const metrics = createMetrics(service.cache);
  observe = metrics.observeRequest;
  const httpServer = http.createServer(service.app.callback());
  const apiPort = await listen(httpServer, port, host);
  const ops = createOpsServer({ cache: service.cache, readiness: () => ({ ready: true, reasons: [] }), metrics: metrics.render });
  const boundOps = await listen(ops, opsPort, opsHost);
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
  db.close();
  return 0;
}
