// What the newer migrations add, taken back: a test that checks a migration computes the writer's rows
// drops them from a file of this build and opens it again. One table, so a new migration is one entry
// here, not an edit of every test that migrates a file again.
import { knownSchemaVersion, openDb, type Db } from '../../src/store';

/** Each migration's additions taken back (SQL), by its number. */
const TAKEN_BACK: Readonly<Record<number, string>> = {
  22: `DROP TABLE slice_days; DROP TABLE slice_hits;
  CREATE INDEX runs_slices ON runs (project, dims, completed_at, id, json_remove(facts, '$[7]')) WHERE status = 'succeeded' AND dims IS NOT NULL;`,
  23: 'DROP TABLE slice_months; DROP TABLE slice_month_hits;',
  24: 'DROP TABLE slice_dims; DROP TABLE slice_pairs; DROP TABLE slice_pair_dims;',
  25: 'DROP TABLE range_totals; DROP TABLE range_hit_totals;',
  26: 'DROP TABLE slice_values; DROP TABLE slice_value_months;',
};

/** The SQL that takes back every migration after `version` (from 21 on), newest first; user_version is left to the caller. */
export function undoAfter(version: number): string {
  const out: string[] = [];
  for (let v = knownSchemaVersion(); v > version; v -= 1) {
    const sql = TAKEN_BACK[v];
    if (sql === undefined) throw new Error(`test/helpers/migrations.ts: migration ${v} has no entry to take it back`);
    out.push(sql);
  }
  return out.join(' ');
}

/**
 * A file of this build taken back to schema `version`, closed and opened again: the newer migrations
 * run on it, so its rows are what they compute. The caller closes the connection returned.
 */
export function migratedAgain(db: Db, version: number): Db {
  db.exec(`${undoAfter(version)} PRAGMA user_version = ${version};`);
  const file = db.name;
  db.close();
  return openDb(file);
}
