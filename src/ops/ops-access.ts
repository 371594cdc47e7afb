// Who may call the ops port. Health (/livez, /healthz, /readyz) and /metrics are open to whatever
// reaches the port: probes and scrapers carry no secret, and they show no tenant's data. Everything
// else (/snapshot: every tenant's data and key hashes; /cache) needs the ops token whenever one is
// set, wherever the port listens; a port that listens beyond loopback must have one (start refuses).
import { createHash, timingSafeEqual } from 'node:crypto';
import net from 'node:net';

/** Paths any caller of the ops port may use, with or without the token. */
export const OPEN_OPS_PATHS: ReadonlySet<string> = new Set(['/livez', '/healthz', '/readyz', '/metrics']);

/** A token shorter than this is refused: it could be guessed. */
export const MIN_OPS_TOKEN_LENGTH = 16;

/** True for an address only this machine can reach: 127.0.0.0/8, ::1, their IPv4-mapped form, "localhost". */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return net.isIPv4(v4) && v4.startsWith('127.');
}

/**
 * Why the ops port cannot start as configured, or null: beyond loopback it needs a token, and a
 * token, where given, must be long enough. The message names the setting to change.
 */
export function opsAccessProblem(opsHost: string, token: string | undefined): string | null {
  if (token !== undefined && token.length < MIN_OPS_TOKEN_LENGTH) {
    return `the ops token (OPS_TOKEN / --ops-token) must be at least ${MIN_OPS_TOKEN_LENGTH} characters, got ${token.length}: e.g. openssl rand -hex 32`;
  }
  if (token === undefined && !isLoopbackHost(opsHost)) {
    return `the ops port would listen on ${opsHost} without a token: /snapshot hands out every tenant's data; ` +
      'set OPS_TOKEN (or --ops-token) to a secret, e.g. openssl rand -hex 32, or listen on 127.0.0.1 (OPS_HOST)';
  }
  return null;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Checks an Authorization header against the token, in constant time: both are hashed first, so
 * neither the token's length nor its first differing byte shows in the time taken.
 */
export function opsTokenMatcher(token: string): (authorization: string | undefined) => boolean {
  const want = digest(token);
  return (authorization) => {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    return timingSafeEqual(digest(m ? m[1]! : ''), want) && m !== null;
  };
}

/** The header a client of the ops port sends the token in. */
export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
