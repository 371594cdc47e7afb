import type { Db } from './db';
import { compareStrings, dayFigures, mentionRate, mentionRateCi, score, sumAll, type Interval, type MentionSums } from './metrics';

/**
 * The trend's day points (migration 012): the writer renders the point of every (project, day) whose
 * engine-day rows changed, in the same transaction, so that a cold build of the year-long trend reads
 * the text it sends instead of computing and serializing 365 points (docs/decisions.md, "The
 * writer renders the trend's day points"). The endpoint (readmodels/endpoints/timeseries.ts) and this
 * writer make a point with the same function, trendPoint, so the bytes are the same either way.
 */

/** One engine's sums over a period: a row of agg_engine_day, or several added up. */
export interface EngineSums extends MentionSums {
  engine_id: string;
  engine_name: string;
}

/** The shape of schemas/api/timeseries.json's items (readmodels' TimeseriesPoint; timeseries.ts checks they agree). */
export interface TrendPoint {
  date: string;
  score: number;
  mention_rate: number;
  mention_rate_ci: Interval | null;
  average_rank: number | null;
  sentiment: number | null;
  share_of_voice: number | null;
  share_of_voice_ci: Interval | null;
  run_count: number;
  engines: Array<{ engine_id: string; score: number; mention_rate: number; mention_rate_ci: Interval | null; run_count: number }>;
}

/**
 * A period with counted runs (so its scores are numbers, never the "no runs" null): its engines'
 * sums (each engine's counts over the period), listed by engine name then id.
 */
export function trendPoint(period: string, rows: readonly EngineSums[], competitorMentions: number): TrendPoint {
  const s = sumAll(rows);
  return {
    date: period,
    ...dayFigures(s, competitorMentions),
    run_count: s.runs,
    engines: [...rows]
      .sort((a, b) => compareStrings(a.engine_name, b.engine_name) || compareStrings(a.engine_id, b.engine_id))
      .map((r) => ({ engine_id: r.engine_id, score: score(r) ?? 0, mention_rate: mentionRate(r), mention_rate_ci: mentionRateCi(r), run_count: r.runs })),
  };
}

/** An agg_engine_day row (or several added up over a period) as the trend and the daily scores read it. */
export type EngineDayRow = [day: string, engine_id: string, runs: number, mentioned: number, position_sum: number, rr_fixed: number, sentiment_fixed: number, sentiment_n: number, competitor_runs: number];

/** One engine's sums over a day, or over the period starting that day. */
export interface DayEngineSums extends EngineSums {
  day: string;
}

/**
 * Rows as the trend counts them, for the writer's points and the read models alike: the brand sums of
 * known engines (a row of an unknown engine is left out, as a join would), and per day the runs
 * mentioning tracked competitors, over every row.
 */
export function engineSumsOf(rows: readonly EngineDayRow[], names: ReadonlyMap<string, string>): { engines: DayEngineSums[]; competitorMentions: Map<string, number> } {
  const engines: DayEngineSums[] = [];
  const competitorMentions = new Map<string, number>();
  for (const [day, engine_id, runs, mentioned, position_sum, rr_fixed, sentiment_fixed, sentiment_n, competitor_runs] of rows) {
    if (competitor_runs > 0) competitorMentions.set(day, (competitorMentions.get(day) ?? 0) + competitor_runs);
    const engine_name = names.get(engine_id);
    if (engine_name !== undefined) engines.push({ day, engine_id, engine_name, runs, mentioned, position_sum, rr_fixed, sentiment_fixed, sentiment_n });
  }
  return { engines, competitorMentions };
}

/**
 * Days rendered per transaction at most. A batch of live events leaves a few dozen stale; a project
 * counted again (a prompt deleted) or an engine renamed, a year's worth (365 per project, ~64 us each);
 * a database migrated to 012, all of them. The rest wait for the next batch, and until then the
 * project's trend is computed by the read (never wrong, only slower), so one batch never pays for
 * them all.
 */
export const RENDER_LIMIT = 2000;

export class TrendDays {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      stale: db.prepare('SELECT project_id, day FROM trend_days_stale ORDER BY project_id, day LIMIT ?').raw(true),
      rows: db.prepare(`SELECT day, engine_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n, competitor_runs
        FROM agg_engine_day WHERE project_id = ? AND day = ? ORDER BY engine_id`).raw(true),
      engines: db.prepare('SELECT id, name FROM engines').raw(true),
      put: db.prepare('INSERT INTO trend_days (project_id, day, point) VALUES (?, ?, ?) ON CONFLICT (project_id, day) DO UPDATE SET point = excluded.point'),
      drop: db.prepare('DELETE FROM trend_days WHERE project_id = ? AND day = ?'),
      fresh: db.prepare('DELETE FROM trend_days_stale WHERE project_id = ? AND day = ?'),
    };
  }

  /** Renders up to `limit` stale days (inside the caller's transaction); returns how many. */
  render(limit = RENDER_LIMIT): number {
    const stale = this.stmts.stale.all(limit) as Array<[string, string]>;
    if (stale.length === 0) return 0;
    const names = new Map(this.stmts.engines.all() as Array<[string, string]>);
    for (const [projectId, day] of stale) {
      const point = this.pointOf(projectId, day, names);
      if (point) this.stmts.put.run(projectId, day, JSON.stringify(point));
      else this.stmts.drop.run(projectId, day);
      this.stmts.fresh.run(projectId, day);
    }
    return stale.length;
  }

  /** What the endpoint computes for the day (timeseries.ts via readmodels/sums.ts engineSumsByPeriod): null when it lists no point. */
  private pointOf(projectId: string, day: string, names: ReadonlyMap<string, string>): TrendPoint | null {
    const { engines, competitorMentions } = engineSumsOf(this.stmts.rows.all(projectId, day) as EngineDayRow[], names);
    return engines.length === 0 ? null : trendPoint(day, engines, competitorMentions.get(day) ?? 0);
  }
}
