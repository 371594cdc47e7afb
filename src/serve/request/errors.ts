import type { Context, Next } from 'koa';
import { METRIC_DEFINITIONS_VERSION } from '../../readmodels/methodology';

/**
 * Every error a client of the API (or of the ops port) can see, in one table (fastify's
 * lib/errors.js is the model): a stable machine code, the status, the message, the headers it
 * carries, and where it can happen. The responses are made from it (httpError) and the OpenAPI
 * document's error responses are written from it (openapi.ts), so the two cannot drift apart.
 *
 * The code goes out in the X-Error-Code header. The JSON body stays exactly {"error": true,
 * "message": "..."} as v1 promises (clients and the contract compare it whole).
 */
export interface HeaderDoc {
  description: string;
  /** JSON Schema of the value, for the OpenAPI document. */
  schema: Record<string, unknown>;
  /** The value every such error carries; absent when it varies (set where the error is made). */
  value?: string;
}

/**
 * Where an error can be answered: the 22 endpoints, the public documents (openapi.json, methodology),
 * the change feed's streams only, the ops port, POST /mcp (not in the OpenAPI document: README's MCP section).
 */
export type ErrorPlace = 'endpoints' | 'public' | 'changes' | 'ops' | 'mcp';

export interface ErrorDef {
  status: number;
  /** The message, or what it starts with when the caller supplies a more precise one (see `detailed`). */
  message: string;
  /** True when the message is made per request (which parameter, which rate): `message` is then a fallback. */
  detailed?: boolean;
  /** For the OpenAPI document and the README: when it happens. */
  description: string;
  headers?: Record<string, HeaderDoc>;
  places: readonly ErrorPlace[];
}

const RETRY_AFTER_1: HeaderDoc = { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 }, value: '1' };

