import type { Db } from './db';
import { isNewer, isSame, minIso, type Outcome, type Version } from './versions';

/**
 * How one entity table is upserted. Every entity follows the same rules: last writer wins by
 * version, deletes are versioned tombstones, created_at is the earliest upsert seen and
 * updated_at the winning one's occurred_at (for entities whose events carry neither).
 */
export interface EntitySpec {
  table: string;
  /** Columns written from the event's data (besides id). */
  columns: readonly string[];
  created?: boolean;
  updated?: boolean;
  deletable?: boolean;
}

type Row = Record<string, unknown>;
export type Values = Record<string, string | number | null>;

export class EntityTable {
  private readonly get;
  private readonly put;
  private readonly setCreated;
  private readonly visible: string[];

  constructor(db: Db, private readonly spec: EntitySpec) {
    const cols = ['id', ...spec.columns];
    if (spec.created) cols.push('created_at');
    if (spec.updated) cols.push('updated_at');
    if (spec.deletable) cols.push('deleted');
    this.visible = cols.slice(1);
    cols.push('v_at', 'v_id');
    this.get = db.prepare(`SELECT * FROM ${spec.table} WHERE id = ?`);
    this.put = db.prepare(`INSERT INTO ${spec.table} (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})
      ON CONFLICT (id) DO UPDATE SET ${cols.slice(1).map((c) => `${c} = excluded.${c}`).join(', ')}`);
    this.setCreated = spec.created ? db.prepare(`UPDATE ${spec.table} SET created_at = ? WHERE id = ?`) : undefined;
  }

  current(id: string): Row | undefined {
    return this.get.get(id) as Row | undefined;
  }

  upsert(id: string, v: Version, values: Values): Outcome {
    return this.write(id, v, values, false);
  }

  /** A versioned tombstone; `keep` carries the parent ids of a row never seen before (e.g. project_id). */
  remove(id: string, v: Version, keep: Values): Outcome {
    return this.write(id, v, keep, true);
  }

  private write(id: string, v: Version, values: Values, deleting: boolean): Outcome {
    const cur = this.current(id);
    const curCreated = (cur?.created_at as string | null | undefined) ?? null;
    const createdAt = deleting ? curCreated : minIso(curCreated, v.at);
    if (cur && !isNewer(v, cur.v_at as string, cur.v_id as string)) {
      // A late, older upsert still tells us the entity existed earlier.
      if (this.setCreated && !deleting && createdAt !== curCreated) {
        this.setCreated.run(createdAt, id);
        return 'applied';
      }
      return isSame(v, cur.v_at as string, cur.v_id as string) || this.sameFact(cur, values, deleting) ? 'duplicate' : 'stale';
    }
    const next: Row = { id, v_at: v.at, v_id: v.id };
    // A tombstone keeps only its parent ids: what a deleted row holds must not depend on whether
    // its upserts arrived before or after the delete.
    for (const c of this.spec.columns) next[c] = values[c] ?? null;
    if (this.spec.created) next.created_at = createdAt;
    if (this.spec.updated) next.updated_at = deleting ? null : v.at;
    if (this.spec.deletable) next.deleted = deleting ? 1 : 0;
    this.put.run(next);
    return !cur || this.visible.some((c) => cur[c] !== next[c]) ? 'applied' : 'duplicate';
  }

  /** The same fact under another event id (a retry): same data, or a delete of a deleted row. */
  private sameFact(cur: Row, values: Values, deleting: boolean): boolean {
    if (deleting) return cur.deleted === 1;
    return cur.deleted !== 1 && this.spec.columns.every((c) => cur[c] === (values[c] ?? null));
  }
}
