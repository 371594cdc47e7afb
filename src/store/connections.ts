import Database from 'better-sqlite3';
import type { Db } from './db';

/**
 * A read-only connection of its own to an existing database file, for the serving thread and each
 * build thread: SQLite's data_version on it then tells when any other connection committed.
 * Waits up to 5 s for a writer's lock rather than failing a request at once.
 */
export function openReader(file: string): Db {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

/**
 * SQLite's error class, for callers that tell a storage failure from a bug by its `code` (or carry
 * one across a thread) without depending on the driver themselves.
 */
export const SqliteError = Database.SqliteError;
export type SqliteError = Database.SqliteError;

/** Folds the WAL into the file and empties it: a cleanly stopped database is complete on its own. */
export function checkpoint(db: Db): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
}

/** Closes a connection that wrote with synchronous = OFF: the WAL folded into the file and both synced first. */
export function closeDurably(db: Db): void {
  if (db.open) {
    db.pragma('synchronous = FULL');
    db.pragma('wal_checkpoint(TRUNCATE)');
  }
  db.close();
}
