import type { Db } from './db';
import { mergeCited, type Cited, type Titled } from './contributions';
import type { RolledGrain } from './periods';

/**
 * The week and month roll-ups as the `rollups` table keeps them (migration 013): one row per project
 * and period, its roll-up rows as JSON lists that name ids and URLs by their place in the row's
 * `ids` and `urls` (the views agg_prompt_week, agg_competitor_week, agg_cited_week,
 * agg_cited_engine_week and their _month twins show them as rows). A period is written whole, once
 * when its writer moves past it, and read whole by a range: one statement per period where each of
 * its ~1,000 rows was an upsert of its own, in a third of the bytes.
 */

/** A brand row: [engine_id, prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n]. */
export type PromptRow = [engine_id: string, prompt_id: string, runs: number, brand_runs: number, position_sum: number, rr_fixed: number,
  sentiment_fixed: number, sentiment_n: number];
/** A competitor row: [engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n]. */
export type CompetitorRow = [engine_id: string, prompt_id: string, competitor_id: string, runs: number, position_sum: number, rr_fixed: number,
  sentiment_fixed: number, sentiment_n: number];

/** One project's roll-up rows of one period, ids as text: the cited URLs over all engines, and per engine (`engines` then holds that one). */
export interface RollupRow {
  prompts: PromptRow[];
  competitors: CompetitorRow[];
  cited: Cited[];
  citedEngines: Cited[];
}

export const emptyRollup = (): RollupRow => ({ prompts: [], competitors: [], cited: [], citedEngines: [] });

const isEmpty = (r: RollupRow): boolean => r.prompts.length === 0 && r.competitors.length === 0 && r.cited.length === 0 && r.citedEngines.length === 0;

// ---- The stored form: places in `ids` and `urls`.

/** [url, runs, engines, prompts, first_at, last_at, title, title_at, title_day, title_engine, title_prompt, title_run] */
type StoredCited = [url: number, runs: number, engines: number[], prompts: number[], first_at: string, last_at: string, title: string | null,
  title_at: string | null, title_day: string | null, title_engine: number | null, title_prompt: number | null, title_run: string | null];
/** [url, engine, runs, prompts, first_at, last_at, title, title_at, title_day, title_prompt, title_run] */
type StoredCitedEngine = [url: number, engine: number, runs: number, prompts: number[], first_at: string, last_at: string, title: string | null,
  title_at: string | null, title_day: string | null, title_prompt: number | null, title_run: string | null];
type StoredSums = [number, number, ...number[]];

/** Text order by UTF-16 code units, as every list of the API orders (metrics.ts compareStrings). */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The places of a sorted list of texts. */
function placesOf(texts: Iterable<string>): { list: string[]; at: Map<string, number> } {
  const list = [...new Set(texts)].sort(byText);
  return { list, at: new Map(list.map((t, i) => [t, i])) };
}

/** A set of ids as the sorted places the row keeps (places follow the ids' order: sorted places, sorted ids). */
function placeList(ids: ReadonlySet<string>, at: ReadonlyMap<string, number>): number[] {
  const out: number[] = [];
  for (const id of ids) out.push(at.get(id)!);
  return out.length > 1 ? out.sort((a, b) => a - b) : out;
}

/** A period's row as the columns store it (ids, urls, prompts, competitors, cited, cited_engines), each list in key order. */
export function encodeRollup(r: RollupRow): [string, string, string, string, string, string] {
  const ids: string[] = [];
  for (const p of r.prompts) ids.push(p[0], p[1]);
  for (const c of r.competitors) ids.push(c[0], c[1], c[2]);
  const domains = new Map<string, string>();
  for (const c of [...r.cited, ...r.citedEngines]) {
    domains.set(c.url, c.domain);
    for (const e of c.engines) ids.push(e);
    for (const q of c.prompts) ids.push(q);
    if (c.titled) ids.push(c.titled.engineId, c.titled.promptId);
  }
  const id = placesOf(ids);
  const url = placesOf(domains.keys());
  const n = (text: string): number => id.at.get(text)!;
  const prompts = r.prompts.map(([e, q, ...sums]) => [n(e), n(q), ...sums] as StoredSums)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const competitors = r.competitors.map(([e, q, c, ...sums]) => [n(e), n(q), n(c), ...sums] as StoredSums)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2]! - b[2]!);
  const cited = r.cited.map((c): StoredCited => {
    const t = c.titled;
    return [url.at.get(c.url)!, c.runs, placeList(c.engines, id.at), placeList(c.prompts, id.at), c.firstAt, c.lastAt,
      t?.title ?? null, t?.at ?? null, t?.day ?? null, t ? n(t.engineId) : null, t ? n(t.promptId) : null, t?.run ?? null];
  }).sort((a, b) => a[0] - b[0]);
  const citedEngines = r.citedEngines.map((c): StoredCitedEngine => {
    const t = c.titled;
    const [engine] = c.engines;
    return [url.at.get(c.url)!, n(engine!), c.runs, placeList(c.prompts, id.at), c.firstAt, c.lastAt,
      t?.title ?? null, t?.at ?? null, t?.day ?? null, t ? n(t.promptId) : null, t?.run ?? null];
  }).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return [JSON.stringify(id.list), JSON.stringify(url.list.map((u) => [u, domains.get(u)])), JSON.stringify(prompts), JSON.stringify(competitors),
    JSON.stringify(cited), JSON.stringify(citedEngines)];
}

