import type { TimeseriesEngine, TimeseriesPoint, VisibilityTimeseries } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  brandSumsByDayEngine, compareStrings, competitorMentionsByDay, dayFigures, mentionRate, mentionRateCi, periodStart, requestedWindow, score,
  sumAll, type DayEngineSums,
} from '../formulas';
import type { Period } from '../args';

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
    const competitorMentions = competitorMentionsByDay(store, args.projectId, w.start, w.end);
    return [...rowsPerPeriod(brandSumsByDayEngine(store, args.projectId, w.start, w.end), args.interval)]
      .map(([period, days]) => point(period, days, sumMentions(days, competitorMentions)));
  },
};

/** A period's days: each day's rows (engines in id order). */
type PeriodDays = Map<string, DayEngineSums[]>;

/** Rows come oldest day first, engines in id order; Maps keep that order (periods, then days). */
function rowsPerPeriod(rows: DayEngineSums[], interval: Period): Map<string, PeriodDays> {
  const out = new Map<string, PeriodDays>();
  for (const r of rows) {
    const key = periodStart(r.day, interval);
    let days = out.get(key);
    if (!days) out.set(key, (days = new Map()));
    const day = days.get(r.day);
    if (day) day.push(r);
    else days.set(r.day, [r]);
  }
  return out;
}

function sumMentions(days: PeriodDays, byDay: Map<string, number>): number {
  let n = 0;
  for (const day of days.keys()) n += byDay.get(day) ?? 0;
  return n;
}

/** Each engine's sums over the period's days (integers: exact). */
function perEngine(days: PeriodDays): DayEngineSums[] {
  const out = new Map<string, DayEngineSums>();
  for (const rows of days.values()) {
    for (const r of rows) {
      const e = out.get(r.engine_id);
      if (!e) out.set(r.engine_id, { ...r });
      else for (const k of SUMMED) e[k] += r[k];
    }
  }
  return [...out.values()];
}
const SUMMED = ['runs', 'mentioned', 'position_sum', 'rr_fixed', 'sentiment_fixed', 'sentiment_n'] as const;

/**
 * A period listed here has counted runs, so its scores are numbers (never the "no runs" null). A day's
 * point is made from its rows as v1 made it; a week's or month's from its days' counts summed.
 */
function point(period: string, days: PeriodDays, competitorMentions: number): TimeseriesPoint {
  const rows = days.size === 1 ? [...days.values()][0]! : perEngine(days);
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
