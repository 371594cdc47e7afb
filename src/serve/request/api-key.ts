import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** `X-API-Key: K` or `Authorization: ApiKey K`; null when neither is there. */
export function presentedKey(headers: IncomingHttpHeaders): string | null {
  const header = headers['x-api-key'];
  return keyFrom(typeof header === 'string' ? header : undefined, headers.authorization);
}

/** The key from the values of the two headers that may carry it (X-API-Key first). */
export function keyFrom(xApiKey: string | undefined, authorization: string | undefined): string | null {
  const trimmed = xApiKey?.trim();
  if (trimmed) return trimmed;
  const m = /^ApiKey\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m ? m[1]! : null;
}

/** The SHA-256 of the key a request presents; null when it presents none. */
export function presentedKeyHash(headers: IncomingHttpHeaders): string | null {
  const key = presentedKey(headers);
  return key === null ? null : keyHash(key);
}

/** Keys are only ever handled as their SHA-256: never stored, compared or logged in plain. */
export function keyHash(key: string): string {
  return hash('sha256', key, 'hex');
}
