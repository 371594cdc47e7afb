import type { Db } from './db';
import type { Cited, Titled } from './contributions';
import { citedIdsIn, encodeCited, encodeSums, PeriodSums, sumsNameEveryId, sumsOfRow, type RollupColumns, type StoredCitedEngine } from './period-sums';
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

// ---- The stored form, read back: places in `ids` and `urls` (period-sums.ts writes it).

/** [url, runs, engines, prompts, first_at, last_at, title, title_at, title_day, title_engine, title_prompt, title_run] */
type StoredCited = [url: number, runs: number, engines: number[], prompts: number[], first_at: string, last_at: string, title: string | null,
  title_at: string | null, title_day: string | null, title_engine: number | null, title_prompt: number | null, title_run: string | null];
type StoredSums = [number, number, ...number[]];

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

/** The stored cited rows over all engines, as Cited; with `keep`, only the URLs of the domains it keeps (none other is made). */
export function citedRows(names: RollupNames, json: string, keep?: (domain: string) => boolean): Cited[] {
  const { ids, urls } = names;
  const out: Cited[] = [];
  for (const [u, runs, engines, prompts, firstAt, lastAt, title, at, day, engine, prompt, run] of JSON.parse(json) as StoredCited[]) {
    if (keep !== undefined && !keep(urls[u]![1])) continue;
    out.push({
      url: urls[u]![0], domain: urls[u]![1], runs, engines: new Set(engines.map((e) => ids[e]!)), prompts: new Set(prompts.map((q) => ids[q]!)),
      firstAt, lastAt, titled: titledOf(ids, title, at, day, engine, prompt, run),
    });
  }
  return out;
}

/** What a range's domains take of a URL (referrers): its runs and engines, no prompts, times or title. */
export interface CitedTally {
  domain: string;
  runs: number;
  engines: Set<string>;
}

/**
 * The stored cited rows over all engines into `into` by URL as tallies: runs add, engines unite, a
 * URL new there takes the row's domain (citedRows without a Set of prompts and a title per row).
 */
export function addCitedTallies(into: Map<string, CitedTally>, names: RollupNames, json: string): void {
  const { ids, urls } = names;
  for (const [u, runs, engines] of JSON.parse(json) as StoredCited[]) {
    const [url, domain] = urls[u]!;
    const t = into.get(url);
    if (t === undefined) into.set(url, { domain, runs, engines: new Set(engines.map((e) => ids[e]!)) });
    else {
      t.runs += runs;
      for (const e of engines) t.engines.add(ids[e]!);
    }
  }
}

/**
 * The stored cited rows of the engines asked for, as Cited (engines: that one). Rows of other engines
 * are skipped before anything is made of them: a filter on one engine of five builds a fifth of the
 * objects (and of the garbage) of the whole list.
 */
export function citedEngineRows(names: RollupNames, json: string, engineIds: ReadonlySet<string>): Cited[] {
  const { ids, urls } = names;
  const out: Cited[] = [];
  for (const [u, engine, runs, prompts, firstAt, lastAt, title, at, day, prompt, run] of JSON.parse(json) as StoredCitedEngine[]) {
    const engineId = ids[engine]!;
    if (!engineIds.has(engineId)) continue;
    out.push({
      url: urls[u]![0], domain: urls[u]![1], runs, engines: new Set([engineId]), prompts: new Set(prompts.map((q) => ids[q]!)),
      firstAt, lastAt, titled: titledOf(ids, title, at, day, engine, prompt, run),
    });
  }
  return out;
}

/**
 * A stored cited row read only as far as ranking needs: its URL, domain and runs. `cited()` makes the
 * whole Cited (its engines, prompts and title), as citedRows or citedEngineRows would have: a list
 * that shows a page of its URLs makes those of the page only.
 */
export class CitedRef {
  constructor(private readonly names: RollupNames, private readonly row: StoredCited | StoredCitedEngine, private readonly ofEngine: boolean,
    readonly url: string, readonly domain: string, readonly runs: number) {}

