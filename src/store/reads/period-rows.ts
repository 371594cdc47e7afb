// A project's days, weeks and months as the writer keeps them: the roll-ups (migrations 007, 013),
// the engine-day rows (008), the trend's rendered days (012) and which periods wait to be counted again (010).
import { KEY_OF } from '../keys';
import type { Grain } from '../periods';
import type { ReadStore } from '../read-store';
import type { EngineDayRow } from '../trend-days';

/** The day of the project's newest succeeded run, walking runs_recent from the newest run (usually one step). */
const LATEST_DAY = `SELECT substr(completed_at, 1, 10) FROM runs WHERE project = ${KEY_OF} AND status = 'succeeded'
  ORDER BY completed_at DESC LIMIT 1`;

const FIRST_DAY = `SELECT substr(completed_at, 1, 10) FROM runs WHERE project = ${KEY_OF} AND status = 'succeeded'
  ORDER BY completed_at LIMIT 1`;

/** The day (YYYY-MM-DD) of the project's oldest succeeded run; null when it has none. */
export function firstRunDay(store: ReadStore, projectId: string): string | null {
  return store.value<string | null>(FIRST_DAY, projectId) ?? null;
}

/** The day (YYYY-MM-DD) of the project's newest succeeded run; null when it has none. */
export function latestRunDay(store: ReadStore, projectId: string): string | null {
  return store.value<string | null>(LATEST_DAY, projectId) ?? null;
}

const PENDING_PERIODS = "SELECT grain || ' ' || day AS period FROM rollup_pending WHERE project_id = ?";

/** The project's weeks and months whose roll-up rows are pending (migration 010), as 'grain day'. */
export function pendingPeriods(store: ReadStore, projectId: string): string[] {
  return store.all<{ period: string }>(PENDING_PERIODS, projectId).map((p) => p.period);
}

/**
 * Whether the project's engine-day rows and roll-ups are being counted again (migration 018): its
 * readers read its days and periods from the runs until the writer's last slice is done.
 */
export function recountingProject(store: ReadStore, projectId: string): boolean {
  return store.value<number>('SELECT 1 FROM recounts WHERE project_id = ?', projectId) !== undefined;
}

/**
 * The rows of one list of the roll-ups of a project's weeks or months start..end (the periods' first
 * days), period by period (migration 013: one row per period, its lists naming ids and URLs by their
 * place in `ids` and `urls`). The brand and competitor lists name no URL: their periods' URLs are not
 * read (a period's URLs are most of its row).
 */
const ROLLUPS = (column: 'prompts' | 'competitors' | 'cited' | 'cited_engines', urls: 'urls' | "'[]'"): string =>
  `SELECT day, ids, ${urls}, ${column} FROM rollups WHERE project_id = ? AND grain = ? AND day BETWEEN ? AND ? ORDER BY day`;
const ROLLUP_SQL = {
  prompts: ROLLUPS('prompts', "'[]'"), competitors: ROLLUPS('competitors', "'[]'"), cited: ROLLUPS('cited', 'urls'), cited_engines: ROLLUPS('cited_engines', 'urls'),
};
export type RollupList = keyof typeof ROLLUP_SQL;

/** Per period: its first day, its ids and URLs (JSON texts) and the list asked for (JSON text). */
export function rollupLists(store: ReadStore, projectId: string, grain: Grain, start: string, end: string, list: RollupList): Array<[string, string, string, string]> {
  return store.rows<[string, string, string, string]>(ROLLUP_SQL[list], projectId, grain, start, end);
}

// The trend and the daily scores read the counted sums per project, day and engine (migration 008:
// agg_engine_day, kept by the writer under the deleted-prompt, known-engine and tracked-competitor
// rules): a year is 1,825 rows, not the ~90k rows by prompt and competitor they add up. The query
// itself takes ~0.1-0.4 ms; handing its 1,825 rows of 8 columns to JS took 4.1 ms on the Xeon host (each
// value made through V8's C++ API), the same rows as one JSON text + JSON.parse ~2.5 ms
// (docs/decisions.md, "Many rows read as arrays or one JSON text"). Each row also carries
// the day's competitor mentions, which a second query used to read.

/**
 * The rows in PK order (project_id, day, engine_id): the subquery's ORDER BY is what the index
 * gives, so it costs no sort (an aggregate's own ORDER BY sorts: +1.4 ms).
 */
