import type { VisibilityTimeseries } from '../bodies.gen';
import { YEAR_DAYS, type Endpoint } from '../endpoint';
import { anyStaleTrendDay, recountingProject, trendDayPoints, trendPoint, type TrendPoint } from '../store';
import { engineSumsByPeriod, filteredPeriods, type PeriodEngineSums } from '../sums';
import { filterOf, requestedWindow } from '../windows';

/** The trend covers the year ending with the day of the latest succeeded run (not the wall clock). */
const TREND_DAYS = YEAR_DAYS;

export const endpoint: Endpoint = {
  name: 'timeseries',
  path: '/projects/:project_id/visibility/timeseries',
  summary: 'Visibility trend: one point per day (or ISO week, or month) with counted runs, oldest first, over the last 365 days or the range asked',
  scope: 'project',
  params: ['start_date', 'end_date', 'interval', 'country', 'persona', 'model', 'segment_ids'],
  defaultRange: 'year',
  schema: 'timeseries',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): VisibilityTimeseries {
    const w = requestedWindow(store, args, TREND_DAYS);
    if (!w) return [];
    const filter = filterOf(args);
    // Filtered: from the runs (the engine-day rows key by no dimension or segment).
    const { engines, competitorMentions } = filter
      ? filteredPeriods(store, { projectId: args.projectId, start: w.start, end: w.end, engineIds: null, filter }, args.interval)
      : engineSumsByPeriod(store, args.projectId, w.start, w.end, args.interval);
    return [...rowsPerPeriod(engines)]
      .map(([period, rows]) => trendPoint(period, rows, competitorMentions.get(period) ?? 0));
  },
  /**
   * Days only: a week's or month's point adds up its days' rows (build()), which no single row holds.
   * The writer's rendered day points (migration 012) stand for the body only when none of the
   * project's days waits to be rendered again: a stale day may hold an old point, or none.
   */
  text(store, args): string | null {
    if (args.interval !== 'day' || filterOf(args) !== null || anyStaleTrendDay(store, args.projectId) || recountingProject(store, args.projectId)) return null;
    const w = requestedWindow(store, args, TREND_DAYS);
    if (!w) return '[]';
    return `[${trendDayPoints(store, args.projectId, w.start, w.end).join(',')}]`;
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

/** The store's point type is the schema's, both ways: a field added to one and not the other fails the type check. */
type Holds<T extends true> = T;
type Point = VisibilityTimeseries[number];
export type _SameShape = Holds<TrendPoint extends Point ? (Point extends TrendPoint ? true : false) : false>;