export const ERRORS = {
  invalid_parameter: {
    status: 400, message: 'Bad request', detailed: true, places: ['endpoints'],
    description: 'A malformed path uuid, limit, entity_type, engine_ids or cursor, a date range out of order or too long, a comparison asked two ways, with one of its dates or with a previous period before 1970-01-01, or a query of more than 1000 parameters; the message names the parameter and what it accepts, and quotes at most 64 characters of what was sent',
  },
  unknown_parameter: {
    status: 400, message: 'Unknown parameter', detailed: true, places: ['endpoints', 'mcp'],
    description: 'A query parameter (an MCP tool argument) the endpoint does not take, so that a typo never answers unfiltered data; the message names it, the nearest one the endpoint takes ("did you mean ...?") and all it takes',
  },
  invalid_mcp_request: {
    status: 400, message: 'The body is not a JSON-RPC message', detailed: true, places: ['mcp'],
    description: 'POST /mcp: the body is not JSON, nests deeper than 32 levels or has an object or array of more than 1000 members, is not a JSON-RPC 2.0 message or a batch of at most 100, or the MCP-Protocol-Version header names a version the server does not speak; the message says which',
  },
  bad_request: {
    status: 400, message: 'Bad Request', places: ['endpoints', 'public'],
    description: 'A request node:http cannot parse (a malformed request line or header); the connection is closed',
  },
  invalid_api_key: {
    status: 401, message: 'Invalid API key', places: ['endpoints', 'mcp'],
    description: 'Missing, unknown or revoked API key (message "Invalid API key")',
    headers: { 'WWW-Authenticate': { description: 'The authentication scheme: send the key as X-API-Key or Authorization: ApiKey', schema: { type: 'string', const: 'ApiKey' }, value: 'ApiKey' } },
  },
  invalid_ops_token: {
    status: 401, message: 'Missing or wrong ops token', places: ['ops'],
    description: 'An ops path other than health and metrics without the ops token (OPS_TOKEN) as Authorization: Bearer',
    headers: { 'WWW-Authenticate': { description: 'Send the ops token as Authorization: Bearer', schema: { type: 'string', const: 'Bearer' }, value: 'Bearer' } },
  },
  not_found: {
    status: 404, message: 'Not found', places: ['endpoints', 'ops'],
    description: 'Unknown route, or a project or run group that does not exist or that the key cannot see',
  },
  method_not_allowed: {
    status: 405, message: 'Method not allowed', places: ['endpoints', 'public', 'ops', 'mcp'],
    description: 'Method other than GET or HEAD (the Allow header lists them)',
    headers: { Allow: { description: 'The methods the path serves', schema: { type: 'string', const: 'GET, HEAD' }, value: 'GET, HEAD' } },
  },
  not_acceptable: {
    status: 406, message: 'Not Acceptable: the Accept header must list both application/json and text/event-stream', places: ['mcp'],
    description: 'POST /mcp whose Accept header does not list both application/json and text/event-stream (as MCP\'s streamable HTTP transport requires)',
  },
  request_timeout: {
    status: 408, message: 'Request Timeout', places: [],
    description: 'The request was not received in time; the connection is closed',
  },
  payload_too_large: {
    status: 413, message: 'Payload Too Large', detailed: true, places: ['mcp'],
    description: 'POST /mcp with a body over 64 KiB (declared or sent): nothing of it is kept; answered with Connection: close, the rest read and discarded (up to 16 MiB, within 10 s) before the connection closes, so a client still writing its body reads the 413',
  },
  unsupported_media_type: {
    status: 415, message: 'Unsupported Media Type: Content-Type must be application/json', places: ['mcp'],
    description: 'POST /mcp whose Content-Type is not application/json',
  },
  rate_limited: {
    status: 429, message: 'Too many requests', detailed: true, places: ['endpoints', 'mcp'],
    description: 'Per-key rate limit exceeded (see Retry-After; RateLimit says r=0)',
    headers: { 'Retry-After': { description: 'Seconds until a request will be accepted again: the t of RateLimit', schema: { type: 'integer', minimum: 1 } } },
  },
  too_many_streams: {
    status: 429, message: 'Too many open change streams for this API key; close one first', detailed: true, places: ['changes'],
    description: 'The key already has as many change streams (Server-Sent Events) open as it may; close one first',
  },
  headers_too_large: {
    status: 431, message: 'Request Header Fields Too Large', places: ['endpoints', 'public'],
    description: 'The request line and headers together exceed 16 KiB; the connection is closed',
  },
  internal: {
    status: 500, message: 'Internal server error', places: ['endpoints', 'public', 'ops', 'mcp'],
    description: 'Internal error; the message shows no internals',
  },
  not_ready: {
    status: 503, message: 'The read model is still loading; retry shortly', places: ['endpoints'],
    description: 'The read model is still loading; retry after Retry-After',
    headers: { 'Retry-After': RETRY_AFTER_1 },
  },
  build_failed: {
    status: 503, message: 'A build thread failed; retry shortly', places: ['endpoints'],
    description: 'A body cannot be built right now (its build threads keep failing); retry after Retry-After',
    headers: { 'Retry-After': RETRY_AFTER_1 },
  },
  pages_not_built: {
    status: 503, message: 'The web pages are not built: run npm run build', detailed: true, places: [], // the pages are not in the OpenAPI document
    description: 'The docs page or the dashboard was asked of a checkout whose web files were never built (npm run build)',
  },
  shutting_down: {
    status: 503, message: 'The service is shutting down; retry shortly', places: ['endpoints'],
    description: 'The service is stopping; retry after Retry-After (another instance answers)',
    headers: { 'Retry-After': RETRY_AFTER_1 },
  },
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERRORS;

/** The code a status means when nothing more precise was said (a status set by the router, or a legacy HttpError). */
const BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_parameter', 401: 'invalid_api_key', 404: 'not_found', 405: 'method_not_allowed', 406: 'not_acceptable', 408: 'request_timeout',
  413: 'payload_too_large', 415: 'unsupported_media_type', 429: 'rate_limited', 431: 'headers_too_large', 500: 'internal', 503: 'not_ready',
};

export function errorDef(code: ErrorCode): ErrorDef {
  return ERRORS[code];
}

/** The header on every API response saying which metric definitions its numbers follow (GET /v1/public/methodology). */
export const DEFINITIONS_HEADER = 'Metric-Definitions-Version';

/** On every answer of the API port: browsers take Content-Type as it is (a JSON body is never sniffed into a page). */
export const NOSNIFF_HEADER = 'X-Content-Type-Options';
export const NOSNIFF = 'nosniff';

/**
 * The API's one Cache-Control policy, whatever the status: a body (200, 304) or an error may be kept
 * by the client only (the answer depends on the key) and must be revalidated before each use. The
 * change feed's stream says no-store and the pages public, no-cache (README "HTTP caching").
 */
