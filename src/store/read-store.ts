import type { Statement } from 'better-sqlite3';
import { openReader } from './connections';
import type { Db } from './db';
import { storedCursorSecret } from './secrets';

/**
 * The one door of the serving side (read models, serve/) to a read connection: it hands out no
 * connection. Every SQL text is prepared once per connection and reused; the statements themselves
 * are the store's (src/store/reads/), named functions that take a ReadStore.
 */
export class ReadStore {
  private readonly prepared = new Map<string, Statement>();
  private readonly plucked = new Map<string, Statement>();
  private readonly raw = new Map<string, Statement>();
  private probe: Statement | null = null;

  constructor(private readonly db: Db) {}

  /** The database file this store reads. */
  get file(): string {
    return this.db.name;
  }

  close(): void {
    this.db.close();
  }

  /**
   * `read` inside one read transaction: everything it reads is of one snapshot, even while another
   * connection commits.
   */
  snapshot<T>(read: () => T): T {
    return this.db.transaction(read)();
  }

  /**
   * snapshot() for a reader that awaits between reads (an export writes files as it goes): a read
   * transaction begun now and held until the returned function is called. WAL mode lets writers
   * commit meanwhile; their pages are checkpointed into the file only after it ends, so hold it for
   * one export, not longer.
   */
  hold(): () => void {
    this.db.exec('BEGIN');
    // SQLite takes the snapshot at a transaction's first read, not at BEGIN.
    this.db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get();
    return () => {
      if (this.db.inTransaction) this.db.exec('COMMIT');
    };
  }

  /**
   * SQLite's `PRAGMA data_version` on this connection: its value changes whenever another connection
   * (in this process or another) committed since the previous call. About 4 us; prepared once.
   */
  dataVersion(): unknown {
    this.probe ??= this.db.prepare('PRAGMA data_version').pluck();
    return this.probe.get();
  }

  /** The database's cursor key (migration 014), or null in a file without one. */
  cursorSecret(): Buffer | null {
    return storedCursorSecret(this.db);
  }

  private stmt(sql: string): Statement {
    let s = this.prepared.get(sql);
    if (!s) this.prepared.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  all<T>(sql: string, ...params: unknown[]): T[] {
    return this.stmt(sql).all(...params) as T[];
  }

  /**
   * Rows as arrays of column values (better-sqlite3's raw mode), for the few reads of thousands of
   * rows: a named object per row is built through V8's C++ API at ~1.5 us a row, an array at half that.
   */
  rows<T extends unknown[]>(sql: string, ...params: unknown[]): T[] {
    let s = this.raw.get(sql);
    if (!s) this.raw.set(sql, (s = this.db.prepare(sql).raw(true)));
    return s.all(...params) as T[];
  }

  /**
   * The value of a query that returns one JSON text (json_group_array ...), parsed: for thousands of
   * small rows, one string and JSON.parse cost about half of the rows as arrays (see rows()).
   */
  json<T>(sql: string, ...params: unknown[]): T {
    return JSON.parse(this.value<string>(sql, ...params) ?? 'null') as T;
  }

  /** Rows one at a time, so a caller that stops early reads no further. */
  iterate<T>(sql: string, ...params: unknown[]): IterableIterator<T> {
    return this.stmt(sql).iterate(...params) as IterableIterator<T>;
  }

  /** Rows as arrays (see rows()), one at a time: a large range is never held whole. */
  iterateRaw<T extends unknown[]>(sql: string, ...params: unknown[]): IterableIterator<T> {
    let s = this.raw.get(sql);
    if (!s) this.raw.set(sql, (s = this.db.prepare(sql).raw(true)));
    return s.iterate(...params) as IterableIterator<T>;
  }

  get<T>(sql: string, ...params: unknown[]): T | undefined {
    return this.stmt(sql).get(...params) as T | undefined;
  }

  /** The first column of the first row. */
  value<T>(sql: string, ...params: unknown[]): T | undefined {
    return this.pluck(sql).get(...params) as T | undefined;
  }

  /** The first column of every row. */
  column<T>(sql: string, ...params: unknown[]): T[] {
    return this.pluck(sql).all(...params) as T[];
  }

  private pluck(sql: string): Statement {
    let s = this.plucked.get(sql);
    if (!s) this.plucked.set(sql, (s = this.db.prepare(sql).pluck()));
    return s;
  }
}

/**
 * A ReadStore on a read-only connection of its own (openReader): for the serving thread and each
 * build thread, so that data_version tells when any other connection committed.
 */
export function openReadStore(file: string): ReadStore {
  const db = openReader(file);
  db.pragma(`cache_size = ${-READ_CACHE_KIB}`);
  return new ReadStore(db);
}

/**
 * Page cache of a read store (the serving thread's, each build thread's): SQLite's default is 2 MiB,
 * 125 of the store's 16 KiB pages. 8 MiB holds a report's read-model pages (migrations 022-026: rows
 * per pair and period, no longer a year of runs) with room; filled only as pages are read, and
 * bounded. It was 32 MiB when filtered years read the runs: three connections full of it were ~70 MB
 * of a serve's memory under a flood, for builds no faster (docs/decisions.md, "Memory outside the
 * body cache").
 */
const READ_CACHE_KIB = 8 * 1024;