/** The ids a row's lists name, and its URLs with their domains. */
export interface RollupNames {
  ids: string[];
  urls: Array<[url: string, domain: string]>;
}

export const parseNames = (ids: string, urls: string): RollupNames => ({ ids: JSON.parse(ids) as string[], urls: JSON.parse(urls) as Array<[string, string]> });

/** A stored brand row with its ids as text. */
export function promptRows(names: RollupNames, json: string): PromptRow[] {
  const ids = names.ids;
  return (JSON.parse(json) as StoredSums[]).map(([e, q, runs, b, ps, rr, sf, sn]) => [ids[e]!, ids[q]!, runs!, b!, ps!, rr!, sf!, sn!]);
}

/** A stored competitor row with its ids as text. */
export function competitorRows(names: RollupNames, json: string): CompetitorRow[] {
  const ids = names.ids;
  return (JSON.parse(json) as StoredSums[]).map(([e, q, c, runs, ps, rr, sf, sn]) => [ids[e]!, ids[q]!, ids[c!]!, runs!, ps!, rr!, sf!, sn!]);
}

function titledOf(ids: readonly string[], title: string | null, at: string | null, day: string | null, engine: number | null, prompt: number | null, run: string | null): Titled | null {
  if (title === null || at === null || day === null || engine === null || prompt === null) return null;
  return { title, at, day, engineId: ids[engine]!, promptId: ids[prompt]!, run };
}

/** The stored cited rows over all engines, as Cited. */
export function citedRows(names: RollupNames, json: string): Cited[] {
  const { ids, urls } = names;
  return (JSON.parse(json) as StoredCited[]).map(([u, runs, engines, prompts, firstAt, lastAt, title, at, day, engine, prompt, run]) => ({
    url: urls[u]![0], domain: urls[u]![1], runs, engines: new Set(engines.map((e) => ids[e]!)), prompts: new Set(prompts.map((q) => ids[q]!)),
    firstAt, lastAt, titled: titledOf(ids, title, at, day, engine, prompt, run),
  }));
}

/** The stored cited rows per engine, as Cited (engines: that one). */
export function citedEngineRows(names: RollupNames, json: string): Cited[] {
  const { ids, urls } = names;
  return (JSON.parse(json) as StoredCitedEngine[]).map(([u, engine, runs, prompts, firstAt, lastAt, title, at, day, prompt, run]) => ({
    url: urls[u]![0], domain: urls[u]![1], runs, engines: new Set([ids[engine]!]), prompts: new Set(prompts.map((q) => ids[q]!)),
    firstAt, lastAt, titled: titledOf(ids, title, at, day, engine, prompt, run),
  }));
}

export class RollupRows {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      get: db.prepare('SELECT ids, urls, prompts, competitors, cited, cited_engines FROM rollups WHERE project_id = ? AND grain = ? AND day = ?').raw(true),
      put: db.prepare(`INSERT INTO rollups (project_id, grain, day, ids, urls, prompts, competitors, cited, cited_engines) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project_id, grain, day) DO UPDATE SET ids = excluded.ids, urls = excluded.urls, prompts = excluded.prompts,
          competitors = excluded.competitors, cited = excluded.cited, cited_engines = excluded.cited_engines`),
      drop: db.prepare('DELETE FROM rollups WHERE project_id = ? AND grain = ? AND day = ?'),
      periods: db.prepare('SELECT grain, day FROM rollups WHERE project_id = ?').raw(true),
    };
  }

  /** A period's rows as stored; empty when it has none. */
  get(projectId: string, grain: RolledGrain, day: string): RollupRow {
    const r = this.stmts.get.get(projectId, grain, day) as [string, string, string, string, string, string] | undefined;
    if (r === undefined) return emptyRollup();
    const names = parseNames(r[0], r[1]);
    return { prompts: promptRows(names, r[2]), competitors: competitorRows(names, r[3]), cited: citedRows(names, r[4]), citedEngines: citedEngineRows(names, r[5]) };
  }

  /** A period's rows written as they are; a period with none has no row. */
  put(projectId: string, grain: RolledGrain, day: string, r: RollupRow): void {
    if (isEmpty(r)) this.stmts.drop.run(projectId, grain, day);
    else this.stmts.put.run(projectId, grain, day, ...encodeRollup(r));
  }

  /** Every cited row of a project's periods removed (its cited URLs are being counted again); periods left with nothing go. */
  clearCited(projectId: string): void {
    for (const [grain, day] of this.stmts.periods.all(projectId) as Array<[RolledGrain, string]>) {
      const r = this.get(projectId, grain, day);
      r.cited = [];
      r.citedEngines = [];
      this.put(projectId, grain, day, r);
    }
  }
}

/**
 * URLs merged into a period's cited rows, by the rules the rows always merged by (contributions.ts
 * mergeCited): runs add, first and last are the min and the max, the lists unite, and the title is
 * the one that wins (the latest, then the first bucket, then the greater run).
 */
export function mergeCitedInto(rows: Cited[], merged: ReadonlyArray<Cited>, keyOf: (c: Cited) => string): void {
  if (rows.length === 0) {
    rows.push(...merged);
    return;
  }
  const at = new Map(rows.map((c) => [keyOf(c), c]));
  for (const c of merged) {
    const had = at.get(keyOf(c));
    if (had) mergeCited(had, c);
    else rows.push(c);
  }
}
