// The service: its parts wired into one request listener (createService). The build threads, the
// body cache, admission and the change feed are made here; the Koa routes are in routes.ts, the hot
// path in http/hot.ts, MCP in mcp/, and the node:http server around the listener in http-server.ts.
import { type IncomingMessage, type ServerResponse } from 'node:http';
import Koa from 'koa';
import { ENDPOINTS, type Endpoint } from '../readmodels';
import { openReadStore, type Db, type HeldShard } from '../store';
import { Access } from './http/access';

import { BASE_PATH } from './request/base-path';
import { BodySchemas } from './bodies/bodies';
import { InlineBuilder, ThreadBuilder, type Builder, type StartBuildThread } from './bodies/builders';
import { configuredKey, signingKey, type SigningKey } from './request/cursor';
import { BodyCache } from './bodies/cache';
import { encodeBody } from './bodies/encode';
import { ChangeFeed, type ChangeFeedOptions } from './feed/change-feed';
import { NOSNIFF, NOSNIFF_HEADER, type ErrorLogger } from './request/errors';
import { createHotPath } from './http/hot';

import { acceptsMcp, createMcpHttpHandler, isJson, isMcpRequest, MCP_PATH } from './mcp/mcp';
import { buildOpenApi } from './docs/openapi';
import { DEFAULT_MAX_STALENESS_MS, methodology } from '../readmodels/methodology';
import { type DemoKey } from './docs/pages';
import { Admission } from './http/admission';
import { RateLimiter } from './http/ratelimit';
import { freshness, Responder } from './http/responder';

import { noteOf, noteRequest, observeWhenDone, type ResponseObserver } from './http/served';
import { silentLogger, type Logger } from '../lib/log';
import { createKoaApp } from './routes';
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

  const app = createKoaApp({ endpoints, admission, feed, openapi, methodology: methodologyBody, log, dashboard: opts.dashboard });
  const koa = app.callback();
  // A flooding key's POST /mcp batches get their 429 on the hot path, their bodies never read.
  const mcpPost = { isFor: isMcpRequest, route: 'mcp', template: MCP_PATH, admits: (accept: string | undefined, type: string | undefined) => acceptsMcp(accept) && isJson(type) };
  const hot = createHotPath({ basePath: BASE_PATH, endpoints, responder, admission, onResponse: opts.onResponse, post: mcpPost });
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
