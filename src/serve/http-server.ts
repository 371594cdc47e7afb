// The API's node:http server around the service's request listener, and the error contract for
// what node:http answers before any listener runs.
import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { httpError, rawErrorHeaders, type ErrorCode } from './request/errors';
import { newRequestId } from './http/served';
import type { Service } from './app';

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
