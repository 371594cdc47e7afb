import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { ENDPOINTS, type Endpoint } from '../readmodels';
import { openReadStore, type Db, type HeldShard } from '../store';
import { Access } from './http/access';
import { presentedKeyHash } from './request/api-key';
import { BASE_PATH } from './request/base-path';
import { BodySchemas } from './bodies/bodies';
import { InlineBuilder, ThreadBuilder, type Builder, type StartBuildThread } from './bodies/builders';
import { configuredKey, signingKey, type SigningKey } from './request/cursor';
import { BodyCache } from './bodies/cache';
import { encodeBody } from './bodies/encode';
import { ChangeFeed, CHANGES_ENDPOINT, CHANGES_PATH, type ChangeFeedOptions } from './feed/change-feed';
import { errorMiddleware, httpError, NOSNIFF, NOSNIFF_HEADER, rawErrorHeaders, type ErrorCode, type ErrorLogger } from './request/errors';
import { createHotPath } from './http/hot';
import { llmsTxtMiddleware } from './docs/llms';
import { createMcpHttpHandler, isMcpRequest } from './mcp/mcp';
import { buildOpenApi } from './docs/openapi';
import { DEFAULT_MAX_STALENESS_MS, methodology } from '../readmodels/methodology';
import { pagesMiddleware, type DemoKey } from './docs/pages';
import { Admission, type Outcome } from './http/admission';
import { RateLimiter } from './http/ratelimit';
import { freshness, Responder, wantsFresh } from './http/responder';
import { sendReady } from './http/send';
import { parseQuery } from './request/params';
import { newRequestId, noteOf, noteRequest, observeWhenDone, type ResponseObserver } from './http/served';
import { silentLogger, type Logger } from '../lib/log';
import { defaultBuildThreads } from '../lib/cores';

export { BASE_PATH };

export interface AppOptions {
  /** The database to serve. The service reads it through a connection of its own. */
  db: Db;
  windowDays?: number;
  cacheMaxBytes?: number;
  /** Requests per second per API key; 0 = unlimited. */
  rateLimit?: number;
  /** The rate limiter's clock in milliseconds (performance.now by default); tests stop it. */
  rateLimitClock?: () => number;
  /**
   * Whether a build is charged its time in the rate limit (default true: ratelimit.ts extraCost);
   * false: its request only, for tests that count a key's requests exactly whatever a build took.
   */
  chargeBuildTime?: boolean;
  /** False until a read model is loaded: requests get 503. */
  isReady?: () => boolean;
  /** True once a graceful stop began: answers say Connection: close, so clients move to another instance. */
  isDraining?: () => boolean;
  /** Where failures are logged (default: nowhere). Access lines are the onResponse observer's business. */
  logger?: Logger;
  /** Called on a failure that became a 500, besides the log line (start() marks a corrupt file with it). */
  onFailure?: (err: unknown) => void;
  /** Called once per response (hot path, Koa, MCP): route, status, bytes, time, request id, account. */
  onResponse?: ResponseObserver;
  /** The endpoint table; tests substitute their own to exercise failure paths. */
  endpoints?: readonly Endpoint[];
  /**
   * Worker threads that build bodies on cache misses (default: the cores but one, at least 2:
   * lib/cores.ts); 0 builds on the event loop.
   * A custom `endpoints` table always builds on the event loop: functions cannot cross threads.
   */
  buildThreads?: number;
  /** What starts a build thread (builder-thread.ts in a worker); a test starts one it can make die. */
  startBuildThread?: StartBuildThread;
  /**
   * Builds one account may have queued or running at once (MAX_BUILDS_PER_ACCOUNT by default; 0: no
   * cap); past it a request needing a build gets the cached body, stale, or a 429 (builders.ts).
   */
  maxBuildsPerAccount?: number;
  /** The bytes one POST /mcp answer may carry (mcp.ts MCP_ANSWER_MAX_BYTES by default). */
  mcpAnswerMaxBytes?: number;
  /**
   * What signs page cursors (serve --cursor-secret, at least 32 characters); absent, the database's own
   * key (migration 014), which replicas bootstrapped from its snapshot share. docs/operations.md.
   */
  cursorSecret?: string;
  /**
   * How far behind the newest committed data a cached body may still be served, in ms, while a newer
   * one is built (stale-while-revalidate: cache.ts); 0 serves only bodies of the current data. Default 1000.
   */
  maxStalenessMs?: number;
  /**
   * How far behind a stale body is before a request starts its rebuild, in ms (at most half of
   * maxStalenessMs): commits within it share one rebuild. Default COALESCE_MS (250).
   */
  rebuildCoalesceMs?: number;
  /** The change feed's heartbeat, poll interval, per-key stream cap (see change-feed.ts). */
  changeFeed?: ChangeFeedOptions;
  /** The reference dashboard at / with these keys to pick from (serve --demo); the API reference is always on. */
  dashboard?: { keys: readonly DemoKey[] };
  /** The shard the database holds (store heldShard): a project of another shard is a 404 here. */
  shard?: HeldShard | null;
}

