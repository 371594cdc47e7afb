import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { BodyCache } from '../serve';
import { SNAPSHOT_SCHEMA_HEADER, SNAPSHOT_SHA256_HEADER, writeSnapshot } from '../store';
import { CODE_HEADER, errorBody, httpError, type HttpError } from '../serve/errors';

export interface Readiness {
  ready: boolean;
  reasons: string[];
  details?: Record<string, unknown>;
}

export interface OpsOptions {
  cache: BodyCache;
  readiness: () => Readiness;
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** The hot path's memo of resolved requests, in estimated bytes (Service.hotMemoBytes). */
  memoBytes?: () => number;
  /** The served database: GET /snapshot streams a consistent copy of it (absent: 404). */
  dbFile?: string;
}

export const SNAPSHOT_PATH = '/snapshot';

/**
 * Where a snapshot is copied before it is streamed: `.<db file name>.snapshot-<pid>-<random>`, beside
 * the database. The name says which database and which process the copy belongs to.
 */
const snapshotDirPrefix = (dbFile: string): string => `.${path.basename(dbFile)}.snapshot-`;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

/**
 * Copies of `dbFile` left by a process that died while sending one (kill -9, a crash): each is as
 * large as the database. Removed when an ops port starts; a copy whose process still runs is left alone.
 */
export function removeOrphanedSnapshots(dbFile: string): void {
  const dir = path.dirname(dbFile);
  const prefix = snapshotDirPrefix(dbFile);
  for (const name of fs.readdirSync(dir)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

/**
 * GET /snapshot: a consistent copy of the served database (store/snapshot.ts: Kafka offsets and data
 * versions inside), written to a temporary file, then streamed with its length, SHA-256 and schema
 * version in headers, so a new replica can check what it downloaded (serve --bootstrap-from). One
 * at a time: a copy is as large as the database, and a second request gets 503 with Retry-After.
 */
function snapshotHandler(dbFile: string): (res: http.ServerResponse, head: boolean) => void {
  let busy = false;
  removeOrphanedSnapshots(dbFile);
  return (res, head) => {
    if (busy) return fail(res, httpError('not_ready', 'a snapshot is being taken: retry shortly'));
    busy = true;
    // Beside the database, not in /tmp: the copy is as large as the file, and that disk has room for one.
    const dir = fs.mkdtempSync(path.join(path.dirname(dbFile), `${snapshotDirPrefix(dbFile)}${process.pid}-`));
    const out = path.join(dir, 'snapshot.db');
    const done = (): void => {
      busy = false;
      fs.rmSync(dir, { recursive: true, force: true });
    };
    writeSnapshot(dbFile, out).then((info) => {
      res.writeHead(200, {
        'content-type': 'application/vnd.sqlite3', 'content-length': String(info.bytes), 'cache-control': 'no-store',
        [SNAPSHOT_SHA256_HEADER]: info.sha256, [SNAPSHOT_SCHEMA_HEADER]: String(info.schemaVersion),
      });
      if (head) {
        res.end();
        return done();
      }
      const stream = fs.createReadStream(out);
      res.once('close', () => {
        stream.destroy();
        done();
      });
      stream.pipe(res);
    }, (err: unknown) => {
      done();
      fail(res, httpError('internal', `snapshot failed: ${err instanceof Error ? err.message : String(err)}`));
    });
  };
}

/** What /cache shows and `visibility-api cache-stats` prints. */
export function cacheStats(cache: BodyCache, memoBytes: () => number = () => 0): Record<string, unknown> {
  let hits = 0;
  let misses = 0;
  let builds = 0;
  const routes: Record<string, unknown> = {};
  for (const [name, s] of [...cache.routes].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    hits += s.hits;
    misses += s.misses;
    builds += s.builds;
    routes[name] = { ...s, hit_ratio: s.hits + s.misses === 0 ? null : s.hits / (s.hits + s.misses) };
  }
  return {
    entries: cache.lru.size,
    bytes: cache.lru.calculatedSize,
    max_bytes: cache.maxBytes,
    hits, misses, builds,
    hit_ratio: hits + misses === 0 ? null : hits / (hits + misses),
    evictions: cache.evictions,
    resolutions_bytes: memoBytes(),
    routes,
  };
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const bytes = JSON.stringify(body, null, 2) + '\n';
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(bytes);
}

/** An error of the API's table (errors.ts), in the same body and with the same code header as the API's. */
function fail(res: http.ServerResponse, err: HttpError): void {
  res.writeHead(err.status, { ...err.headers, [CODE_HEADER]: err.code, 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(errorBody(err.message));
}

/** The operators' port: /livez and /healthz (process up), /readyz (read model loaded, consumer lag), /metrics, /cache, /snapshot. */
export function createOpsServer(opts: OpsOptions): http.Server {
  const snapshot = opts.dbFile ? snapshotHandler(opts.dbFile) : null;
  return http.createServer((req, res) => {
    const route = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(res, httpError('method_not_allowed'));
    // /livez is the Kubernetes name; /healthz stays for what already probes it.
    if (route === '/livez' || route === '/healthz') return json(res, 200, { status: 'ok' });
    if (route === '/readyz') {
      const r = opts.readiness();
      return json(res, r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not ready', ...r });
    }
    if (route === SNAPSHOT_PATH && snapshot) return snapshot(res, req.method === 'HEAD');
    if (route === '/cache') return json(res, 200, cacheStats(opts.cache, opts.memoBytes));
    if (route === '/metrics' && opts.metrics) {
      opts.metrics().then(
        (m) => {
          res.writeHead(200, { 'content-type': m.contentType });
          res.end(m.body);
        },
        // The operators' port shows what failed (the API's 500 never does).
        (err: unknown) => fail(res, httpError('internal', String(err))),
      );
      return;
    }
    fail(res, httpError('not_found'));
  });
}
