// The shard a database holds (migration 019): read by the server (what it may answer) and written by
// the Kafka consumer when it first knows the events topics' partition count.
import { WHOLE, type Shard } from '../lib/partition';
import type { Db } from './db';

/** A shard with the partition count of the events topics it was cut from. */
export interface HeldShard extends Shard {
  partitions: number;
}

/** What the database holds: its shard row, or null for everything (no row, or a schema before 019). */
export function heldShard(db: Db): HeldShard | null {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'shard'").get();
  if (table === undefined) return null;
  return (db.prepare('SELECT k, n, partitions FROM shard WHERE id = 1').get() as HeldShard | undefined) ?? null;
}

/** Records what the database holds from now on; the whole of every topic removes the row. */
export function holdShard(db: Db, shard: Shard, partitions: number): void {
  if (shard.n === WHOLE.n) {
    db.prepare('DELETE FROM shard').run();
    return;
  }
  db.prepare('INSERT INTO shard (id, k, n, partitions) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET k = excluded.k, n = excluded.n, partitions = excluded.partitions')
    .run(shard.k, shard.n, partitions);
}
