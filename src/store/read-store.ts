import type { Statement } from 'better-sqlite3';
import type { Db } from './db';

/**
 * Read access for the read models: every SQL text is prepared once per connection and reused. The
 * read models state their SELECTs as constants beside the code that shapes the rows (a reader finds
 * an endpoint's logic in one file); the store runs them, as it runs every other statement.
 */
export class ReadStore {
  private readonly prepared = new Map<string, Statement>();
  private readonly plucked = new Map<string, Statement>();
  private readonly raw = new Map<string, Statement>();

  constructor(readonly db: Db) {}

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
