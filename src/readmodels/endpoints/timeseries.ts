import type { TimeseriesEngine, TimeseriesPoint, VisibilityTimeseries } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  brandSumsByDayEngine, compareStrings, competitorMentionsByDay, currentWindow, dayFigures, mentionRate, mentionRateCi, score, sumAll,
  type DayEngineSums,
} from '../formulas';

/** The trend covers the year ending with the day of the latest succeeded run (not the wall clock). */
const TREND_DAYS = 365;

export const endpoint: Endpoint = {
  name: 'timeseries',
  path: '/projects/:project_id/visibility/timeseries',
  summary: 'Visibility trend: one point per day with counted runs, oldest first, over the last 365 days',
  scope: 'project',
  query: {},
  schema: 'timeseries',
  build(store, args): VisibilityTimeseries {
    const w = currentWindow(store, args.projectId, TREND_DAYS);
    if (!w) return [];
    const competitorMentions = competitorMentionsByDay(store, args.projectId, w.start, w.end);
    return [...rowsPerDay(brandSumsByDayEngine(store, args.projectId, w.start, w.end))]
      .map(([day, rows]) => point(day, rows, competitorMentions.get(day) ?? 0));
  },
};

/** Rows come oldest day first, engines in id order; a Map keeps that day order. */
function rowsPerDay(rows: DayEngineSums[]): Map<string, DayEngineSums[]> {
  const out = new Map<string, DayEngineSums[]>();
  for (const r of rows) {
    const day = out.get(r.day);
    if (day) day.push(r);
    else out.set(r.day, [r]);
  }
  return out;
}

/** A day listed here has counted runs, so its scores are numbers (never the "no runs" null). */
function point(day: string, rows: DayEngineSums[], competitorMentions: number): TimeseriesPoint {
  const s = sumAll(rows);
  return {
    date: day,
    ...dayFigures(s, competitorMentions),
    run_count: s.runs,
    engines: [...rows]
      .sort((a, b) => compareStrings(a.engine_name, b.engine_name) || compareStrings(a.engine_id, b.engine_id))
      .map((r): TimeseriesEngine => ({
        engine_id: r.engine_id, score: score(r) ?? 0, mention_rate: mentionRate(r), mention_rate_ci: mentionRateCi(r), run_count: r.runs,
      })),
  };
}
