import type { Db } from './db';

/**
 * The small numbers a run's row keys its project and run group by (migration 013: `keys`), so that
 * the runs' indexes hold ~10-30 bytes an entry instead of ~100. A number is given when an id is first
 * seen and means nothing else; the writer keeps the ones it used in memory.
 */
export class Keys {
  private readonly known = new Map<string, number>();
  private readonly find;
  private readonly add;

  constructor(db: Db) {
    this.find = db.prepare('SELECT n FROM keys WHERE id = ?').pluck();
    this.add = db.prepare('INSERT INTO keys (id) VALUES (?)');
  }

  /** The number of `id`, given now if it has none (inside the writer's transaction). */
  numberOf(id: string): number {
    let n = this.known.get(id);
    if (n !== undefined) return n;
    n = (this.find.get(id) as number | undefined) ?? Number(this.add.run(id).lastInsertRowid);
    if (this.known.size >= KEYS_KEPT) this.known.clear();
    this.known.set(id, n);
    return n;
  }

  /** The transaction failed: numbers it gave are not in the table any more. */
  fail(): void {
    this.known.clear();
  }
}

/** Ids kept in memory (a project a day makes one run group: ~18k a year for 50 projects). */
const KEYS_KEPT = 100_000;

/** SQL for the number of a project or run group id, for readers: binds the id. */
export const KEY_OF = '(SELECT n FROM keys WHERE id = ?)';