export const CACHE_CONTROL = 'private, no-cache';

/** Says which error this is to a program (the message is for people). */
export const CODE_HEADER = 'X-Error-Code';

/** An error the client should see: status, one clear message, headers (Allow, Retry-After...), and its table code. */
export class HttpError extends Error {
  readonly code: ErrorCode;
  /**
   * Why, for the operator only (the access line's "reason"): never in the body, which stays the
   * contract's. A sharded service's 404 for a project another shard holds says so here.
   */
  reason?: string;
  constructor(readonly status: number, message: string, readonly headers: Record<string, string> = {}, code?: ErrorCode) {
    // An answer of the table, not a fault: no stack is captured (nothing shows it). Capturing one
    // was a tenth of the serving thread's time while a flood of one key was answered 429.
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = depth;
    this.code = code ?? BY_STATUS[status] ?? 'internal';
  }
}

/** The fixed header values an error of the table carries (Allow, WWW-Authenticate, Retry-After: 1). */
function fixedHeaders(def: ErrorDef): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, h] of Object.entries(def.headers ?? {})) if (h.value !== undefined) out[name] = h.value;
  return out;
}

/** The error of the table named `code`: its message unless a more precise one is given, its headers plus `extra`. */
export function httpError(code: ErrorCode, message?: string, extra: Record<string, string> = {}): HttpError {
  const def: ErrorDef = ERRORS[code];
  return new HttpError(def.status, message ?? def.message, { ...fixedHeaders(def), ...extra }, code);
}

/** The JSON error body: the v1 contract, unchanged. */
export function errorBody(message: string): string {
  return JSON.stringify({ error: true, message });
}

/** What an error answered straight to a socket carries: its code and the definitions version (CRLF-terminated lines). */
export function rawErrorHeaders(code: ErrorCode): string {
  return `${CODE_HEADER}: ${code}\r\n${DEFINITIONS_HEADER}: ${METRIC_DEFINITIONS_VERSION}\r\n${NOSNIFF_HEADER}: ${NOSNIFF}\r\nCache-Control: ${CACHE_CONTROL}\r\n`;
}

export type ErrorLogger = (err: unknown, ctx: Context) => void;

/** The Content-Type of an error body (what Koa's `ctx.type = 'application/json'` would set). */
export const ERROR_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * An error's header fields as a flat [name, value, ...] list, in the order they are set: its own
 * (Retry-After, RateLimit...), its code, the definitions version, the cache policy, the type. The
 * Koa path's answer and the hot path's 429 (hot.ts) are both written from it, so they cannot differ.
 */
export function errorFields(err: HttpError): string[] {
  const list = Object.entries(err.headers).flat();
  list.push(CODE_HEADER, err.code, DEFINITIONS_HEADER, METRIC_DEFINITIONS_VERSION, 'Cache-Control', CACHE_CONTROL, 'Content-Type', ERROR_CONTENT_TYPE);
  return list;
}

function send(ctx: Context, err: HttpError): void {
  ctx.status = err.status;
  const fields = errorFields(err);
  for (let i = 0; i < fields.length; i += 2) ctx.set(fields[i]!, fields[i + 1]!);
  ctx.body = errorBody(err.message);
}

/** A status the router set without a body (404 for no route), as the table's error for it. */
function fromStatus(status: number): HttpError {
  const code = BY_STATUS[status];
  return code ? httpError(code) : new HttpError(status, 'Error', {}, 'internal');
}

/**
 * Every error leaves as {"error": true, "message": "..."}: thrown HttpErrors, statuses set by the
 * router without a body (404), and anything unexpected, which becomes a 500 that shows no internals
 * (the details go to the log, which never sees an API key).
 */
export function errorMiddleware(log: ErrorLogger) {
  return async function errors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null || ctx.body === '')) send(ctx, fromStatus(ctx.status));
    } catch (err) {
      if (err instanceof HttpError) {
        if (err.reason !== undefined) ctx.state.reason = err.reason;
        send(ctx, err);
        return;
      }
      log(err, ctx);
      send(ctx, httpError('internal'));
    }
  };
}

/** The caller's input as a message shows it: enough to recognise, never a long echo of what was sent. */
const SHOWN_MAX = 64;
export function shown(value: string): string {
  return JSON.stringify(value.length > SHOWN_MAX ? `${value.slice(0, SHOWN_MAX)}...` : value);
}
