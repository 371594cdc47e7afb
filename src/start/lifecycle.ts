// What start() opens is released in reverse, on close() or on a failed start; the two ports are
// listened on and closed (with a drain) the same way. Shared by the service and the bootstrap's
// placeholder ops port.
import http from 'node:http';
import type { Logger } from '../lib/log';
import { StartError } from '../start-error';

/** Everything start() opened, released in reverse on close or on a failed start. */
export type Cleanup = Array<() => void | Promise<void>>;

export async function unwind(cleanup: Cleanup, logger: Logger): Promise<void> {
  for (const step of cleanup.reverse()) {
    try {
      await step();
    } catch (err) {
      logger.error({ err }, 'while closing');
    }
  }
  cleanup.length = 0;
}

export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (e: NodeJS.ErrnoException): void => reject(new StartError(`cannot listen on ${host}:${port}: ${e.code ?? e.message}`));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

export function closeServer(server: http.Server, drainMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    // Idle keep-alive connections are closed at once, busy ones after their response (the handler
    // sends Connection: close while draining); whatever is still open at the deadline is cut.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => server.closeAllConnections(), drainMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** A host to put in a URL to click: 127.0.0.1 for a wildcard, an IPv6 address in brackets. */
export const shownHost = (h: string): string => (h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h);

/** HOST:PORT as bound (0.0.0.0:8080 is every interface). */
export const boundAddress = (h: string, p: number): string => `${h.includes(':') ? `[${h}]` : h}:${p}`;
