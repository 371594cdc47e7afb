import type { DailyScore, DailyScores } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { brandSumsByDayEngine, competitorMentionsByDay, COUNTED_RUNS, dayFigures, sumBy, zeroSums } from '../formulas';

/** The newest `limit` days with counted runs, each with its distinct prompts among those runs. Binds project, project, limit. */
const DAYS = `SELECT a.day, count(DISTINCT a.prompt_id) AS prompt_count
  FROM agg_prompt_day a
  WHERE a.project_id = ?${COUNTED_RUNS}
  GROUP BY a.day ORDER BY a.day DESC LIMIT ?`;

export const endpoint: Endpoint = {
  name: 'daily-scores',
  path: '/projects/:project_id/scores/daily',
  summary: 'Daily visibility scores: one row per day with counted runs, newest first',
  scope: 'project',
  query: { limit: { default: 30, max: 365 } },
  schema: 'daily-scores',
  build(store, args): DailyScores {
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
