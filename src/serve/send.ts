import type { Context } from 'koa';
import type { Ready } from './cache';

export type Encoding = 'br' | 'gzip' | 'identity';

/** q-value of a content coding in Accept-Encoding (RFC 9110 12.5.3): explicit entry, else `*`, else 0. */
function quality(header: string, coding: string): number {
  let star = 0;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (name === coding) return Number.isFinite(q) ? q : 0;
    if (name === '*') star = Number.isFinite(q) ? q : 0;
  }
  return star;
}

/** The smallest variant the client accepts (br, then gzip, then identity), whatever order it lists them in. */
export function pickEncoding(acceptEncoding: string | undefined, r: Ready): Encoding {
  if (!acceptEncoding || (!r.gzip && !r.br)) return 'identity';
  if (r.br && quality(acceptEncoding, 'br') > 0) return 'br';
  if (r.gzip && quality(acceptEncoding, 'gzip') > 0) return 'gzip';
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

export interface Representation {
  status: 200 | 304;
  headers: Record<string, string>;
  body: Buffer | null;
}

/**
 * What to send for ready bytes: no serialization or compression happens here. Each variant has
 * its own strong ETag; a conditional request matching any of them gets 304.
 */
export function represent(r: Ready, acceptEncoding: string | undefined, ifNoneMatch: string | undefined): Representation {
  const encoding = pickEncoding(acceptEncoding, r);
  const headers: Record<string, string> = {
    etag: encoding === 'identity' ? r.etag : `"${r.etag.slice(1, -1)}-${encoding === 'br' ? 'br' : 'gz'}"`,
    'cache-control': 'private, no-cache',
    vary: 'Accept-Encoding, Authorization, X-API-Key',
    'x-data-version': String(r.version),
    'last-modified': r.lastModified,
  };
  if (ifNoneMatch && etagMatches(ifNoneMatch, r.etag)) return { status: 304, headers, body: null };
  headers['content-type'] = 'application/json; charset=utf-8';
  if (encoding !== 'identity') headers['content-encoding'] = encoding;
  return { status: 200, headers, body: encoding === 'br' ? r.br : encoding === 'gzip' ? r.gzip : r.json };
}

/** Sends a representation through Koa (HEAD: Koa drops the body and keeps the headers). */
export function sendReady(ctx: Context, r: Ready): void {
  const rep = represent(r, ctx.get('accept-encoding') || undefined, ctx.get('if-none-match') || undefined);
  ctx.set(rep.headers);
  ctx.status = rep.status;
  if (rep.body) ctx.body = rep.body;
}