const ENGINE_DAYS = `SELECT json_group_array(json_array(day, engine_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n, competitor_runs))
  FROM (SELECT day, engine_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n, competitor_runs FROM agg_engine_day
    WHERE project_id = ? AND day BETWEEN ? AND ? ORDER BY day, engine_id)`;

/**
 * A day's period in SQL: periodStart's rule (the ISO week's Monday: strftime('%w') is 0 on Sunday,
 * so (w + 6) % 7 days back; the month's 1st), as migration 007 keys the roll-ups by it.
 */
const PERIOD_OF_DAY: Record<Exclude<Grain, 'day'>, string> = {
  week: "date(g.day, '-' || ((CAST(strftime('%w', g.day) AS INTEGER) + 6) % 7) || ' days')",
  month: "substr(g.day, 1, 8) || '01'",
};
/** The engine-day rows added up per period in SQL: a year by week is 260 rows to hand over, not 1,825. */
const ENGINE_PERIODS = (interval: Exclude<Grain, 'day'>): string => `SELECT json_group_array(json_array(p, e, r, b, ps, rr, sf, sn, c))
  FROM (SELECT ${PERIOD_OF_DAY[interval]} AS p, g.engine_id AS e, sum(g.runs) AS r, sum(g.brand_runs) AS b, sum(g.position_sum) AS ps,
      sum(g.rr_fixed) AS rr, sum(g.sentiment_fixed) AS sf, sum(g.sentiment_n) AS sn, sum(g.competitor_runs) AS c
    FROM agg_engine_day g
    WHERE g.project_id = ? AND g.day BETWEEN ? AND ?
    GROUP BY 1, 2 ORDER BY 1, 2)`;
const ENGINE_SUMS: Record<Grain, string> = { day: ENGINE_DAYS, week: ENGINE_PERIODS('week'), month: ENGINE_PERIODS('month') };

/**
 * The engine-day rows of start..end, or their sums per week or month (the row's day is then the
 * period's first day), in one read. In period and engine order as the query states it, which
 * nothing binds the planner to keep in an aggregate: the caller sorts.
 */
export function engineDayRows(store: ReadStore, projectId: string, start: string, end: string, interval: Grain): EngineDayRow[] {
  return store.json<EngineDayRow[]>(ENGINE_SUMS[interval], projectId, start, end);
}

/** Days' distinct counted prompts, from the engine-day rows (counted runs only; each lists its prompts). */
const PROMPTS_OF_DAYS = 'SELECT day, prompt_ids FROM agg_engine_day WHERE project_id = ? AND day BETWEEN ? AND ?';

/** Each engine-day row of start..end with counted runs: its day and its prompts (comma-separated ids). */
export function promptIdsOfDays(store: ReadStore, projectId: string, start: string, end: string): Array<{ day: string; prompt_ids: string }> {
  return store.all<{ day: string; prompt_ids: string }>(PROMPTS_OF_DAYS, projectId, start, end);
}

/** The days with counted runs, newest first, each engine's row with its distinct counted prompts. */
const DAYS_NEWEST_FIRST = 'SELECT day, prompt_ids FROM agg_engine_day WHERE project_id = ? ORDER BY day DESC';

/** promptIdsOfDays over all the project's days, newest first, one row at a time (a caller stops when it has enough). */
export function promptIdsNewestFirst(store: ReadStore, projectId: string): IterableIterator<{ day: string; prompt_ids: string }> {
  return store.iterate<{ day: string; prompt_ids: string }>(DAYS_NEWEST_FIRST, projectId);
}

/**
 * The writer's rendered day points (migration 012), oldest first. They stand for the body only when
 * none of the project's days waits to be rendered again: a stale day may hold an old point, or none.
 */
const ANY_STALE_DAY = 'SELECT 1 FROM trend_days_stale WHERE project_id = ? LIMIT 1';
const DAY_POINTS = 'SELECT point FROM trend_days WHERE project_id = ? AND day BETWEEN ? AND ? ORDER BY day';

/** Whether any of the project's trend days waits to be rendered again. */
export function anyStaleTrendDay(store: ReadStore, projectId: string): boolean {
  return store.value(ANY_STALE_DAY, projectId) !== undefined;
}

/** The rendered points (JSON texts) of the project's days start..end, oldest first. */
export function trendDayPoints(store: ReadStore, projectId: string, start: string, end: string): string[] {
  return store.column<string>(DAY_POINTS, projectId, start, end);
}
