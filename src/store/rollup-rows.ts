import type { Db } from './db';
import { bucketOf, listOf, titledFrom, titleWins, type Cited } from './contributions';
import type { RolledGrain } from './periods';

/**
 * The week and month roll-ups as the `rollups` table keeps them (migration 013): one row per project
 * and period, its roll-up rows as four JSON arrays (the views agg_prompt_week, agg_competitor_week,
 * agg_cited_week, agg_cited_engine_week and their _month twins show them as rows). A period is read
 * whole, merged with what a writer adds to it, and written whole: one statement per period, where
 * each of its rows was an upsert of its own.
 */

export type PromptRow = [engine_id: string, prompt_id: string, runs: number, brand_runs: number, position_sum: number, rr_fixed: number,
  sentiment_fixed: number, sentiment_n: number];
export type CompetitorRow = [engine_id: string, prompt_id: string, competitor_id: string, runs: number, position_sum: number, rr_fixed: number,
  sentiment_fixed: number, sentiment_n: number];
/** A URL over the period's counted runs; the lists are sorted, comma-separated ids; the title with what ranks it (contributions.ts titleWins). */
export type CitedRow = [url: string, domain: string, runs: number, engine_ids: string, prompt_ids: string, first_at: string, last_at: string,
  title: string | null, title_at: string | null, title_bucket: string | null, title_run: string | null];
export type CitedEngineRow = [url: string, engine_id: string, domain: string, runs: number, prompt_ids: string, first_at: string, last_at: string,
  title: string | null, title_at: string | null, title_bucket: string | null, title_run: string | null];

/** One project's roll-up rows of one period, each array in key order. */
export interface RollupRow {
  prompts: PromptRow[];
  competitors: CompetitorRow[];
  cited: CitedRow[];
  citedEngines: CitedEngineRow[];
}

export const emptyRollup = (): RollupRow => ({ prompts: [], competitors: [], cited: [], citedEngines: [] });

const isEmpty = (r: RollupRow): boolean => r.prompts.length === 0 && r.competitors.length === 0 && r.cited.length === 0 && r.citedEngines.length === 0;

/** Text order by UTF-16 code units, as every list of the API orders (metrics.ts compareStrings). */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class RollupRows {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      get: db.prepare('SELECT prompts, competitors, cited, cited_engines FROM rollups WHERE project_id = ? AND grain = ? AND day = ?').raw(true),
      put: db.prepare(`INSERT INTO rollups (project_id, grain, day, prompts, competitors, cited, cited_engines) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project_id, grain, day) DO UPDATE SET prompts = excluded.prompts, competitors = excluded.competitors,
          cited = excluded.cited, cited_engines = excluded.cited_engines`),
      drop: db.prepare('DELETE FROM rollups WHERE project_id = ? AND grain = ? AND day = ?'),
      clearCited: db.prepare("UPDATE rollups SET cited = '[]', cited_engines = '[]' WHERE project_id = ?"),
      dropEmpty: db.prepare("DELETE FROM rollups WHERE project_id = ? AND prompts = '[]' AND competitors = '[]' AND cited = '[]' AND cited_engines = '[]'"),
    };
  }

  /** A period's rows as stored; empty when it has none. */
  get(projectId: string, grain: RolledGrain, day: string): RollupRow {
    const r = this.stmts.get.get(projectId, grain, day) as [string, string, string, string] | undefined;
    if (r === undefined) return emptyRollup();
    return { prompts: JSON.parse(r[0]) as PromptRow[], competitors: JSON.parse(r[1]) as CompetitorRow[], cited: JSON.parse(r[2]) as CitedRow[], citedEngines: JSON.parse(r[3]) as CitedEngineRow[] };
  }

  /** A period's rows written as they are (sorted here); a period with none has no row. */
  put(projectId: string, grain: RolledGrain, day: string, r: RollupRow): void {
    if (isEmpty(r)) {
      this.stmts.drop.run(projectId, grain, day);
      return;
    }
    r.prompts.sort((a, b) => byText(a[0], b[0]) || byText(a[1], b[1]));
    r.competitors.sort((a, b) => byText(a[0], b[0]) || byText(a[1], b[1]) || byText(a[2], b[2]));
    r.cited.sort((a, b) => byText(a[0], b[0]));
    r.citedEngines.sort((a, b) => byText(a[0], b[0]) || byText(a[1], b[1]));
    this.stmts.put.run(projectId, grain, day, JSON.stringify(r.prompts), JSON.stringify(r.competitors), JSON.stringify(r.cited), JSON.stringify(r.citedEngines));
  }

  drop(projectId: string, grain: RolledGrain, day: string): void {
    this.stmts.drop.run(projectId, grain, day);
  }

  /** Every cited row of a project's periods removed (its cited URLs are being counted again); periods left with nothing go. */
  clearCited(projectId: string): void {
    this.stmts.clearCited.run(projectId);
    this.stmts.dropEmpty.run(projectId);
  }
}

/** A stored cited row's title, or null. */
function storedTitle(title: string | null, at: string | null, bucket: string | null, run: string | null): ReturnType<typeof titledFrom> | null {
  return title === null || at === null || bucket === null ? null : titledFrom(title, at, bucket, run);
}

/** The union of a sorted, comma-separated id list and a set of ids, sorted (listOf). */
function unite(list: string, ids: ReadonlySet<string>): string {
  const all = new Set(list === '' ? [] : list.split(','));
  for (const id of ids) all.add(id);
  return listOf(all);
}

/**
 * A URL's citations merged into its stored row, by the rules the rows always merged by: runs add,
 * first and last are the min and the max, the lists unite, and the title is the one that wins
 * (the latest, then the first bucket, then the greater run: contributions.ts titleWins).
 */
export function mergeCitedRow(row: CitedRow | undefined, c: Cited): CitedRow {
  if (row === undefined) {
    const t = c.titled;
    return [c.url, c.domain, c.runs, listOf(c.engines), listOf(c.prompts), c.firstAt, c.lastAt, t?.title ?? null, t?.at ?? null, t ? bucketOf(t) : null, t?.run ?? null];
  }
  const [url, domain, runs, engineIds, promptIds, firstAt, lastAt, title, titleAt, bucket, run] = row;
  const wins = c.titled !== null && titleWins(c.titled, storedTitle(title, titleAt, bucket, run));
  const t = wins ? c.titled! : null;
  return [url, domain, runs + c.runs, unite(engineIds, c.engines), unite(promptIds, c.prompts), c.firstAt < firstAt ? c.firstAt : firstAt,
    c.lastAt > lastAt ? c.lastAt : lastAt, t ? t.title : title, t ? t.at : titleAt, t ? bucketOf(t) : bucket, t ? t.run : run];
}

/** The same for a URL's row of one engine. */
export function mergeCitedEngineRow(row: CitedEngineRow | undefined, engineId: string, c: Cited): CitedEngineRow {
  const [url, domain, runs, , promptIds, firstAt, lastAt, title, titleAt, bucket, run] = mergeCitedRow(
    row && [row[0], row[2], row[3], engineId, row[4], row[5], row[6], row[7], row[8], row[9], row[10]], c);
  return [url, engineId, domain, runs, promptIds, firstAt, lastAt, title, titleAt, bucket, run];
}
