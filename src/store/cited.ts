import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { bucketOf, listOf, type Cited } from './contributions';
import type { RolledGrain } from './periods';

/**
 * The cited-URL roll-up tables (migrations 009, 011): per project, period and URL (and engine, in
 * the engine tables), over counted runs, without the prompt. A row holds what the lists show of a
 * URL: runs (summed), first and last citation, the distinct engines and prompts (sorted,
 * comma-separated), the winning title with what ranks it (contributions.ts titleWins). Rows are
 * merged into (runs add, min and max, lists unite, the title by its rule), never taken from:
 * lists, min and max cannot subtract, so a period a superseded run leaves is counted again from
 * its runs (rollups.ts).
 */

interface Table { name: string; byEngine: boolean }
const TABLES: Record<RolledGrain, { all: Table; byEngine: Table }> = {
  week: { all: { name: 'agg_cited_week', byEngine: false }, byEngine: { name: 'agg_cited_engine_week', byEngine: true } },
  month: { all: { name: 'agg_cited_month', byEngine: false }, byEngine: { name: 'agg_cited_engine_month', byEngine: true } },
};

/**
 * The union of two sorted comma-separated id lists, sorted. When `b` is already in `a` (the usual
 * case once a row has seen its prompts and engines) `a` stays as it is; otherwise the two are split
 * with json_each (ids are UUIDs: no quote or comma inside) and joined again in order.
 */
const unionSql = (a: string, b: string): string => `CASE WHEN instr(',' || ${a} || ',', ',' || ${b} || ',') > 0 THEN ${a}
  ELSE (SELECT group_concat(DISTINCT value ORDER BY value) FROM json_each('["' || replace(${a} || ',' || ${b}, ',', '","') || '"]')) END`;

/** The merged title wins over the stored one: latest title_at, then first bucket, then greater run (titleWins). */
const TITLE_WINS = `excluded.title IS NOT NULL AND (title IS NULL OR excluded.title_at > title_at OR (excluded.title_at = title_at
  AND (excluded.title_bucket < title_bucket OR (excluded.title_bucket = title_bucket AND excluded.title_run > title_run))))`;

function putStatement(db: Db, t: Table): Statement {
  const keys = t.byEngine ? 'project_id, day, url, engine_id' : 'project_id, day, url';
  const lists = t.byEngine ? ['prompt_ids'] : ['engine_ids', 'prompt_ids'];
  const columns = `${keys}, domain, runs, ${lists.join(', ')}, first_at, last_at, title, title_at, title_bucket, title_run`;
  const title = ['title', 'title_at', 'title_bucket', 'title_run'].map((c) => `${c} = CASE WHEN ${TITLE_WINS} THEN excluded.${c} ELSE ${c} END`);
  return db.prepare(`INSERT INTO ${t.name} (${columns}) VALUES (${columns.split(', ').map(() => '?').join(', ')})
    ON CONFLICT (${keys}) DO UPDATE SET runs = runs + excluded.runs, first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at),
      ${[...lists.map((c) => `${c} = ${unionSql(c, `excluded.${c}`)}`), ...title].join(',\n      ')}`);
}

export class CitedTables {
  private readonly stmts: Record<RolledGrain, { all: Statement; byEngine: Statement; dropPeriod: Statement[]; dropProject: Statement[] }>;

  constructor(db: Db) {
    const grain = (g: RolledGrain) => {
      const { all, byEngine } = TABLES[g];
      return {
        all: putStatement(db, all),
        byEngine: putStatement(db, byEngine),
        dropPeriod: [all, byEngine].map((t) => db.prepare(`DELETE FROM ${t.name} WHERE project_id = ? AND day = ?`)),
        dropProject: [all, byEngine].map((t) => db.prepare(`DELETE FROM ${t.name} WHERE project_id = ?`)),
      };
    };
    this.stmts = { week: grain('week'), month: grain('month') };
  }

  /** A URL's row of a period merged in (with `engineId`: its row of the engine table). */
  put(grain: RolledGrain, projectId: string, period: string, c: Cited, engineId: string | null): void {
    const t = c.titled;
    const title = t?.title ?? null;
    const titleAt = t?.at ?? null;
    const bucket = t ? bucketOf(t) : null;
    const run = t?.run ?? null;
    if (engineId === null) {
      this.stmts[grain].all.run(projectId, period, c.url, c.domain, c.runs, listOf(c.engines), listOf(c.prompts), c.firstAt, c.lastAt, title, titleAt, bucket, run);
    } else {
      this.stmts[grain].byEngine.run(projectId, period, c.url, engineId, c.domain, c.runs, listOf(c.prompts), c.firstAt, c.lastAt, title, titleAt, bucket, run);
    }
  }

  dropPeriod(grain: RolledGrain, projectId: string, period: string): void {
    for (const s of this.stmts[grain].dropPeriod) s.run(projectId, period);
  }

  dropProject(projectId: string): void {
    for (const g of ['week', 'month'] as const) for (const s of this.stmts[g].dropProject) s.run(projectId);
  }
}
