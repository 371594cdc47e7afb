import type { Context } from 'koa';
import type { Ready } from './cache';

/** The smallest variant the client accepts (br, then gzip, then identity), whatever order it lists them in. */
function pickEncoding(ctx: Context, r: Ready): 'br' | 'gzip' | 'identity' {
  if (!r.gzip && !r.br) return 'identity';
  if (r.br && ctx.acceptsEncodings('br') === 'br') return 'br';
  if (r.gzip && ctx.acceptsEncodings('gzip') === 'gzip') return 'gzip';
  return 'identity';
}

function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const bare = etag.slice(1, -1);
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === etag || tag === `"${bare}-gz"` || tag === `"${bare}-br"`;
  });
}

/**
 * Sends ready bytes: no serialization or compression happens here. Conditional requests get 304;
 * HEAD gets the headers (Koa drops the body).
 */
export function sendReady(ctx: Context, r: Ready): void {
  const encoding = pickEncoding(ctx, r);
  const etag = encoding === 'identity' ? r.etag : `"${r.etag.slice(1, -1)}-${encoding === 'br' ? 'br' : 'gz'}"`;
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.set('Vary', 'Accept-Encoding, Authorization, X-API-Key');
  ctx.set('X-Data-Version', String(r.version));
  ctx.set('Last-Modified', new Date(r.updatedAt).toUTCString());
  const inm = ctx.get('if-none-match');
  if (inm && etagMatches(inm, r.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = 'application/json';
  if (encoding !== 'identity') ctx.set('Content-Encoding', encoding);
  ctx.body = encoding === 'br' ? r.br : encoding === 'gzip' ? r.gzip : r.json;
}
