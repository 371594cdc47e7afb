// A new replica's first data: a peer's consistent snapshot (GET OPS_URL/snapshot, see
// src/ops/server.ts), downloaded, checked and put in place, so the Kafka consumer resumes from the
// offsets stored in it instead of reading the topics from the start (serve --bootstrap-from).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DbOpenError, knownSchemaVersion, openDb, removeFiles, removeWal, SNAPSHOT_SCHEMA_HEADER as SCHEMA_HEADER, SNAPSHOT_SHA256_HEADER as SHA256_HEADER, verifyDb } from '../store';

/** A snapshot that cannot be used: the peer, the transfer or the file is wrong. Nothing is left in place. */
export class BootstrapError extends Error {}

export interface Bootstrapped {
  bytes: number;
  seconds: number;
  schemaVersion: number;
}

/**
 * Downloads the peer's snapshot next to `dbFile` (as DBFILE.part), checks its length, SHA-256 and
 * schema version, opens and quick-checks it, then renames it to `dbFile`. A failure anywhere
 * removes the partial file and rejects with BootstrapError. What a killed bootstrap left is removed
 * first: a stale DBFILE.part-wal would be read into the new download when it is opened (SQLite
 * cannot tell whose WAL it is) and checkpointed into it on close.
 */
export async function bootstrapFrom(opsUrl: string, dbFile: string): Promise<Bootstrapped> {
  const started = performance.now();
  const url = new URL('/snapshot', opsUrl);
  const part = `${dbFile}.part`;
  removeFiles(part);
  try {
    const res = await fetch(url).catch((e: unknown) => {
      throw new BootstrapError(`cannot reach ${url.href}: ${e instanceof Error ? (e.cause as Error | undefined)?.message ?? e.message : String(e)}`);
    });
    if (res.status !== 200 || res.body === null) throw new BootstrapError(`${url.href} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    const expected = { sha256: res.headers.get(SHA256_HEADER), schema: Number(res.headers.get(SCHEMA_HEADER)), bytes: Number(res.headers.get('content-length')) };
    if (!expected.sha256 || !Number.isInteger(expected.schema)) throw new BootstrapError(`${url.href} is not a visibility-api snapshot (no ${SHA256_HEADER} / ${SCHEMA_HEADER})`);
    if (expected.schema > knownSchemaVersion()) {
      throw new BootstrapError(`the peer's schema version ${expected.schema} is newer than this build's ${knownSchemaVersion()}: upgrade this replica first`);
    }
    const hash = createHash('sha256');
    let bytes = 0;
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
    body.on('data', (c: Buffer) => {
      hash.update(c);
      bytes += c.length;
    });
    await pipeline(body, fs.createWriteStream(part));
    if (bytes !== expected.bytes) throw new BootstrapError(`snapshot cut short: ${bytes} of ${expected.bytes} bytes`);
    const sha256 = hash.digest('hex');
    if (sha256 !== expected.sha256) throw new BootstrapError(`snapshot checksum mismatch: got ${sha256}, the peer sent ${expected.sha256}`);
    checkOpens(part);
    removeWal(dbFile);
    fs.renameSync(part, dbFile);
    return { bytes, seconds: (performance.now() - started) / 1000, schemaVersion: expected.schema };
  } catch (e) {
    removeFiles(part);
    if (e instanceof BootstrapError) throw e;
    throw new BootstrapError(`bootstrap from ${url.href} failed: ${e instanceof Error ? e.message : String(e)}`);
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
