import type { DailyScore, DailyScores } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import type { Period, ReadArgs } from '../args';
import type { ReadStore } from '../store';
import {
  brandSumsByDayEngine, competitorMentionsByDay, COUNTED_RUNS, dayFigures, periodStart, requestedWindow, sumBy, zeroSums,
} from '../formulas';

/** The newest `limit` days with counted runs, each with its distinct prompts among those runs. Binds project, project, limit. */
const DAYS = `SELECT a.day, count(DISTINCT a.prompt_id) AS prompt_count
  FROM agg_prompt_day a
  WHERE a.project_id = ?${COUNTED_RUNS}
  GROUP BY a.day ORDER BY a.day DESC LIMIT ?`;

/**
 * Per period of the requested window (start_date/end_date, 365 days by default: formulas.ts
 * requestedWindow): its first day and the distinct prompts of its counted runs, newest first.
 * Binds the project, the first and last day, the project (COUNTED_RUNS), the limit.
 */
const PERIOD_OF: Record<Period, string> = {
  day: 'a.day',
  // ISO weeks start on Monday: strftime('%w') is 0 for Sunday, so (w + 6) % 7 days back is the Monday.
  week: "date(a.day, '-' || ((CAST(strftime('%w', a.day) AS INTEGER) + 6) % 7) || ' days')",
  month: "strftime('%Y-%m-01', a.day)",
};
const periodsSql = (period: Period): string => `SELECT ${PERIOD_OF[period]} AS period, count(DISTINCT a.prompt_id) AS prompt_count
  FROM agg_prompt_day a
  WHERE a.project_id = ? AND a.day BETWEEN ? AND ?${COUNTED_RUNS}
  GROUP BY period ORDER BY period DESC LIMIT ?`;
const PERIODS: Record<Period, string> = { day: periodsSql('day'), week: periodsSql('week'), month: periodsSql('month') };

/** With a range or an interval: the newest `limit` periods of the window with counted runs. */
function periodRows(store: ReadStore, args: ReadArgs): DailyScores {
  const w = requestedWindow(store, args, RANGE_DAYS);
  if (!w) return [];
  const periods = store.all<{ period: string; prompt_count: number }>(PERIODS[args.interval], args.projectId, w.start, w.end, args.projectId, args.limit);
  if (periods.length === 0) return [];
  const sums = sumBy(brandSumsByDayEngine(store, args.projectId, w.start, w.end), (r) => periodStart(r.day, args.interval));
  const competitorMentions = new Map<string, number>();
  for (const [day, n] of competitorMentionsByDay(store, args.projectId, w.start, w.end)) {
    const key = periodStart(day, args.interval);
    competitorMentions.set(key, (competitorMentions.get(key) ?? 0) + n);
  }
  return periods.map(({ period, prompt_count }): DailyScore => {
    const s = sums.get(period) ?? zeroSums();
    return { date: period, ...dayFigures(s, competitorMentions.get(period) ?? 0), prompt_count, run_count: s.runs };
  });
}

/** The window of start_date / end_date alone, and of interval without a range. */
const RANGE_DAYS = 365;

export const endpoint: Endpoint = {
  name: 'daily-scores',
  path: '/projects/:project_id/scores/daily',
  summary: 'Daily visibility scores: one row per day (or ISO week, or month) with counted runs, newest first',
  scope: 'project',
  query: { limit: { default: 30, max: 365 }, range: 'year', interval: true },
  schema: 'daily-scores',
  build(store, args): DailyScores {
    if (args.startDate !== null || args.endDate !== null || args.interval !== 'day') return periodRows(store, args);
    const days = store.all<{ day: string; prompt_count: number }>(DAYS, args.projectId, args.projectId, args.limit);
    if (days.length === 0) return [];
    const [first, last] = [days[days.length - 1]!.day, days[0]!.day];
    // Summed per day from day x engine rows in engine order, as the timeseries does: both give the same numbers.
    const sums = sumBy(brandSumsByDayEngine(store, args.projectId, first, last), (r) => r.day);
    const competitorMentions = competitorMentionsByDay(store, args.projectId, first, last);
    return days.map(({ day, prompt_count }): DailyScore => {
      const s = sums.get(day) ?? zeroSums();
      return { date: day, ...dayFigures(s, competitorMentions.get(day) ?? 0), prompt_count, run_count: s.runs };
    });
  },
};
