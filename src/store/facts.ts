import type { Db } from './db';
import { EntityTable } from './entities';
import { isNewer, isSame, type Outcome, type Version } from './versions';

/** The entity tables, each upserted by natural id with the rules of EntityTable. */
export function entityTables(db: Db) {
  return {
    accounts: new EntityTable(db, { table: 'accounts', columns: ['name'] }),
    projects: new EntityTable(db, {
      table: 'projects', deletable: true,
      columns: ['company_id', 'name', 'domain', 'description', 'category_summary', 'status', 'created_at', 'updated_at'],
    }),
    engines: new EntityTable(db, { table: 'engines', columns: ['name', 'provider', 'model'] }),
    terms: new EntityTable(db, { table: 'terms', columns: ['project_id', 'value', 'kind'], created: true, deletable: true }),
    segments: new EntityTable(db, { table: 'segments', columns: ['project_id', 'name', 'description', 'active'], created: true, updated: true, deletable: true }),
    prompts: new EntityTable(db, { table: 'prompts', columns: ['project_id', 'text', 'segment_ids', 'active'], created: true, updated: true, deletable: true }),
    competitors: new EntityTable(db, { table: 'competitors', columns: ['project_id', 'name', 'domain', 'aliases'], created: true, updated: true, deletable: true }),
  };
}
export type EntityTables = ReturnType<typeof entityTables>;

/**
 * A fact about a pair (project x account, project x engine): one row per pair, last writer wins.
 * `on` is the boolean the events toggle (granted, tracked).
 */
export class PairTable {
  private readonly get;
  private readonly put;

  constructor(db: Db, table: string, private readonly keys: [string, string], flag: string, extra: string[] = []) {
    const cols = [...keys, flag, ...extra, 'v_at', 'v_id'];
    this.get = db.prepare(`SELECT * FROM ${table} WHERE ${keys[0]} = ? AND ${keys[1]} = ?`);
    this.put = db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})
      ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${cols.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}`);
  }

  apply(a: string, b: string, v: Version, values: Record<string, string | number>): Outcome {
    const cur = this.get.get(a, b) as Record<string, unknown> | undefined;
    if (cur && !isNewer(v, cur.v_at as string, cur.v_id as string)) {
      const retry = Object.entries(values).every(([k, val]) => cur[k] === val);
      return isSame(v, cur.v_at as string, cur.v_id as string) || retry ? 'duplicate' : 'stale';
    }
    this.put.run({ [this.keys[0]]: a, [this.keys[1]]: b, ...values, v_at: v.at, v_id: v.id });
    return !cur || Object.entries(values).some(([k, val]) => cur[k] !== val) ? 'applied' : 'duplicate';
  }
}

/** Two facts about one row, each with its own version (api key issued/revoked, run group started/completed). */
export class SplitFactTable {
  private readonly get;
  private readonly puts: Map<string, ReturnType<Db['prepare']>>;

  constructor(db: Db, table: string, idCol: string, private readonly parts: Record<string, { columns: string[]; version: [string, string] }>) {
    this.get = db.prepare(`SELECT * FROM ${table} WHERE ${idCol} = ?`);
    this.puts = new Map(Object.entries(parts).map(([name, p]) => {
      const cols = [...p.columns, ...p.version];
      return [name, db.prepare(`INSERT INTO ${table} (${idCol}, ${cols.join(', ')}) VALUES (@id, ${cols.map((c) => '@' + c).join(', ')})
        ON CONFLICT (${idCol}) DO UPDATE SET ${cols.map((c) => `${c} = excluded.${c}`).join(', ')}`)];
    }));
  }

  current(id: string): Record<string, unknown> | undefined {
    return this.get.get(id) as Record<string, unknown> | undefined;
  }

  apply(part: string, id: string, v: Version, values: Record<string, string | null>): Outcome {
    const p = this.parts[part]!;
    const cur = this.current(id);
    const [atCol, idCol] = p.version;
    if (cur && !isNewer(v, cur[atCol] as string | null, cur[idCol] as string | null)) {
      const retry = p.columns.every((c) => cur[c] === (values[c] ?? null));
      return isSame(v, cur[atCol] as string, cur[idCol] as string) || retry ? 'duplicate' : 'stale';
    }
    this.puts.get(part)!.run({ id, ...values, [atCol]: v.at, [idCol]: v.id });
    return !cur || p.columns.some((c) => cur[c] !== (values[c] ?? null)) ? 'applied' : 'duplicate';
  }
}

/** Forum posts: the discovered fields as one fact, each mutable field as a fact of its own. */
export class ForumStore {
  static readonly FIELDS = ['status', 'relevance', 'intent', 'comment_count', 'score'] as const;
  readonly posts: SplitFactTable;
  private readonly getField;
  private readonly putField;
  private readonly projectOf;

  constructor(db: Db) {
    this.posts = new SplitFactTable(db, 'forum_posts', 'id', {
      discovered: {
        columns: ['project_id', 'platform', 'url', 'title', 'community', 'author', 'posted_at', 'discovered_at', 'matched_terms'],
        version: ['v_at', 'v_id'],
      },
    });
    this.getField = db.prepare('SELECT value, v_at, v_id FROM forum_post_fields WHERE post_id = ? AND field = ?');
    this.putField = db.prepare(`INSERT INTO forum_post_fields (post_id, field, value, v_at, v_id) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (post_id, field) DO UPDATE SET value = excluded.value, v_at = excluded.v_at, v_id = excluded.v_id`);
    this.projectOf = db.prepare('SELECT project_id FROM forum_posts WHERE id = ?').pluck();
  }

  project(id: string): string | null {
    return (this.projectOf.get(id) as string | null | undefined) ?? null;
  }

  /** Applies each present field by its own last-writer-wins; the outcome is the strongest of the fields'. */
  applyFields(id: string, v: Version, fields: Record<string, unknown>): Outcome {
    let outcome: Outcome = 'duplicate';
    let anyStale = false;
    for (const f of ForumStore.FIELDS) {
      if (!(f in fields)) continue;
      const value = JSON.stringify(fields[f] ?? null);
      const cur = this.getField.get(id, f) as { value: string; v_at: string; v_id: string } | undefined;
      if (cur && !isNewer(v, cur.v_at, cur.v_id)) {
        if (!isSame(v, cur.v_at, cur.v_id) && cur.value !== value) anyStale = true;
        continue;
      }
      this.putField.run(id, f, value, v.at, v.id);
      if (!cur || cur.value !== value) outcome = 'applied';
    }
    return outcome === 'applied' ? 'applied' : anyStale ? 'stale' : 'duplicate';
  }
}
