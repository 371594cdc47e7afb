// A new replica's first data: a peer's consistent snapshot (GET OPS_URL/snapshot, see
// src/ops/server.ts), downloaded, checked and put in place, so the Kafka consumer resumes from the
// offsets stored in it instead of reading the topics from the start (serve --bootstrap-from).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { covers, shardName, WHOLE, type Shard } from '../lib/partition';
import {
  DbOpenError, knownSchemaVersion, openDb, removeFiles, removeWal, SNAPSHOT_SCHEMA_HEADER as SCHEMA_HEADER, SNAPSHOT_SHA256_HEADER as SHA256_HEADER,
  parseShardLabel, SNAPSHOT_SHARD_HEADER as SHARD_HEADER, verifyDb,
} from '../store';

/** A snapshot that cannot be used: the peer, the transfer or the file is wrong. Nothing is left in place. */
export class BootstrapError extends Error {}

/** The bootstrap was stopped by its AbortSignal (SIGTERM, SIGINT): the partial download is removed. */
export class BootstrapAborted extends BootstrapError {}

export interface Bootstrapped {
  bytes: number;
  seconds: number;
  schemaVersion: number;
  /** Where the snapshot came from: the peer's URL, or where its redirects led. */
  url: string;
}

export interface BootstrapOptions {
  /** The peer's ops token, sent as Authorization: Bearer (the peer's /snapshot needs it when it has one). */
  token?: string;
  /** Stops the bootstrap at once: the partial file is removed and the promise rejects with BootstrapAborted. */
  signal?: AbortSignal;
  /** Give up when the body brings less than minBytesPerSecond over a window this long (ms): a stall, or a trickle. */
  idleMs?: number;
  minBytesPerSecond?: number;
  /** Give up when the whole bootstrap (request, download, checks) takes longer than this (ms). */
  timeoutMs?: number;
  /** Give up when the answer's headers take longer than this (ms): the peer copies its database before it answers. */
  answerMs?: number;
  /**
   * The shard this replica will hold (default: every partition). A snapshot that lacks some of its
   * partitions (another shard's) is refused before a byte is written; one that holds more (a
   * resharding) is cut by the consumer when it starts (store cutShard).
   */
  shard?: Shard;
}

/** 30 s at under 64 KiB/s (a stall, or a peer that trickles bytes): a peer on a LAN that slow is not coming back (curl's --speed-time). */
export const DEFAULT_BOOTSTRAP_IDLE_MS = 30_000;
export const DEFAULT_BOOTSTRAP_MIN_BYTES_PER_SECOND = 64 * 1024;
/** 2 h: a 50 GB snapshot at 10 MB/s, with room to spare; a peer that trickles bytes cannot hold a replica longer. */
export const DEFAULT_BOOTSTRAP_TIMEOUT_MS = 2 * 60 * 60_000;
/** 5 min for the peer to copy its database and answer (undici's own header timeout is the same). */
export const DEFAULT_BOOTSTRAP_ANSWER_MS = 5 * 60_000;
/** Of a body that is not a snapshot (an error page), at most this much is read, for the message. */
const ERROR_BODY_BYTES = 4096;

const seconds = (ms: number): string => `${+(ms / 1000).toFixed(3)} s`;

/**
 * Downloads the peer's snapshot next to `dbFile` (as DBFILE.part), checks its length, SHA-256 and
 * schema version, opens and quick-checks it, then renames it to `dbFile`. A failure anywhere
 * removes the partial file and rejects with BootstrapError. What a killed bootstrap left is removed
 * first: a stale DBFILE.part-wal would be read into the new download when it is opened (SQLite
 * cannot tell whose WAL it is) and checkpointed into it on close.
 *
 * The peer is not trusted to behave: an answer other than 200 is read for 4 KiB at most; a body
 * without Content-Length is refused before a byte is written; more bytes than announced stop the
 * download; a peer that stalls or trickles (under 64 KiB/s for 30 s by default), that takes too long to
 * answer or to finish, is given up.
 */
