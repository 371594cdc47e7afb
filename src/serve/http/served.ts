// What one answered request was, as both paths (hot and Koa) report it: the access log line and the
// latency histograms are made from it (src/ops). Never the key, the raw URL or the query.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Served {
  method: string;
  /** The route's name ('visibility', 'openapi', 'mcp', ...; 'unmatched' for none): the metrics label. */
  route: string;
  /** The path template that matched ('/v1/public/projects/:project_id/visibility'); null when none did. */
  template: string | null;
  status: number;
  /** Body bytes sent: the Content-Length (0 for HEAD and 304); for a stream, what the socket wrote for it. */
  bytes: number;
  seconds: number;
  requestId: string;
  /** The account of the key, once the key is known; null for public routes and unknown keys. */
  accountId: string | null;
  /** Answered by the hot path from a ready body (a cache hit): the access log samples these at info. */
  hit: boolean;
  /** An error's reason for the operator (HttpError.reason), when it has one. */
  reason?: string;
}

export type ResponseObserver = (s: Served) => void;

export const REQUEST_ID_HEADER = 'x-request-id';
/**
 * A caller's id is kept when it is short and plain (what load balancers and tracers send:
 * UUIDs, hex, W3C trace ids); anything else is replaced, so a log line never carries what a caller
 * could use to forge lines or bloat them.
 */
const CALLER_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * A made id: a random UUID. Not a counter, which would be cheaper but would tell any caller how many
 * requests this process has answered (another account's traffic, roughly) by comparing two ids.
 */
export function newRequestId(): string {
  return randomUUID();
}

/** The caller's X-Request-Id when usable, else a new one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && CALLER_ID.test(header) ? header : newRequestId();
}

/** What the Koa and MCP paths fill in while answering; read when the response is done. */
export interface RequestNote {
  requestId: string;
  route: string;
  template: string | null;
  accountId: string | null;
  reason?: string;
}

const NOTES = new WeakMap<IncomingMessage, RequestNote>();

/** Gives the request its id (echoed at once as X-Request-Id) and a note for the handlers to fill. */
export function noteRequest(req: IncomingMessage, res: ServerResponse): RequestNote {
  const note: RequestNote = { requestId: requestIdFrom(req.headers[REQUEST_ID_HEADER]), route: 'unmatched', template: null, accountId: null };
  NOTES.set(req, note);
  res.setHeader('X-Request-Id', note.requestId);
  return note;
}

export function noteOf(req: IncomingMessage): RequestNote | undefined {
  return NOTES.get(req);
}

/** Body bytes of a finished response (see Served.bytes); `socketBefore` is the socket's count when the request began. */
export function bodyBytes(req: IncomingMessage, res: ServerResponse, socketBefore: number): number {
  if (req.method === 'HEAD' || res.statusCode === 304 || res.statusCode === 204) return 0;
  const length = res.getHeader('content-length');
  if (length !== undefined) return Number(length);
  return Math.max(0, (req.socket?.bytesWritten ?? socketBefore) - socketBefore);
}

/** Reports the request once its response is done (or its connection closed). */
export function observeWhenDone(req: IncomingMessage, res: ServerResponse, note: RequestNote, observe: ResponseObserver): void {
  const started = performance.now();
  const socketBefore = req.socket?.bytesWritten ?? 0;
  res.once('close', () => {
    observe({
      method: req.method ?? 'GET', route: note.route, template: note.template, status: res.statusCode, bytes: bodyBytes(req, res, socketBefore),
      seconds: (performance.now() - started) / 1000, requestId: note.requestId, accountId: note.accountId, hit: false,
      ...(note.reason === undefined ? {} : { reason: note.reason }),
    });
  });
}
