import type { TimeseriesEngine, TimeseriesPoint, VisibilityTimeseries } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  compareStrings, dayFigures, engineSumsByPeriod, mentionRate, mentionRateCi, requestedWindow, score, sumAll, type PeriodEngineSums,
} from '../formulas';

/** The trend covers the year ending with the day of the latest succeeded run (not the wall clock). */
const TREND_DAYS = 365;

export const endpoint: Endpoint = {
  name: 'timeseries',
  path: '/projects/:project_id/visibility/timeseries',
  summary: 'Visibility trend: one point per day (or ISO week, or month) with counted runs, oldest first, over the last 365 days or the range asked',
  scope: 'project',
  query: { range: 'year', interval: true },
  schema: 'timeseries',
  build(store, args): VisibilityTimeseries {
    const w = requestedWindow(store, args, TREND_DAYS);
    if (!w) return [];
    const { engines, competitorMentions } = engineSumsByPeriod(store, args.projectId, w.start, w.end, args.interval);
    return [...rowsPerPeriod(engines)]
      .map(([period, rows]) => point(period, rows, competitorMentions.get(period) ?? 0));
  },
};

/** Rows come oldest period first, engines in id order; the Map keeps that order. */
function rowsPerPeriod(rows: PeriodEngineSums[]): Map<string, PeriodEngineSums[]> {
  const out = new Map<string, PeriodEngineSums[]>();
  for (const r of rows) {
    const period = out.get(r.day);
    if (period) period.push(r);
    else out.set(r.day, [r]);
  }
  return out;
}

/**
 * A period listed here has counted runs, so its scores are numbers (never the "no runs" null). Its
 * rows are each engine's counts summed over the period (formulas.ts engineSumsByPeriod: a day's
 * rows, or a week's or month's from the roll-ups and the days of a partial period).
 */
function point(period: string, rows: PeriodEngineSums[], competitorMentions: number): TimeseriesPoint {
  const s = sumAll(rows);
  return {
    date: period,
    ...dayFigures(s, competitorMentions),
    run_count: s.runs,
    engines: [...rows]
      .sort((a, b) => compareStrings(a.engine_name, b.engine_name) || compareStrings(a.engine_id, b.engine_id))
      .map((r): TimeseriesEngine => ({
        engine_id: r.engine_id, score: score(r) ?? 0, mention_rate: mentionRate(r), mention_rate_ci: mentionRateCi(r), run_count: r.runs,
      })),
  };
}
