import type { Statement } from 'better-sqlite3';
import type { Db } from './db';

/**
 * Where each prompt run's row is, by its id (migration 011): run_ids, filled in bulk instead of row
 * by row.
 *
 * Run ids are random UUIDs, so an index on them takes each new run at a random place: a batch of
 * 1,000 runs dirtied nearly every page of it, and the WAL got those pages again at every commit
 * (more than half of what a replay wrote, ~1.5 s of its writer). Here a writer keeps the runs it
 * inserted in memory (`pending`) and puts them in run_ids together, sorted, when there are
 * PENDING_MAX of them or it settles: each index page is written once per flush, not once per batch.
 *
 * run_ids holds every run whose rowid is at most the watermark (store_meta 'run_ids_through'); the
 * runs after it are this writer's pending ones. Whoever finds rows after the watermark it does not
 * hold (a writer that was killed, another writer's commits: PRAGMA data_version) indexes them first,
 * in its own transaction, so no run is ever looked up and missed.
 */

/** Runs kept in memory before they are indexed together (~100 bytes each). */
const PENDING_MAX = 100_000;

export class RunIndex {
  private readonly pending = new Map<string, number>();
  private stale = true;
  /** The watermark as of this writer's last sync or flush; 0 while run_ids is empty (a fresh file). */
  private through = 0;
  private readonly stmts: { find: Statement; through: Statement; setThrough: Statement; catchUp: Statement; last: Statement };

  constructor(db: Db) {
    this.stmts = {
      find: db.prepare('SELECT run FROM run_ids WHERE id = ?').pluck(),
      through: db.prepare("SELECT value FROM store_meta WHERE key = 'run_ids_through'").pluck(),
      setThrough: db.prepare("INSERT INTO store_meta (key, value) VALUES ('run_ids_through', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
      catchUp: db.prepare('INSERT OR IGNORE INTO run_ids (id, run) SELECT id, rowid FROM runs WHERE rowid > ? ORDER BY id'),
      last: db.prepare('SELECT coalesce(max(rowid), 0) FROM runs').pluck(),
    };
  }

  /**
   * At the start of a write transaction. `othersWrote`: another connection committed since this
   * writer's last transaction: its runs after the watermark are indexed now (and this writer's with them).
   */
  begin(othersWrote: boolean): void {
    if (!othersWrote && !this.stale) return;
    this.indexUnindexed();
    this.stale = false;
  }

  /** The transaction failed: the pending runs it added are not in the table; the next one indexes what is. */
  fail(): void {
    this.stale = true;
  }

  /**
   * The row of a run id, or undefined for a run never stored. While the watermark is 0, run_ids is
   * empty and every stored run is pending: a replay into a fresh file asks SQLite nothing until its
   * first flush (~2 us a run here).
   */
  find(id: string): number | undefined {
    const at = this.pending.get(id);
    if (at !== undefined || this.through === 0) return at;
    return this.stmts.find.get(id) as number | undefined;
  }

  /** A run just inserted at `rowid`. */
  added(id: string, rowid: number): void {
    this.pending.set(id, rowid);
  }

  /** At a batch's end: the pending runs indexed once there are enough of them to be worth a pass over run_ids. */
  finish(): void {
    if (this.pending.size >= PENDING_MAX) this.flush();
  }

  /**
   * Every pending run indexed (a writer's last step, or a full `pending`). The pending runs are all
   * the rows after the watermark (another writer's would have been indexed when this one began), so
   * one statement sorts them by id and inserts them, in C.
   */
  flush(): void {
    if (this.pending.size === 0) return;
    this.indexUnindexed();
  }

  /** Every row after the watermark put in run_ids, and the watermark moved to the last row. */
  private indexUnindexed(): void {
    this.stmts.catchUp.run((this.stmts.through.get() as number | undefined) ?? 0);
    this.through = this.stmts.last.get() as number;
    this.stmts.setThrough.run(this.through);
    this.pending.clear();
  }
}