  cited(): Cited {
    const ids = this.names.ids;
    if (this.ofEngine) {
      const [, engine, runs, prompts, firstAt, lastAt, title, at, day, prompt, run] = this.row as StoredCitedEngine;
      return {
        url: this.url, domain: this.domain, runs, engines: new Set([ids[engine]!]), prompts: new Set(prompts.map((q) => ids[q]!)),
        firstAt, lastAt, titled: titledOf(ids, title, at, day, engine, prompt, run),
      };
    }
    const [, runs, engines, prompts, firstAt, lastAt, title, at, day, engine, prompt, run] = this.row as StoredCited;
    return {
      url: this.url, domain: this.domain, runs, engines: new Set(engines.map((e) => ids[e]!)), prompts: new Set(prompts.map((q) => ids[q]!)),
      firstAt, lastAt, titled: titledOf(ids, title, at, day, engine, prompt, run),
    };
  }
}

/** A period's stored cited rows as refs: over every engine (the `cited` list), or those of the engines asked for (the `cited_engines` list). */
export function citedRefs(names: RollupNames, json: string, engineIds: ReadonlySet<string> | null): CitedRef[] {
  const urls = names.urls;
  const out: CitedRef[] = [];
  if (engineIds === null) {
    for (const row of JSON.parse(json) as StoredCited[]) out.push(new CitedRef(names, row, false, urls[row[0]]![0], urls[row[0]]![1], row[1]));
  } else {
    for (const row of JSON.parse(json) as StoredCitedEngine[]) {
      if (engineIds.has(names.ids[row[1]]!)) out.push(new CitedRef(names, row, true, urls[row[0]]![0], urls[row[0]]![1], row[2]));
    }
  }
  return out;
}

export class RollupRows {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      get: db.prepare('SELECT ids, urls, prompts, competitors, cited, cited_engines FROM rollups WHERE project_id = ? AND grain = ? AND day = ?').raw(true),
      put: db.prepare(`INSERT INTO rollups (project_id, grain, day, ids, urls, prompts, competitors, cited, cited_engines) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project_id, grain, day) DO UPDATE SET ids = excluded.ids, urls = excluded.urls, prompts = excluded.prompts,
          competitors = excluded.competitors, cited = excluded.cited, cited_engines = excluded.cited_engines`),
      putCited: db.prepare('UPDATE rollups SET urls = ?, cited = ?, cited_engines = ? WHERE project_id = ? AND grain = ? AND day = ?'),
      drop: db.prepare('DELETE FROM rollups WHERE project_id = ? AND grain = ? AND day = ?'),
      periods: db.prepare('SELECT grain, day FROM rollups WHERE project_id = ?').raw(true),
    };
  }

  /** A period's sums written as its row (replacing it); a period with none has no row. */
  put(s: PeriodSums): void {
    if (s.empty) this.stmts.drop.run(s.projectId, s.grain, s.period);
    else this.stmts.put.run(s.projectId, s.grain, s.period, ...encodeSums(s));
  }

  /**
   * A period's cited lists (the sums' urls) written in place of its stored ones, its other lists as
   * they are. The row is what put() of the stored sums with these urls would write: when its brand and
   * competitor lists name every id it has and the urls name no other, its ids stay, and only the three
   * cited columns are encoded and written (a recount rewrote each period's whole row, decoding and
   * encoding its brand and competitor lists for nothing).
   */
  putCited(s: PeriodSums): void {
    const r = this.stmts.get.get(s.projectId, s.grain, s.period) as RollupColumns | undefined;
    if (r !== undefined) {
      const ids = JSON.parse(r[0]) as string[];
      const at = new Map<string, number>();
      for (let i = 0; i < ids.length; i += 1) at.set(ids[i]!, i);
      if (ids.length > 0 && citedIdsIn(s, at) && sumsNameEveryId(ids.length, r[2], r[3])) {
        this.stmts.putCited.run(...encodeCited(s, at), s.projectId, s.grain, s.period);
        return;
      }
    }
    const sums = new PeriodSums(s.projectId, s.grain, s.period);
    if (r !== undefined) sumsOfRow(sums, r[0], r[1], r[2], r[3], '[]');
    sums.urls = s.urls;
    this.put(sums);
  }

  /** A period's stored row read back into `into` (sums added to it are then written with it); false when it has none. */
  addStored(into: PeriodSums): boolean {
    const r = this.stmts.get.get(into.projectId, into.grain, into.period) as RollupColumns | undefined;
    if (r === undefined) return false;
    sumsOfRow(into, r[0], r[1], r[2], r[3], r[5]);
    return true;
  }

  /** The periods a project has rows of: [grain, first day]. */
  periodsOf(projectId: string): Array<[RolledGrain, string]> {
    return this.stmts.periods.all(projectId) as Array<[RolledGrain, string]>;
  }
}
