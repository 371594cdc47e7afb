import http from 'node:http';
import type { Logger } from '../lib/log';
import type { BodyCache } from '../serve';
import type { AccountFigures } from './accounts';
import { CODE_HEADER, errorBody, httpError, type HttpError } from '../serve/request/errors';
import { OPEN_OPS_PATHS, opsTokenMatcher } from './ops-access';
import { snapshotHandler, type SnapshotLimits } from './snapshot-route';

export interface Readiness {
  ready: boolean;
  reasons: string[];
  details?: Record<string, unknown>;
  /** A sharded service's shard (absent: it holds every project). */
  shard?: { shard: string; k: number; n: number; partitions: number; catalog_topic: string | null };
}

export interface OpsOptions {
  cache: BodyCache;
  readiness: () => Readiness;
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** The hot path's memo of resolved requests, in estimated bytes (Service.hotMemoBytes). */
  memoBytes?: () => number;
  /** Per-account builds, cache bytes and 429s (fair sharing), for /cache. */
  accounts?: AccountFigures;
  /** The served database: GET /snapshot streams a consistent copy of it (absent: 404). */
  dbFile?: string;
  /** When set, every path but health and /metrics answers 401 without `Authorization: Bearer TOKEN` (ops-access.ts). */
  token?: string;
  /** Readers, freshness and deadlines of /snapshot (snapshot-route.ts; tests make them small). */
  snapshotLimits?: Partial<SnapshotLimits>;
  /** Where a cut snapshot reader is reported. */
  logger?: Logger;
}

export const SNAPSHOT_PATH = '/snapshot';

/** What /cache shows and `visibility-api cache-stats` prints. */
export function cacheStats(cache: BodyCache, memoBytes: () => number = () => 0, accounts?: AccountFigures): Record<string, unknown> {
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
    // Fair sharing: the build queue and each account's part (ids of accounts, never keys).
    ...(accounts ? { builds_queued: accounts.queued(), fair_share_bytes: Math.floor(accounts.fairShareBytes()), accounts: Object.fromEntries(accounts.rows()) } : {}),
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

/**
 * The operators' port: /livez and /healthz (process up), /readyz (read model loaded, consumer lag),
 * /metrics, open to any caller; /cache and /snapshot, which need the token when one is set.
 */
export function createOpsServer(opts: OpsOptions): http.Server {
  const snapshot = opts.dbFile ? snapshotHandler(opts.dbFile, opts.snapshotLimits, opts.logger) : null;
  const authorized = opts.token === undefined ? (): boolean => true : opsTokenMatcher(opts.token);
  return http.createServer((req, res) => {
    const route = (req.url ?? '/').split('?')[0]!;
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(res, httpError('method_not_allowed'));
    if (!OPEN_OPS_PATHS.has(route) && !authorized(req.headers.authorization)) return fail(res, httpError('invalid_ops_token'));
    // /livez is the Kubernetes name; /healthz stays for what already probes it.
    if (route === '/livez' || route === '/healthz') return json(res, 200, { status: 'ok' });
    if (route === '/readyz') {
      const r = opts.readiness();
      return json(res, r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not ready', ...r });
    }
    if (route === SNAPSHOT_PATH && snapshot) return snapshot(req, res, fail);
    if (route === '/cache') return json(res, 200, cacheStats(opts.cache, opts.memoBytes, opts.accounts));
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