export interface Service {
  /** The node:http request listener: the hot path first, then the Koa app. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  app: Koa;
  cache: BodyCache;
  schemas: BodySchemas;
  builder: Builder;
  /** The change feed's open streams. */
  changes: ChangeFeed;
  /** What the hot path's memo of resolved requests holds, in estimated bytes (bounded: see hot.ts). */
  hotMemoBytes(): number;
  /** Ends the build threads and closes the service's connection. */
  close(): Promise<void>;
}

export function createService(opts: AppOptions): Service {
  const logger = opts.logger ?? silentLogger;
  // First: a bad secret is refused before anything is opened.
  const configured = opts.cursorSecret === undefined ? null : configuredKey(opts.cursorSecret);
  // Its own read-only connection: SQLite's data_version then tells it when any writer committed.
  const store = openReadStore(opts.db.name);
  let cursorKey: SigningKey;
  try {
    cursorKey = configured ?? signingKey(undefined, store);
  } catch (e) {
    store.close();
    throw e;
  }
  const schemas = new BodySchemas();
  const endpoints = opts.endpoints ?? ENDPOINTS;
  const threads = opts.endpoints ? 0 : (opts.buildThreads ?? defaultBuildThreads());
  const builder: Builder = threads > 0 ? new ThreadBuilder(opts.db.name, threads, logger, cursorKey, opts.startBuildThread, { maxPerAccount: opts.maxBuildsPerAccount }) : new InlineBuilder(store, schemas, cursorKey);
  const access = new Access(store, undefined, opts.shard ?? null);
  const maxStalenessMs = opts.maxStalenessMs ?? DEFAULT_MAX_STALENESS_MS;
  const cache = new BodyCache(opts.cacheMaxBytes ?? 256 * 1024 * 1024, freshness(access, builder, maxStalenessMs, opts.rebuildCoalesceMs));
  const responder = new Responder(access, builder, cache, opts.windowDays ?? 7, cursorKey);
  const limiter = new RateLimiter(opts.rateLimit ?? 0, opts.rateLimitClock);
  // Every transport admits a request through this one step (http/admission.ts), in one order.
  const admission = new Admission({ access, responder, limiter, isReady: opts.isReady, chargeBuildTime: opts.chargeBuildTime ?? true, onFailure: opts.onFailure });
  const feed = new ChangeFeed(responder, store, endpoints, {
    isDraining: opts.isDraining,
    log: (err) => {
      admission.failed(err);
      logger.error({ err }, 'change feed failed');
    },
    ...opts.changeFeed,
  });
  const log: ErrorLogger = (err, ctx) => {
    admission.failed(err);
    logger.error({ err, request_id: noteOf(ctx.req)?.requestId, route: ctx.state.route as string | undefined }, `${ctx.method} ${ctx.path} failed`);
  };
  const openapi = encodeBody(buildOpenApi(endpoints, schemas.schemas, BASE_PATH), 0, new Date(0).toISOString());
  // Typed by the schema's generated type (Methodology); test/readmodels/methodology.test.ts validates it against the schema.
  const methodologyBody = encodeBody(methodology(opts.windowDays ?? 7, maxStalenessMs), 0, new Date(0).toISOString());

  /** What admission learned, on the Koa answer: the account for the access line, the RateLimit fields. */
  const outcome = (ctx: Context): Outcome => ({
    account: (accountId) => void (ctx.state.account = accountId),
    fields: (fields) => ctx.set(fields),
  });

  function handler(endpoint: Endpoint) {
    return async function serveEndpoint(ctx: Context): Promise<void> {
      ctx.state.route = endpoint.name;
      const fresh = wantsFresh(ctx.get('cache-control') || undefined);
      // parseQuery, not ctx.query: Koa's parser drops the pairs past 1000, which must be a 400 instead.
      const input = { params: (ctx as unknown as { params: Record<string, string> }).params, query: parseQuery(ctx.querystring), keyHash: presentedKeyHash(ctx.req.headers), fresh };
      const resolved = admission.admit(endpoint, input, outcome(ctx), { req: ctx.req });
      const { answer, built } = await admission.respond(resolved, fresh);
      const rateLimit = admission.debit(resolved.keyHash, built, answer.ready.json.length);
      if (rateLimit !== undefined) ctx.set('RateLimit', rateLimit);
      sendReady(ctx, answer.ready, answer.stale);
    };
  }

  const router = new Router({ prefix: BASE_PATH });
  // Any other method on a known path is 405 with Allow (OPTIONS, TRACE and WebDAV verbs included);
  // on an unknown path 404, as for GET.
  const onlyReads = async (ctx: Context, next: () => Promise<void>): Promise<void> => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return next();
    if (router.match(ctx.path, 'GET').route) throw httpError('method_not_allowed');
    throw httpError('not_found');
  };
  router.get('/openapi.json', (ctx) => {
    ctx.state.route = 'openapi';
    sendReady(ctx, openapi);
  });
  // Public like the document: what the numbers mean is no secret, and does not wait for the read model.
  router.get('/methodology', (ctx) => {
    ctx.state.route = 'methodology';
    sendReady(ctx, methodologyBody);
  });
  for (const e of endpoints) router.get(e.name, e.path, handler(e));
  // A stream, not a body: never cached, never on the hot path (change-feed.ts).
  router.get('changes', CHANGES_PATH, (ctx) => {
    ctx.state.route = 'changes';
    const projectId = (ctx as unknown as { params: Record<string, string> }).params.project_id;
    // The query too: a parameter the feed does not take is refused as on every route.
    const input = { params: { project_id: projectId }, query: parseQuery(ctx.querystring), keyHash: presentedKeyHash(ctx.req.headers) };
    feed.serve(ctx, admission.admit(CHANGES_ENDPOINT, input, outcome(ctx)));
  });

  const app = new Koa();
  app.use(noteRoute);
  app.use(errorMiddleware(log));
  app.use(llmsTxtMiddleware(BASE_PATH, endpoints)); // public, outside BASE_PATH (llms.ts)
  app.use(pagesMiddleware({ basePath: BASE_PATH, dashboard: opts.dashboard })); // the docs page and the dashboard (pages.ts)
  app.use(onlyReads);
  app.use(router.routes());
  const koa = app.callback();
  const hot = createHotPath({ basePath: BASE_PATH, endpoints, responder, admission, onResponse: opts.onResponse });
  const mcp = createMcpHttpHandler({ endpoints, admission, logger, answerMaxBytes: opts.mcpAnswerMaxBytes });
  const isDraining = opts.isDraining ?? (() => false);
  return {
    handler: (req, res) => {
      if (isDraining()) res.setHeader('Connection', 'close');
      if (hot.serve(req, res)) return;
      // The hot path reports its own hits; every other request gets its id and note here.
      const note = noteRequest(req, res);
      res.setHeader(NOSNIFF_HEADER, NOSNIFF); // the hot path's bodies carry it in their header lists (send.ts)
      if (opts.onResponse) observeWhenDone(req, res, note, opts.onResponse);
      // /mcp (POST, mcp.ts) is tested after the hot path: GETs pay nothing for it.
      if (isMcpRequest(req.url)) void mcp(req, res);
      else void koa(req, res);
    },
    app, cache, schemas, builder, changes: feed,
    hotMemoBytes: hot.memoBytes,
    close: async () => {
      feed.close();
      await builder.close(); // the threads have ended: nothing of the service keeps the process alive
      store.close();
    },
  };
}

