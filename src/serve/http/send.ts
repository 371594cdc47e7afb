import type { Context } from 'koa';
import { METRIC_DEFINITIONS_VERSION } from '../../readmodels/methodology';
import { gzipOf, type Ready } from '../bodies/encode';
import { CACHE_CONTROL, NOSNIFF } from '../request/errors';

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

interface Accepts { br: boolean; gzip: boolean }

/** Clients send a handful of distinct Accept-Encoding values: each is parsed once. Bounded. */
const acceptsMemo = new Map<string, Accepts>();

function accepts(header: string): Accepts {
  let a = acceptsMemo.get(header);
  if (!a) {
    if (acceptsMemo.size >= 256) acceptsMemo.clear();
    acceptsMemo.set(header, (a = { br: quality(header, 'br') > 0, gzip: quality(header, 'gzip') > 0 }));
  }
  return a;
}

/** The smallest variant the client accepts (br, then gzip, then identity), whatever order it lists them in. */
export function pickEncoding(acceptEncoding: string | undefined, r: Ready): Encoding {
  if (!acceptEncoding || (!r.gzip && !r.br)) return 'identity';
  const a = accepts(acceptEncoding);
  if (r.br && a.br) return 'br';
  if ((r.gzip || r.gzipLater) && a.gzip) return 'gzip';
  return 'identity';
}

/** The ETag of one encoding of a representation: one per representation (RFC 9110), -gz / -br appended. */
export function encodedEtag(etag: string, encoding: Encoding): string {
  return encoding === 'identity' ? etag : `"${etag.slice(1, -1)}-${encoding === 'br' ? 'br' : 'gz'}"`;
}

/** If-None-Match names this representation in any of its encodings (weak or strong), or is `*`. */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const variants = [etag, encodedEtag(etag, 'gzip'), encodedEtag(etag, 'br')];
  return ifNoneMatch.split(',').some((t) => variants.includes(t.trim().replace(/^W\//, '')));
}

export interface Representation {
  status: 200 | 304;
  /** Shared between requests: never modify. */
  headers: Readonly<Record<string, string>>;
  body: Buffer | null;
}

interface Variant { ok: Representation; notModified: Representation }

/**
 * What a body served stale says (RFC 9211 Cache-Status): answered from this cache although the data
 * has moved on (at most the staleness bound: docs/operations.md), and a newer body is being built.
 * A current body goes without it. Its ETag, X-Data-Version and X-Data-As-Of are its own either way.
 */
export const STALE_CACHE_STATUS = 'visibility-api; hit; fwd=stale';

/** Each ready body's representations (current and stale), header objects included, each made once on its first use. */
const variantsOf = new WeakMap<Ready, Partial<Record<Encoding | `${Encoding}-stale`, Variant>>>();

function variant(r: Ready, encoding: Encoding, stale: boolean): Variant {
  const body = encoding === 'br' ? r.br : encoding === 'gzip' ? gzipOf(r) : r.json;
  const common = {
    etag: encodedEtag(r.etag, encoding),
    'cache-control': CACHE_CONTROL,
    vary: 'Accept-Encoding, Authorization, X-API-Key',
    'x-data-version': String(r.version),
    'last-modified': r.lastModified,
    // Which metric definitions the numbers follow (GET /v1/public/methodology): on every answer, 304s included.
    'metric-definitions-version': METRIC_DEFINITIONS_VERSION,
    'x-content-type-options': NOSNIFF,
    ...r.headers,
    ...(stale ? { 'cache-status': STALE_CACHE_STATUS } : {}),
  };
  const ok: Record<string, string> = { ...common, 'content-type': 'application/json; charset=utf-8', 'content-length': String(body!.length) };
  if (encoding !== 'identity') ok['content-encoding'] = encoding;
  return { ok: { status: 200, headers: Object.freeze(ok), body }, notModified: { status: 304, headers: Object.freeze(common), body: null } };
}

/**
 * What to send for ready bytes: no serialization, compression or header building happens here
 * after the first time (a large body's gzip variant is made on the first request that takes it).
 * Each variant has its own strong ETag; a conditional request matching any of them gets 304.
 */
export function represent(r: Ready, acceptEncoding: string | undefined, ifNoneMatch: string | undefined, stale = false): Representation {
  const encoding = pickEncoding(acceptEncoding, r);
  let v = variantsOf.get(r);
  if (!v) variantsOf.set(r, (v = {}));
  const pair = stale ? (v[`${encoding}-stale`] ??= variant(r, encoding, true)) : (v[encoding] ??= variant(r, encoding, false));
  return ifNoneMatch && etagMatches(ifNoneMatch, r.etag) ? pair.notModified : pair.ok;
}

/** Sends a representation through Koa (HEAD: Koa drops the body and keeps the headers). */
export function sendReady(ctx: Context, r: Ready, stale = false): void {
  const rep = represent(r, ctx.get('accept-encoding') || undefined, ctx.get('if-none-match') || undefined, stale);
  ctx.set(rep.headers);
  ctx.status = rep.status;
  if (rep.body) ctx.body = rep.body;
}
