// The Koa app of the API: the endpoints' routes under BASE_PATH, the documents (OpenAPI,
// methodology), the change feed's route, the pages and llms.txt, and what every Koa answer shares
// (the error contract, 405 for any other method, the access line's route). Each route only encodes
// what the one admission step (http/admission.ts) decided; app.ts wires it with the hot path and MCP.
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import type { Endpoint } from '../readmodels';
import { presentedKeyHash } from './request/api-key';
import { BASE_PATH } from './request/base-path';
import type { Ready } from './bodies/encode';
import type { ChangeFeed } from './feed/change-feed';
import { CHANGES_ENDPOINT, CHANGES_PATH } from './feed/change-feed';
import { errorMiddleware, httpError, type ErrorLogger } from './request/errors';
import { llmsTxtMiddleware } from './docs/llms';
import { pagesMiddleware, type DemoKey } from './docs/pages';
import type { Admission, Outcome } from './http/admission';
import { wantsFresh } from './http/responder';
import { sendReady } from './http/send';
import { parseQuery } from './request/params';
import { noteOf } from './http/served';

export interface KoaAppParts {
  endpoints: readonly Endpoint[];
  admission: Admission;
  feed: ChangeFeed;
  /** The OpenAPI document and the methodology, encoded once. */
  openapi: Ready;
  methodology: Ready;
  /** Where a failure that became a 500 is reported. */
  log: ErrorLogger;
  dashboard?: { keys: readonly DemoKey[] };
}

export function createKoaApp(parts: KoaAppParts): Koa {
  const { endpoints, admission, feed } = parts;
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
      const resolved = admission.admit(endpoint, input, outcome(ctx));
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
    sendReady(ctx, parts.openapi);
  });
  // Public like the document: what the numbers mean is no secret, and does not wait for the read model.
  router.get('/methodology', (ctx) => {
    ctx.state.route = 'methodology';
    sendReady(ctx, parts.methodology);
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
  app.use(errorMiddleware(parts.log));
  app.use(llmsTxtMiddleware(BASE_PATH, endpoints)); // public, outside BASE_PATH (llms.ts)
  app.use(pagesMiddleware({ basePath: BASE_PATH, dashboard: parts.dashboard })); // the docs page and the dashboard (pages.ts)
  app.use(onlyReads);
  app.use(router.routes());
  return app;
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