/**
 * Outermost: once the answer is decided (errors included), what the handlers learned goes on the
 * request's note for the access line. The template is the router's matched path (with its prefix);
 * the pages and llms.txt, served outside the router, have fixed paths, so theirs is the path itself.
 */
async function noteRoute(ctx: Context, next: () => Promise<void>): Promise<void> {
  try {
    await next();
  } finally {
    const note = noteOf(ctx.req);
    const route = ctx.state.route as string | undefined;
    if (note && route !== undefined) {
      note.route = route;
      note.template = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? ctx.path;
      note.accountId = (ctx.state.account as string | null | undefined) ?? null;
      const reason = ctx.state.reason as string | undefined;
      if (reason !== undefined) note.reason = reason;
    }
  }
}

/** An error answer written straight to a socket, in the JSON error contract, closing the connection. */
function rawError(code: ErrorCode): string {
  const e = httpError(code);
  const body = JSON.stringify({ error: true, message: e.message });
  const extra = Object.entries(e.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `HTTP/1.1 ${e.status} ${http.STATUS_CODES[e.status]}\r\n${extra}${rawErrorHeaders(code)}X-Request-Id: ${newRequestId()}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** What node:http's parser rejects before any listener runs: the error it deserves. */
function clientError(code: string | undefined): ErrorCode {
  if (code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'bad_request';
}

/**
 * The API's node:http server. Two kinds of request never reach the request listener, and still
 * get the JSON error contract: CONNECT (node hands its socket to a 'connect' listener or drops it)
 * gets the same 405 as any other method; a request node cannot parse (a 16 KiB request line, a
 * malformed header) gets 431 or 400 instead of node's bare answer.
 */
export function createHttpServer(service: Pick<Service, 'handler'>): http.Server {
  const server = http.createServer(service.handler);
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.end(rawError('method_not_allowed'));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    socket.end(rawError(clientError(err.code)));
  });
  return server;
}
