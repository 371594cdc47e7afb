import type { DailyScore, DailyScores } from '../bodies.gen';
import { YEAR_DAYS, type Endpoint } from '../endpoint';
import type { ReadArgs } from '../args';
import { compareStrings, dayFigures, firstRunDay, latestRunDay, promptIdsNewestFirst, promptIdsOfDays, recountingProject, zeroSums, type ReadStore } from '../store';
import { engineSumsByPeriod, filteredPeriods, promptsByPeriod, sumBy } from '../sums';
import { filterOf, requestedWindow } from '../windows';

/**
 * The newest `limit` days with counted runs, each with the number of its distinct prompts among those
 * runs: the engine-day rows (counted runs only) newest first, read until `limit` days are in hand.
 */
function newestDays(store: ReadStore, projectId: string, limit: number): Array<{ day: string; prompt_count: number }> {
  if (recountingProject(store, projectId)) {
    // Its rows being counted again (migration 018): the days with counted runs from the runs themselves.
    const [first, last] = [firstRunDay(store, projectId), latestRunDay(store, projectId)];
    if (first === null || last === null) return [];
    const prompts = promptsByPeriod(store, projectId, first, last, 'day');
    return [...prompts.keys()].sort(compareStrings).reverse().slice(0, limit).map((day) => ({ day, prompt_count: prompts.get(day)!.size }));
  }
  // A day's lists per engine are most often the same text (every engine ran every prompt): kept once
  // each, and counted without splitting when the day has one (a list is sorted, distinct, comma-separated).
  // Compared, not put in a Set: hashing a 300-prompt list (11 KB) cost ~14 us a row, comparing ~1 us.
  const days: Array<{ day: string; lists: string[] }> = [];
  for (const r of promptIdsNewestFirst(store, projectId)) {
    if (days.at(-1)?.day !== r.day) {
      if (days.length === limit) break;
      days.push({ day: r.day, lists: [] });
    }
    const lists = days.at(-1)!.lists;
    if (!lists.includes(r.prompt_ids)) lists.push(r.prompt_ids);
  }
  return days.map((d) => ({ day: d.day, prompt_count: distinctPrompts(d.lists) }));
}

/** The distinct prompt ids of a day's distinct engine lists. */
function distinctPrompts(lists: readonly string[]): number {
  if (lists.length === 1) {
    const text = lists[0]!;
    let n = 1;
    for (let i = text.indexOf(','); i !== -1; i = text.indexOf(',', i + 1)) n += 1;
    return n;
  }
  const prompts = new Set<string>();
  for (const text of lists) for (const id of text.split(',')) prompts.add(id);
  return prompts.size;
}

/**
 * Per day of start..end with counted runs: the number of its distinct prompts, from its engines' lists
 * as newestDays counts them (promptsByPeriod puts each id of each list in a Set: on a 1,000-prompt
 * project, 8,000 ids a day).
 */
function promptCountsByDay(store: ReadStore, projectId: string, start: string, end: string): Map<string, number> {
  const lists = new Map<string, string[]>();
  for (const r of promptIdsOfDays(store, projectId, start, end)) {
    let day = lists.get(r.day);
    if (!day) lists.set(r.day, (day = []));
    if (!day.includes(r.prompt_ids)) day.push(r.prompt_ids);
  }
  return new Map([...lists].map(([day, l]) => [day, distinctPrompts(l)]));
}

const sizes = (periods: Map<string, Set<string>>): Map<string, number> => new Map([...periods].map(([period, ids]) => [period, ids.size]));

/**
 * With a range or an interval: the newest `limit` periods of the requested window (start_date /
 * end_date, 365 days by default: windows.ts requestedWindow) with counted runs, each with the
 * distinct prompts of those runs, its counts summed from the roll-ups and its partial days.
 */
function periodRows(store: ReadStore, args: ReadArgs): DailyScores {
  const w = requestedWindow(store, args, RANGE_DAYS);
  if (!w) return [];
  const filter = filterOf(args);
  // Filtered: from the runs (the engine-day rows and roll-ups key by no dimension, nor by segment here).
  const filtered = filter && filteredPeriods(store, { projectId: args.projectId, start: w.start, end: w.end, engineIds: null, filter }, args.interval);
  // By day, unfiltered and not being recounted: promptsByPeriod reads these same engine-day lists.
  const prompts = filtered ? sizes(filtered.prompts)
    : args.interval === 'day' && !recountingProject(store, args.projectId) ? promptCountsByDay(store, args.projectId, w.start, w.end)
      : sizes(promptsByPeriod(store, args.projectId, w.start, w.end, args.interval));
  if (prompts.size === 0) return [];
  const { engines, competitorMentions } = filtered || engineSumsByPeriod(store, args.projectId, w.start, w.end, args.interval);
  const sums = sumBy(engines, (r) => r.day);
  return [...prompts.keys()].sort(compareStrings).reverse().slice(0, args.limit).map((period): DailyScore => {
    const s = sums.get(period) ?? zeroSums();
    return { date: period, ...dayFigures(s, competitorMentions.get(period) ?? 0), prompt_count: prompts.get(period)!, run_count: s.runs };
  });
}

/** The window of start_date / end_date alone, and of interval without a range. */
const RANGE_DAYS = YEAR_DAYS;

export const endpoint: Endpoint = {
  name: 'daily-scores',
  path: '/projects/:project_id/scores/daily',
  summary: 'Daily visibility scores: one row per day (or ISO week, or month) with counted runs, newest first',
  scope: 'project',
  params: ['limit-days', 'start_date', 'end_date', 'interval', 'country', 'persona', 'model', 'segment_ids'],
  defaultRange: 'year',
  schema: 'daily-scores',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): DailyScores {
    // A filter reads the requested window's runs (the newest days of the 365 ending with the latest run).
    if (args.startDate !== null || args.endDate !== null || args.interval !== 'day' || filterOf(args) !== null) return periodRows(store, args);
    const days = newestDays(store, args.projectId, args.limit);
    if (days.length === 0) return [];
    const [first, last] = [days[days.length - 1]!.day, days[0]!.day];
    // Summed per day from day x engine rows in engine order, as the timeseries does: both give the same numbers.
    const { engines, competitorMentions } = engineSumsByPeriod(store, args.projectId, first, last, 'day');
    const sums = sumBy(engines, (r) => r.day);
    return days.map(({ day, prompt_count }): DailyScore => {
      const s = sums.get(day) ?? zeroSums();
      return { date: day, ...dayFigures(s, competitorMentions.get(day) ?? 0), prompt_count, run_count: s.runs };
    });
  },
};
