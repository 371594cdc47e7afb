import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { accountForKeyHash, type ReadStore } from '../readmodels';
import { HttpError } from './errors';

/** `X-API-Key: K` or `Authorization: ApiKey K`. */
export function presentedKey(ctx: Context): string | null {
  const header = ctx.get('x-api-key');
  if (header) return header.trim();
  const m = /^ApiKey\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  return m ? m[1]! : null;
}

export function keyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * The account of the presented key, or 401. The key is hashed at once and only the hash is used;
 * the plaintext is never stored, compared or logged.
 */
export function authenticate(ctx: Context, store: ReadStore): { accountId: string; keyHash: string } {
  const key = presentedKey(ctx);
  if (!key) throw new HttpError(401, 'Invalid API key');
  const hash = keyHash(key);
  const accountId = accountForKeyHash(store, hash);
  if (!accountId) throw new HttpError(401, 'Invalid API key');
  return { accountId, keyHash: hash };
}
