// A body encoded once into what every answer of it sends (a Ready): its JSON bytes, the gzip and
// brotli variants at the effort its size gets, its strong ETag and headers, and what it costs in
// memory. Split from cache.ts, which decides which Ready bodies are kept and which are current.
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';

/** A response body ready to send: serialized and compressed once, when it is built. */
export interface Ready {
  json: Buffer;
  gzip: Buffer | null;
  br: Buffer | null;
  /**
   * A large body's gzip variant is not made with it: made by gzipOf on the first request that takes
   * gzip but not br (most clients take br). Until then gzip is null and this is true.
   */
  gzipLater: boolean;
  /** Strong ETag of the JSON bytes; the compressed variants append -gz / -br (RFC 9110: one per representation). */
  etag: string;
  version: number;
  /**
   * The version of the data the body was built from (store inputsVersion: the counters of the kinds
   * of change its endpoint depends on); -1 when not known (account bodies). While a request's is the
   * same, the body's bytes are those of the current data, whatever version the project has moved to.
   */
  inputs: number;
  updatedAt: string;
  /** updatedAt as an HTTP date, formatted once. */
  lastModified: string;
  /**
   * Headers that belong to this body and go out with every representation of it, 304s included
   * (lower-case names): e.g. the next page's Link, or how fresh the data is.
   */
  headers: Readonly<Record<string, string>>;
}

/** Bodies this small are sent as they are: compressing them saves less than it costs. */
const COMPRESS_MIN_BYTES = 1024;

/**
 * The bytes in a memory block of their own. Small Buffers are slices of node's shared 8 KiB pool and
 * zlib's results slices of larger chunks: cached (or sent from a build thread, which copies the whole
 * block), a 1.5 KB body would hold 40 KiB that the cache's byte count never sees.
 */
function own(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/** How hard gzip (level 1-9) and brotli (quality 0-11) work on a body. */
export interface Effort { gzip: number; brotli: number }

/** Bodies up to LARGE_BODY_BYTES, and files compressed once per process (pages.ts). */
export const THOROUGH: Effort = { gzip: 6, brotli: 5 };
/**
 * Bodies above LARGE_BODY_BYTES: a cache miss pays its compression in its latency, and that grows with
 * the size. On the year-long trend (486 KB) gzip 6 + brotli 5 took ~5.7 ms of an ~10 ms build, gzip 3 +
 * brotli 4 ~2.6 ms, for variants 22 % (gzip) and 11 % (brotli) larger (docs/benchmarks.md, "Large
 * bodies compressed faster"). The build makes only the brotli variant of such a body (gzipLater).
 */
export const QUICK: Effort = { gzip: 3, brotli: 4 };
const LARGE_BODY_BYTES = 64 * 1024;
/** What the cache counts for a gzip variant not made yet: gzip 3 was 1.37x brotli 4 on the trend. */
const GZIP_OVER_BR = 1.5;

const effortFor = (bytes: Buffer): Effort => (bytes.length > LARGE_BODY_BYTES ? QUICK : THOROUGH);

const gzip = (bytes: Buffer, level: number): Buffer => own(zlib.gzipSync(bytes, { level }));

const brotli = (bytes: Buffer, quality: number): Buffer =>
  own(zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }));

/** Bytes as gzip and brotli: a body at the effort its size gets, unless told. */
export function compressed(bytes: Buffer, effort: Effort = effortFor(bytes)): { gzip: Buffer; br: Buffer } {
  return { gzip: gzip(bytes, effort.gzip), br: brotli(bytes, effort.brotli) };
}

/**
 * The body's gzip variant, made now if it was left for later (the bytes an eager build would have
 * made). The cache counted it in advance (readySize), so the entry does not outgrow its count by much.
 */
export function gzipOf(r: Ready): Buffer | null {
  if (r.gzipLater) {
    r.gzip = gzip(r.json, effortFor(r.json).gzip);
    r.gzipLater = false;
  }
  return r.gzip;
}

/** The strong ETag of bytes (the compressed variants append -gz / -br: send.ts encodedEtag). */
export function strongEtag(bytes: Buffer): string {
  return `"${createHash('sha1').update(bytes).digest('base64url')}"`;
}

/** A body encoded once into what every answer of it sends: its JSON bytes, compressed variants and headers. */
export function encodeBody(body: unknown, version: number, updatedAt: string, headers: Record<string, string> = {}, inputs = -1): Ready {
  return encodeBodyText(JSON.stringify(body), version, updatedAt, headers, inputs);
}

/** encodeBody() for a body that is JSON text already. */
export function encodeBodyText(text: string, version: number, updatedAt: string, headers: Record<string, string> = {}, inputs = -1): Ready {
  const json = own(Buffer.from(text));
  const compress = json.length >= COMPRESS_MIN_BYTES;
  const effort = effortFor(json);
  const gzipLater = json.length > LARGE_BODY_BYTES;
  return {
    json,
    gzip: compress && !gzipLater ? gzip(json, effort.gzip) : null,
    br: compress ? brotli(json, effort.brotli) : null,
    gzipLater,
    etag: strongEtag(json),
    version,
    inputs,
    updatedAt,
    lastModified: new Date(updatedAt).toUTCString(),
    headers,
  };
}

export function readySize(r: Ready): number {
  let headerBytes = 0;
  for (const [k, v] of Object.entries(r.headers)) headerBytes += k.length + v.length;
  const gzipBytes = r.gzip?.length ?? (r.gzipLater ? Math.ceil((r.br?.length ?? 0) * GZIP_OVER_BR) : 0);
  return r.json.length + gzipBytes + (r.br?.length ?? 0) + 256 + headerBytes;
}