export async function bootstrapFrom(opsUrl: string, dbFile: string, o: BootstrapOptions = {}): Promise<Bootstrapped> {
  const started = performance.now();
  const url = new URL('/snapshot', opsUrl);
  let at = url.href; // where the answer came from, once known (redirects followed)
  const part = `${dbFile}.part`;
  removeFiles(part);
  const idleMs = o.idleMs ?? DEFAULT_BOOTSTRAP_IDLE_MS;
  const timeoutMs = o.timeoutMs ?? DEFAULT_BOOTSTRAP_TIMEOUT_MS;
  // Every way of giving up aborts the one controller: the request, the body and the file write all stop.
  const abort = new AbortController();
  let stopped: BootstrapError | null = null;
  const stop = (e: BootstrapError): void => {
    stopped ??= e;
    abort.abort(e);
  };
  const onSignal = (): void => stop(new BootstrapAborted(`bootstrap from ${at} stopped before it finished`));
  if (o.signal?.aborted) onSignal();
  o.signal?.addEventListener('abort', onSignal, { once: true });
  const overall = setTimeout(() => stop(new BootstrapError(`gave up on ${at}: the bootstrap took longer than ${seconds(timeoutMs)} (--bootstrap-timeout)`)), timeoutMs);
  const answer = setTimeout(() => stop(new BootstrapError(`gave up on ${at}: no answer within ${seconds(o.answerMs ?? DEFAULT_BOOTSTRAP_ANSWER_MS)}`)), o.answerMs ?? DEFAULT_BOOTSTRAP_ANSWER_MS);
  const minBytes = Math.ceil(((o.minBytesPerSecond ?? DEFAULT_BOOTSTRAP_MIN_BYTES_PER_SECOND) * idleMs) / 1000);
  let bytes = 0;
  let idle: NodeJS.Timeout | undefined; // checks each window once the answer is in
  try {
    if (stopped) throw stopped;
    const res = await fetch(url, { signal: abort.signal, headers: o.token ? { authorization: `Bearer ${o.token}` } : {} }).catch((e: unknown) => {
      throw stopped ?? new BootstrapError(`cannot reach ${url.href}: ${e instanceof Error ? (e.cause as Error | undefined)?.message ?? e.message : String(e)}`);
    });
    at = res.url || url.href;
    clearTimeout(answer);
    let windowStart = 0;
    idle = setInterval(() => {
      if (bytes - windowStart < minBytes) stop(new BootstrapError(`gave up on ${at}: ${bytes - windowStart} bytes in ${seconds(idleMs)}, under ${minBytes} (--bootstrap-idle-timeout)`));
      windowStart = bytes;
    }, idleMs);
    if (res.status !== 200 || res.body === null) throw new BootstrapError(`${at} answered ${res.status}: ${(await head(res, ERROR_BODY_BYTES)).slice(0, 200)}`);
    const length = res.headers.get('content-length');
    const expected = { sha256: res.headers.get(SHA256_HEADER), schema: Number(res.headers.get(SCHEMA_HEADER)), bytes: Number(length) };
    if (!expected.sha256 || !Number.isInteger(expected.schema)) throw new BootstrapError(`${at} is not a visibility-api snapshot (no ${SHA256_HEADER} / ${SCHEMA_HEADER})`);
    if (length === null || !Number.isSafeInteger(expected.bytes)) throw new BootstrapError(`${at} sent no Content-Length: a snapshot's length must be announced`);
    const wanted = o.shard ?? WHOLE;
    const held = peerShard(res.headers.get(SHARD_HEADER));
    if (held === null) throw new BootstrapError(`${at} sent ${SHARD_HEADER}: "${res.headers.get(SHARD_HEADER)}", not K/N of P`);
    if (!covers(held, wanted)) {
      throw new BootstrapError(`${at} holds shard ${shardName(held)}, which lacks partitions of ${wanted.n === 1 ? 'every partition' : `shard ${shardName(wanted)}`}: bootstrap from a peer of the same shard`);
    }
    if (expected.schema > knownSchemaVersion()) {
      throw new BootstrapError(`the peer's schema version ${expected.schema} is newer than this build's ${knownSchemaVersion()}: upgrade this replica first`);
    }
    const free = freeBytes(path.dirname(part));
    if (free !== null && expected.bytes > free) throw new BootstrapError(`${at} announces ${expected.bytes} bytes, more than the ${free} free beside ${dbFile}`);
    const hash = createHash('sha256');
    const count = new Transform({
      transform(chunk: Buffer, _enc, done): void {
        bytes += chunk.length;
        if (bytes > expected.bytes) return done(new BootstrapError(`${at} sent more than the ${expected.bytes} bytes it announced`));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
    await pipeline(body, count, fs.createWriteStream(part), { signal: abort.signal });
    clearInterval(idle);
    if (bytes !== expected.bytes) throw new BootstrapError(`snapshot cut short: ${bytes} of ${expected.bytes} bytes`);
    const sha256 = hash.digest('hex');
    if (sha256 !== expected.sha256) throw new BootstrapError(`snapshot checksum mismatch: got ${sha256}, the peer sent ${expected.sha256}`);
    checkOpens(part);
    if (stopped) throw stopped;
    removeWal(dbFile);
    fs.renameSync(part, dbFile);
    return { bytes, seconds: (performance.now() - started) / 1000, schemaVersion: expected.schema, url: at };
  } catch (e) {
    abort.abort(); // whatever is still open towards the peer
    removeFiles(part);
    if (stopped) throw stopped;
    if (e instanceof BootstrapError) throw e;
    throw new BootstrapError(`bootstrap from ${at} failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    for (const t of [overall, answer]) clearTimeout(t);
    clearInterval(idle);
    o.signal?.removeEventListener('abort', onSignal);
  }
}

/** The shard a snapshot holds, from its header: absent, every partition; null when the header is not one. */
function peerShard(header: string | null): Shard | null {
  return header === null ? WHOLE : parseShardLabel(header);
}

/** The first `max` bytes of a body as text; the rest is never read (the connection is dropped). */
async function head(res: Response, max: number): Promise<string> {
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let got = 0;
  try {
    while (got < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      got += value.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/** Free bytes on the file system holding `dir`, or null where that cannot be told. */
function freeBytes(dir: string): number | null {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

/** Opens the download as the service will (migrating an older schema) and runs quick_check. */
function checkOpens(file: string): void {
  try {
    const db = openDb(file, { mustExist: true });
    try {
      verifyDb(db, file);
    } finally {
      db.close();
    }
  } catch (e) {
    if (e instanceof DbOpenError) throw new BootstrapError(`the downloaded snapshot is not usable: ${e.message}`);
    throw e;
  }
}
