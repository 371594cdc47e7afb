// A consistent copy of a live database: SQLite's online backup from a read-only connection, so the
// writer (Kafka thread, replay) keeps going while pages are copied and the copy is one committed
// state, Kafka offsets (source_positions) and data versions included. Used by `snapshot` and by the
// ops port's GET /snapshot, which new replicas bootstrap from (`serve --bootstrap-from`).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { openDb } from './db';
import { heldShard, shardLabel } from './shard';

/** How GET /snapshot (src/ops/server.ts) names the copy's checksum and schema version, and a replica reads them. */
export const SNAPSHOT_SHA256_HEADER = 'x-snapshot-sha256';
export const SNAPSHOT_SCHEMA_HEADER = 'x-snapshot-schema-version';
/** The shard the copy holds, as "K/N of P" (absent: every partition): a replica refuses a snapshot that lacks its partitions. */
export const SNAPSHOT_SHARD_HEADER = 'x-snapshot-shard';

export interface SnapshotProgress {
  (copiedPages: number, totalPages: number, pageSize: number): void;
}

export interface SnapshotInfo {
  bytes: number;
  /** Hex SHA-256 of the file's bytes: what a replica checks the download against. */
  sha256: string;
  /** PRAGMA user_version of the copy: the migrations it has. */
  schemaVersion: number;
  /** The shard it holds, "K/N of P"; null: every partition. */
  shard: string | null;
}

/**
 * Writes a consistent copy of `dbFile` to `out` (replaced); returns its size, checksum and schema
 * version. The copy is made as OUT.part and renamed when complete, so `out` is never a half-copied
 * database, whenever the process dies; a .part left by a killed run is replaced by the next one.
 * The WAL and shared-memory files of a replaced `out` go too: SQLite cannot tell whose WAL it finds
 * beside a file, and would read the old one's committed frames into the copy when it is opened.
 */
export async function writeSnapshot(dbFile: string, out: string, progress?: SnapshotProgress): Promise<SnapshotInfo> {
  // Read-only: a missing, empty, foreign, newer or damaged file is a DbOpenError naming it.
  const db = openDb(dbFile, { readonly: true });
  const part = `${out}.part`;
  let info: SnapshotInfo;
  try {
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const schemaVersion = db.pragma('user_version', { simple: true }) as number;
    // Written once, when a shard first starts (or is cut): the copy holds the same row.
    const held = heldShard(db);
    const shard = held === null ? null : shardLabel(held);
    removeFiles(part);
    await db.backup(part, {
      progress: ({ totalPages, remainingPages }) => {
        progress?.(totalPages - remainingPages, totalPages, pageSize);
        return 100; // pages per step (better-sqlite3's default): the writer gets the lock between steps
      },
    });
    info = { bytes: fs.statSync(part).size, sha256: await sha256Of(part), schemaVersion, shard };
    removeWal(out);
    fs.renameSync(part, out);
  } catch (e) {
    removeFiles(part);
    throw e;
  } finally {
    db.close();
  }
  return info;
}

/**
 * The WAL and shared-memory files beside a database file, if present: SQLite cannot tell whose WAL it
 * finds beside a file, and reads its committed frames into whatever file is there when it is opened.
 */
export function removeWal(file: string): void {
  for (const suffix of ['-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
}

/** A database file and its WAL and shared-memory files, if present. */
export function removeFiles(file: string): void {
  fs.rmSync(file, { force: true });
  removeWal(file);
}

export function sha256Of(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    fs.createReadStream(file).on('data', (c) => hash.update(c)).on('error', reject).on('end', () => resolve(hash.digest('hex')));
  });
}
