import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { ENDPOINTS, ReadStore, projectVisible, runGroupProject, type Endpoint, type ReadArgs } from '../readmodels';
import type { Db } from '../store';
import { authenticate } from './auth';
import { BodySchemas } from './bodies';
import { BodyCache, prepare, type Ready } from './cache';
import { errorMiddleware, HttpError, type ErrorLogger } from './errors';
import { buildOpenApi } from './openapi';
import { pathUuid, queryArgs, queryKey } from './params';
import { RateLimiter } from './ratelimit';
import { sendReady } from './send';

export const BASE_PATH = '/v1/public';

export interface AppOptions {
  db: Db;
  windowDays?: number;
  cacheMaxBytes?: number;
  /** Requests per second per API key; 0 = unlimited. */
  rateLimit?: number;
  /** False until a read model is loaded: requests get 503. */
  isReady?: () => boolean;
  log?: ErrorLogger;
  /** Called once per response with the route name ('unmatched' for none), status and seconds taken. */
  onResponse?: (route: string, status: number, seconds: number) => void;
  /** The endpoint table; tests substitute their own to exercise failure paths. */
  endpoints?: readonly Endpoint[];
}

export interface Service {
  app: Koa;
  cache: BodyCache;
  store: ReadStore;
  schemas: BodySchemas;
}

const VERSION_SQL = 'SELECT version, updated_at FROM data_versions WHERE scope = ?';

/** Where a request's data lives: the cache key part and the data_version scope it depends on. */
interface Target {
  args: ReadArgs;
  scopeId: string;
  versionScope: string;
}

function notFound(): HttpError {
  return new HttpError(404, 'Not found');
}

/** Resolves path ids and checks the key may see them. Unknown and not-yours are the same 404. */
function resolveTarget(ctx: Context, endpoint: Endpoint, store: ReadStore, accountId: string, windowDays: number): Target {
  const q = queryArgs(ctx, endpoint.query);
  const base = { ...q, accountId, windowDays, projectId: '', runGroupId: '' };
  const params = (ctx as unknown as { params: Record<string, string> }).params;
  if (endpoint.scope === 'account') return { args: base, scopeId: accountId, versionScope: 'catalog' };
  if (endpoint.scope === 'project') {
    const projectId = pathUuid(params.project_id, 'project_id');
    if (!projectVisible(store, accountId, projectId)) throw notFound();
    return { args: { ...base, projectId }, scopeId: projectId, versionScope: `project:${projectId}` };
  }
  const runGroupId = pathUuid(params.run_group_id, 'run_group_id');
  const projectId = runGroupProject(store, runGroupId);
  if (!projectId || !projectVisible(store, accountId, projectId)) throw notFound();
  return { args: { ...base, projectId, runGroupId }, scopeId: runGroupId, versionScope: `project:${projectId}` };
}

export function createService(opts: AppOptions): Service {
  const store = new ReadStore(opts.db);
  const schemas = new BodySchemas();
  const cache = new BodyCache(opts.cacheMaxBytes ?? 256 * 1024 * 1024);
  const limiter = new RateLimiter(opts.rateLimit ?? 0);
  const windowDays = opts.windowDays ?? 7;
  const isReady = opts.isReady ?? (() => true);
  const log: ErrorLogger = opts.log ?? ((err, ctx) => console.error(`${ctx.method} ${ctx.path} failed:`, err));
  const endpoints = opts.endpoints ?? ENDPOINTS;
  const openapi = prepare(buildOpenApi(endpoints, schemas.schemas, BASE_PATH), 0, new Date(0).toISOString());

  /** Builds, validates and serializes a body once. A body that fails its schema is a bug: 500, never served. */
  function build(endpoint: Endpoint, target: Target, version: number, updatedAt: string): Ready {
    const body = endpoint.build(store, target.args);
    const problem = schemas.check(endpoint.schema, body);
    if (problem) throw new Error(`${endpoint.name} body fails schemas/api/${endpoint.schema}.json: ${problem}`);
    return prepare(body, version, updatedAt);
  }

  function handler(endpoint: Endpoint) {
    return async function serveEndpoint(ctx: Context): Promise<void> {
      ctx.state.route = endpoint.name;
      if (!isReady()) throw new HttpError(503, 'The read model is still loading; retry shortly', { 'Retry-After': '1' });
      const auth = authenticate(ctx, store);
      limiter.take(auth.keyHash);
      const target = resolveTarget(ctx, endpoint, store, auth.accountId, windowDays);
      const v = store.get<{ version: number; updated_at: string }>(VERSION_SQL, target.versionScope) ?? { version: 0, updated_at: new Date(0).toISOString() };
      const key = `${endpoint.name}|${target.scopeId}|${queryKey(target.args)}|${v.version}`;
      const ready = cache.getOrBuild(endpoint.name, key, () => build(endpoint, target, v.version, v.updated_at));
      sendReady(ctx, ready);
    };
  }

  const router = new Router({ prefix: BASE_PATH });
  router.get('/openapi.json', (ctx) => {
    ctx.state.route = 'openapi';
    sendReady(ctx, openapi);
  });
  for (const e of endpoints) router.get(e.name, e.path, handler(e));

  const app = new Koa();
  if (opts.onResponse) app.use(timing(opts.onResponse));
  app.use(errorMiddleware(log));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, cache, store, schemas };
}

/** Outermost, so errors are timed too. */
function timing(onResponse: NonNullable<AppOptions['onResponse']>) {
  return async function timeRequest(ctx: Context, next: () => Promise<void>): Promise<void> {
    const started = performance.now();
    try {
      await next();
    } finally {
      onResponse((ctx.state.route as string | undefined) ?? 'unmatched', ctx.status, (performance.now() - started) / 1000);
    }
  };
}
