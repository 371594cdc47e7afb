import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { ENDPOINTS, type Endpoint } from '../readmodels';
import { openReadStore, type Db, type HeldShard } from '../store';
import { Access } from './access';
import { presentedKeyHash } from './api-key';
import { BASE_PATH } from './base-path';
import { BodySchemas } from './bodies';
import { buildTimeOf, InlineBuilder, ThreadBuilder, type Builder, type StartBuildThread } from './builders';
import { configuredKey, signingKey, type SigningKey } from './cursor';
import { BodyCache, encodeBody } from './cache';
import { ChangeFeed, CHANGES_PATH, type ChangeFeedOptions } from './change-feed';
import { errorMiddleware, httpError, HttpError, NOSNIFF, NOSNIFF_HEADER, rawErrorHeaders, type ErrorCode, type ErrorLogger } from './errors';
import { createHotPath } from './hot';
import { llmsTxtMiddleware } from './llms';
import { createMcpHttpHandler, isMcpRequest } from './mcp';
import { buildOpenApi } from './openapi';
import { DEFAULT_MAX_STALENESS_MS, methodology } from '../readmodels/methodology';
import { pagesMiddleware, type DemoKey } from './pages';
import { extraCost, RateLimiter } from './ratelimit';
import { freshness, Responder, wantsFresh } from './responder';
import { sendReady } from './send';
import { parseQuery } from './params';
import { newRequestId, noteOf, noteRequest, observeWhenDone, type ResponseObserver } from './served';
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
  const chargeBuildTime = opts.chargeBuildTime ?? true;
  const limited = new WeakSet<IncomingMessage>();
  const feed = new ChangeFeed(responder, store, endpoints, {
    isDraining: opts.isDraining, log: (err) => logger.error({ err }, 'change feed failed'), ...opts.changeFeed,
  });
  const isReady = opts.isReady ?? (() => true);
  const log: ErrorLogger = (err, ctx) => {
    opts.onFailure?.(err);
    logger.error({ err, request_id: noteOf(ctx.req)?.requestId, route: ctx.state.route as string | undefined }, `${ctx.method} ${ctx.path} failed`);
  };
  const openapi = encodeBody(buildOpenApi(endpoints, schemas.schemas, BASE_PATH), 0, new Date(0).toISOString());
  // Typed by the schema's generated type (Methodology); test/readmodels/methodology.test.ts validates it against the schema.
  const methodologyBody = encodeBody(methodology(opts.windowDays ?? 7, maxStalenessMs), 0, new Date(0).toISOString());

  /**
   * One request against the key's rate: the RateLimit fields on the answer, whatever it turns out
   * to be (200, 304, 404, 503...), or the 429. The hot path already charged the requests it marked limited.
   */
  function charge(ctx: Context, hash: string): void {
    if (limited.has(ctx.req)) throw limiter.exceeded(hash);
    ctx.set(limiter.charge(hash));
  }

  function handler(endpoint: Endpoint) {
    return async function serveEndpoint(ctx: Context): Promise<void> {
      ctx.state.route = endpoint.name;
      if (!isReady()) throw httpError('not_ready');
      const hash = presentedKeyHash(ctx.req.headers);
      const fresh = wantsFresh(ctx.get('cache-control') || undefined);
      let resolved;
      try {
        // parseQuery, not ctx.query: Koa's parser drops the pairs past 1000, which must be a 400 instead.
        resolved = responder.resolve(endpoint, { params: (ctx as unknown as { params: Record<string, string> }).params, query: parseQuery(ctx.querystring), keyHash: hash, fresh });
      } catch (err) {
        // A 400 or 404 of a known key counts against its rate; a 401 has no key to count against
        // (and a bucket per made-up key would be memory for anyone to fill).
        const account = hash === null ? null : access.account(hash);
        if (account !== null && err instanceof HttpError) {
          ctx.state.account = account;
          charge(ctx, hash!);
        }
        throw err;
      }
      ctx.state.account = resolved.args.accountId;
      charge(ctx, resolved.keyHash);
      const pending = responder.respond(resolved, fresh);
      const answer = await pending;
      // What it cost, now that it is known: the build it waited for (none for a cached body) and its bytes.
      const built = pending instanceof Promise && chargeBuildTime ? buildTimeOf(answer.ready) : 0;
      const extra = extraCost(built, answer.ready.json.length);
      if (extra > 0 && limiter.on) ctx.set('RateLimit', limiter.debit(resolved.keyHash, extra));
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
    if (!isReady()) throw httpError('not_ready');
    const projectId = (ctx as unknown as { params: Record<string, string> }).params.project_id;
    feed.serve(ctx, projectId, presentedKeyHash(ctx.req.headers), (hash) => {
      ctx.state.account = access.account(hash);
      charge(ctx, hash);
    });
  });

  const app = new Koa();
  app.use(noteRoute);
  app.use(errorMiddleware(log));
  app.use(llmsTxtMiddleware(BASE_PATH, endpoints)); // public, outside BASE_PATH (llms.ts)
  app.use(pagesMiddleware({ basePath: BASE_PATH, dashboard: opts.dashboard })); // the docs page and the dashboard (pages.ts)
  app.use(onlyReads);
  app.use(router.routes());
  const koa = app.callback();
  const hot = createHotPath({ basePath: BASE_PATH, endpoints, responder, limiter, limited, isReady, onResponse: opts.onResponse });
  const mcp = createMcpHttpHandler({ endpoints, responder, access, isReady, limiter, chargeBuildTime, logger, answerMaxBytes: opts.mcpAnswerMaxBytes });
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
