import { addDays } from '../lib/time';
import { addMention, parseHits, zeroMention } from '../store/contributions';
import {
  addSums, averageRank, compareStrings, dayFigures, mentionRate, mentionRateCi, score, sentiment, shareCi, shareOfVoice, sumAll, wilson, zeroSums, Z95, type Interval, type MentionSums,
} from '../store/metrics';
import { nextMonth, periodEnd, periodStart, type Grain } from '../store/periods';
import { engineSumsOf, type DayEngineSums, type EngineDayRow } from '../store/trend-days';
import type { Period } from './args';
import type { ReadStore } from './store';

/** A period's first day: the writer keys its roll-ups by it (src/store/aggregates.ts), and the answers date their points by it. */
export { periodStart };

/** The metric formulas are the store's (store/metrics.ts): the writer renders the trend's days with them. */
export {
  addSums, averageRank, compareStrings, dayFigures, mentionRate, mentionRateCi, score, sentiment, shareCi, shareOfVoice, sumAll, wilson, zeroSums, Z95, type Interval, type MentionSums,
};

export interface Window {
  start: string;   // YYYY-MM-DD, inclusive
  end: string;     // YYYY-MM-DD, inclusive: the day of the project's latest succeeded run
}

/** The day of the project's newest succeeded run, walking prompt_runs_recent from the newest run (usually one step). */
const LATEST_DAY = "SELECT day FROM prompt_runs WHERE project_id = ? AND status = 'succeeded' ORDER BY completed_at DESC LIMIT 1";

/**
 * The current window: the `days` UTC days ending with the day of the project's latest succeeded run
 * (not the wall clock, so replays are reproducible). An engine filter never moves it. Null when the
 * project has no succeeded runs.
 */
export function currentWindow(store: ReadStore, projectId: string, days: number): Window | null {
  const end = store.value<string | null>(LATEST_DAY, projectId);
  if (!end) return null;
  return { start: addDays(end, -(days - 1)), end };
}

/**
 * SQL that restricts agg rows (alias `a`) to runs that count: the prompt exists in the run's own project
 * (upstream ids can disagree; another project's prompt must not count or show) and is not deleted,
 * and the engine is known. A fact whose parent has not arrived yet shows once it arrives.
 */
export const COUNTED_RUNS_JOIN = `JOIN prompts p ON p.id = a.prompt_id AND p.project_id = a.project_id AND p.deleted = 0 JOIN engines e ON e.id = a.engine_id`;

/**
 * The same rule as a filter, for scans that sum many agg rows (`a.project_id` is bound to the same
 * project): `AND a.prompt_id IN (...) AND a.engine_id IN (...)`, its one `?` bound to the project id.
 * Identical rows: prompts.id and engines.id are primary keys, so the join matched at most one row and
 * only filtered. SQLite builds the project's prompt list once per statement instead of two b-tree
 * lookups per agg row (a year of a project is tens of thousands of rows); names are joined after grouping.
 */
export const COUNTED_RUNS = ` AND a.prompt_id IN (SELECT id FROM prompts WHERE project_id = ? AND deleted = 0)
    AND a.engine_id IN (SELECT id FROM engines)`;

/**
 * An engine filter as SQL: `AND a.engine_id IN (SELECT value FROM json_each(?))`, bound to a JSON
 * array. With no filter the clause is empty and binds nothing, so both forms stay prepared once.
 */
export function engineFilter(engineIds: string[] | null): { sql: string; params: string[] } {
  if (engineIds === null) return { sql: '', params: [] };
  return { sql: ' AND a.engine_id IN (SELECT value FROM json_each(?))', params: [JSON.stringify(engineIds)] };
}

// ---- Window sums shared by the metric endpoints (visibility, trends, segments, rankings).

/** Counted runs of one project over an inclusive day range, optionally restricted to some engines. */
export interface Slice {
  projectId: string;
  start: string;
  end: string;
  engineIds: string[] | null;
}

/** What a request says about its days (ReadArgs). */
export interface RangeArgs {
  projectId: string;
  startDate: string | null;
  endDate: string | null;
}

/**
 * The days a request covers (docs/metrics.md#date-ranges): start_date..end_date when both are given
 * (checked by the HTTP layer: in order, at most 366 days); one of them alone, the `days` days starting
 * or ending there; neither, the current window of `days` days (v1: follows the data, null when the
 * project has no succeeded runs). An explicit range does not depend on the data, and may hold no runs.
 */
export function requestedWindow(store: ReadStore, args: RangeArgs, days: number): Window | null {
  if (args.startDate !== null && args.endDate !== null) return { start: args.startDate, end: args.endDate };
  if (args.endDate !== null) return { start: addDays(args.endDate, -(days - 1)), end: args.endDate };
  if (args.startDate !== null) return { start: args.startDate, end: addDays(args.startDate, days - 1) };
  return currentWindow(store, args.projectId, days);
}

/** The requested window of a request as a slice (with its engine filter); null when there is none (no runs, no range). */
export function currentSlice(store: ReadStore, args: RangeArgs & { windowDays: number; engineIds: string[] | null }): Slice | null {
  const w = requestedWindow(store, args, args.windowDays);
  return w && { projectId: args.projectId, start: w.start, end: w.end, engineIds: args.engineIds };
}

/**
 * A run of consecutive rows of one grain's table (agg_*_day, _week, _month): the rows whose `day`
 * (the period's first day) is in start..end.
 */
export interface Piece {
  grain: Grain;
  start: string;
  end: string;
}

/**
 * Whether the roll-up rows of a week or month of the project are pending (migration 010: a bulk
 * writer has not counted them again yet): a range reads that period's days instead, which sum to the
 * same. Asked in the read's own transaction, so it is the snapshot the rows come from.
 */
export type Stale = (grain: Exclude<Grain, 'day'>, start: string) => boolean;
const NOTHING_STALE: Stale = () => false;
const PENDING_PERIODS = "SELECT grain || ' ' || day AS period FROM rollup_pending WHERE project_id = ?";

export function stalePeriods(store: ReadStore, projectId: string): Stale {
  const pending = store.all<{ period: string }>(PENDING_PERIODS, projectId);
  if (pending.length === 0) return NOTHING_STALE;
  const periods = new Set(pending.map((p) => p.period));
  return (grain, start) => periods.has(`${grain} ${start}`);
}

const isFirstOfMonth = (day: string): boolean => day.endsWith('-01');
const isMonday = (day: string): boolean => new Date(`${day}T00:00:00Z`).getUTCDay() === 1;

/**
 * The days start..end (inclusive) as whole months, whole ISO weeks and single days, in order, with
 * as few rows to read as the roll-ups allow (migration 007): a year is about 11 month rows, a few
 * week rows and the days of its ragged edges, not 365 day rows. `grouping` keeps every piece inside
 * one period of the answer: 'week' never reads a month row (a month cuts weeks), 'month' never a
 * week that crosses a month's end, 'day' only days; 'total' (one sum over the range) uses them all.
 * Consecutive pieces of one grain are joined: one query each. A `stale` period is read as smaller pieces.
 */
export function rangePieces(start: string, end: string, grouping: Period | 'total', stale: Stale = NOTHING_STALE): Piece[] {
  const pieces: Piece[] = [];
  const push = (grain: Grain, day: string): void => {
    const last = pieces[pieces.length - 1];
    if (last && last.grain === grain) last.end = day;
    else pieces.push({ grain, start: day, end: day });
  };
  const months = grouping === 'total' || grouping === 'month';
  const weeks = grouping !== 'day';
  // A month that starts after `day` within 6 days and fits in the range: the week would cut it.
  const cutsAMonth = (day: string): boolean => {
    const m = nextMonth(day);
    return months && m <= periodEnd(day, 'week') && periodEnd(m, 'month') <= end && !stale('month', m);
  };
  for (let day = start; day <= end;) {
    if (months && isFirstOfMonth(day) && periodEnd(day, 'month') <= end && !stale('month', day)) {
      push('month', day);
      day = nextMonth(day);
    } else if (weeks && isMonday(day) && periodEnd(day, 'week') <= end && !cutsAMonth(day) && !stale('week', day)
      && (grouping !== 'month' || periodEnd(day, 'week').slice(0, 7) === day.slice(0, 7))) {
      push('week', day);
      day = addDays(day, 7);
    } else {
      push('day', day);
      day = addDays(day, 1);
    }
  }
  return pieces;
}

const BRAND_SUMS = `sum(a.runs) AS runs, sum(a.brand_runs) AS mentioned, sum(a.position_sum) AS position_sum,
    sum(a.rr_fixed) AS rr_fixed, sum(a.sentiment_fixed) AS sentiment_fixed, sum(a.sentiment_n) AS sentiment_n`;
/** Competitor rows carry no slice size: `runs` is 0 here; give them the slice's runs with `overRuns`. */
const COMPETITOR_SUMS = `0 AS runs, sum(a.runs) AS mentioned, sum(a.position_sum) AS position_sum,
    sum(a.rr_fixed) AS rr_fixed, sum(a.sentiment_fixed) AS sentiment_fixed, sum(a.sentiment_n) AS sentiment_n`;
/** Binds the project, the first and last period, then the project again (COUNTED_RUNS). */
const IN_SLICE = `WHERE a.project_id = ? AND a.day BETWEEN ? AND ?${COUNTED_RUNS}`;
/**
 * The roll-up rows of the periods, before the counting rule (binds the project, the first and last
 * period). The range sums below group first and apply the rule to the groups: a rule on a key they
 * group by (prompt, competitor, engine) keeps or drops whole groups, so the sums are the same, and
 * it is checked on ~75 groups instead of each of a year's ~4,400 rows (the competitor sums of a
 * year: 0.80 of the time, the brand sums 0.86; docs/benchmarks.md).
 */
const IN_PERIODS = 'WHERE a.project_id = ? AND a.day BETWEEN ? AND ?';
type RolledGrain = Exclude<Grain, 'day'>;
/** One SQL text per roll-up grain: `agg_prompt_week` / `agg_competitor_week` in `sql` become the grain's tables (same columns). */
const perGrain = (sql: string): Record<RolledGrain, string> => ({
  week: sql,
  month: sql.replace(/\bagg_(prompt|competitor)_week\b/g, 'agg_$1_month'),
});

/**
 * A range's days are summed from the runs themselves (migration 011: a run is its day's row): the
 * counted, succeeded runs of the project completed on the days start..end, through
 * prompt_runs_recent (project_id, completed_at). Binds the project, the first and the last day, the
 * project again (COUNTED_RUNS), then the engines when filtered. The sums are those the writer adds
 * to the roll-ups (src/store/contributions.ts), so a range reads the same numbers whatever its pieces.
 */
const RUNS_OF_DAYS = (columns: string, filtered: boolean): string => `SELECT ${columns} FROM prompt_runs a
  WHERE a.project_id = ? AND a.completed_at >= ? AND a.completed_at < ? || 'U' AND a.status = 'succeeded'${COUNTED_RUNS}${filtered ? engineFilter([]).sql : ''}`;
const runsOfDays = (columns: string): Record<'unfiltered' | 'filtered', string> => ({ unfiltered: RUNS_OF_DAYS(columns, false), filtered: RUNS_OF_DAYS(columns, true) });

/** What a day piece binds (RUNS_OF_DAYS). */
const dayParams = (s: Slice, p: Piece): unknown[] => [s.projectId, p.start, p.end, s.projectId, ...engineFilter(s.engineIds).params];

export interface EnginePromptSums extends MentionSums {
  engine_id: string;
  engine_name: string;
  prompt_id: string;
  prompt_text: string;
}

/** Summed columns of a grouped subquery `g`, named as BRAND_SUMS names them. */
const GROUPED_SUMS = 'g.runs, g.mentioned, g.position_sum, g.rr_fixed, g.sentiment_fixed, g.sentiment_n';

/** Binds IN_PERIODS, the engines when filtered, then the project (the counting rule as joins: COUNTED_RUNS_JOIN). */
const BRAND_BY_ENGINE_PROMPT = `SELECT g.engine_id, e.name AS engine_name, g.prompt_id, p.text AS prompt_text, ${GROUPED_SUMS}
  FROM (SELECT a.engine_id, a.prompt_id, ${BRAND_SUMS} FROM agg_prompt_week a ${IN_PERIODS}`;
const GROUP_ENGINE_PROMPT = ` GROUP BY a.engine_id, a.prompt_id) g
  JOIN engines e ON e.id = g.engine_id JOIN prompts p ON p.id = g.prompt_id AND p.project_id = ? AND p.deleted = 0
  ORDER BY g.engine_id, g.prompt_id`;

const BRAND_BY_ENGINE_PROMPT_AT = { unfiltered: perGrain(BRAND_BY_ENGINE_PROMPT + GROUP_ENGINE_PROMPT), filtered: perGrain(BRAND_BY_ENGINE_PROMPT + engineFilter([]).sql + GROUP_ENGINE_PROMPT) };
const BRAND_OF_RUNS = runsOfDays('a.engine_id, a.prompt_id, a.brand_position, a.brand_sentiment');
type BrandRun = [engine_id: string, prompt_id: string, brand_position: number | null, brand_sentiment: number | null];
const ENGINE_NAMES = 'SELECT id, name FROM engines';
const PROMPT_TEXTS = 'SELECT id, text FROM prompts WHERE project_id = ?';

/**
 * Sums of each piece of a slice's days (rangePieces, 'total'), added per key. One piece (any range
 * of up to 6 days, the v1 window among them) is its rows as they come; several are integers
 * added, so the same numbers, then put back in the order `compare` states (the pieces').
 */
function sliceSums<T extends MentionSums>(store: ReadStore, s: Slice, query: (piece: Piece) => T[], keyOf: (r: T) => string, compare: (a: T, b: T) => number): T[] {
  const pieces = rangePieces(s.start, s.end, 'total', stalePeriods(store, s.projectId));
  if (pieces.length === 1) return query(pieces[0]!);
  const out = new Map<string, T>();
  for (const piece of pieces) {
    for (const r of query(piece)) {
      const into = out.get(keyOf(r));
      if (into) addSums(into, r);
      else out.set(keyOf(r), r);
    }
  }
  return [...out.values()].sort(compare);
}

/** A run's best mention added to sums (the writer's arithmetic: contributions.ts). */
function addBest(into: MentionSums, position: number, sentiment: number | null): void {
  const d = zeroMention();
  addMention(d, position, sentiment, 1);
  into.mentioned += d.runs;
  into.position_sum += d.position_sum;
  into.rr_fixed += d.rr_fixed;
  into.sentiment_fixed += d.sentiment_fixed;
  into.sentiment_n += d.sentiment_n;
}

const byEnginePrompt = (a: EnginePromptSums, b: EnginePromptSums): number => compareStrings(a.engine_id, b.engine_id) || compareStrings(a.prompt_id, b.prompt_id);

/** A day piece's brand sums per engine x prompt, from its runs, named as the roll-up query names them. */
function brandOfDays(store: ReadStore, s: Slice, p: Piece): EnginePromptSums[] {
  const runs = store.rows<BrandRun>(BRAND_OF_RUNS[s.engineIds === null ? 'unfiltered' : 'filtered'], ...dayParams(s, p));
  if (runs.length === 0) return [];
  const out = new Map<string, EnginePromptSums>();
  for (const [engine_id, prompt_id, position, sentimentValue] of runs) {
    const key = `${engine_id} ${prompt_id}`;
    let r = out.get(key);
    if (!r) out.set(key, (r = { engine_id, engine_name: '', prompt_id, prompt_text: '', ...zeroSums() }));
    r.runs += 1;
    if (position !== null) addBest(r, position, sentimentValue);
  }
  const engines = new Map(store.all<{ id: string; name: string }>(ENGINE_NAMES).map((e) => [e.id, e.name]));
  const prompts = new Map(store.all<{ id: string; text: string }>(PROMPT_TEXTS, s.projectId).map((q) => [q.id, q.text]));
  for (const r of out.values()) {
    r.engine_name = engines.get(r.engine_id)!; // counted runs: the engine is known, the prompt the project's
    r.prompt_text = prompts.get(r.prompt_id)!;
  }
  return [...out.values()].sort(byEnginePrompt);
}

/** Brand sums per engine x prompt in a slice (only pairs with counted runs), in id order. */
export function brandSumsByEnginePrompt(store: ReadStore, s: Slice): EnginePromptSums[] {
  const f = engineFilter(s.engineIds);
  const sql = BRAND_BY_ENGINE_PROMPT_AT[s.engineIds === null ? 'unfiltered' : 'filtered'];
  return sliceSums(store, s, (p) => (p.grain === 'day' ? brandOfDays(store, s, p) : store.all<EnginePromptSums>(sql[p.grain], s.projectId, p.start, p.end, ...f.params, s.projectId)),
    (r) => `${r.engine_id}|${r.prompt_id}`, byEnginePrompt);
}

export interface CompetitorPromptSums extends MentionSums {
  competitor_id: string;
  prompt_id: string;
}

/**
 * Binds IN_PERIODS, the engines when filtered, then the project twice. The engine is not a key of
 * the groups, so known engines are checked per row; the prompt rule (COUNTED_RUNS) and the tracked
 * competitors (not deleted; mentions of unknown ids are ignored) per group.
 */
const COMPETITOR_BY_PROMPT = `SELECT g.competitor_id, g.prompt_id, ${GROUPED_SUMS}
  FROM (SELECT a.competitor_id, a.prompt_id, ${COMPETITOR_SUMS} FROM agg_competitor_week a ${IN_PERIODS} AND a.engine_id IN (SELECT id FROM engines)`;
const GROUP_COMPETITOR_PROMPT = ` GROUP BY a.competitor_id, a.prompt_id) g
  WHERE g.prompt_id IN (SELECT id FROM prompts WHERE project_id = ? AND deleted = 0)
    AND g.competitor_id IN (SELECT id FROM competitors WHERE project_id = ? AND deleted = 0)
  ORDER BY g.competitor_id, g.prompt_id`;

const COMPETITOR_BY_PROMPT_AT = { unfiltered: perGrain(COMPETITOR_BY_PROMPT + GROUP_COMPETITOR_PROMPT), filtered: perGrain(COMPETITOR_BY_PROMPT + engineFilter([]).sql + GROUP_COMPETITOR_PROMPT) };
const HITS_OF_RUNS = runsOfDays('a.prompt_id, a.hits');
const TRACKED_IDS = 'SELECT id FROM competitors WHERE project_id = ? AND deleted = 0';

const byCompetitorPrompt = (a: CompetitorPromptSums, b: CompetitorPromptSums): number => compareStrings(a.competitor_id, b.competitor_id) || compareStrings(a.prompt_id, b.prompt_id);

/** A day piece's tracked-competitor sums per competitor x prompt, from its runs' hits (each competitor once per run, at its best). */
function competitorsOfDays(store: ReadStore, s: Slice, p: Piece): CompetitorPromptSums[] {
  const runs = store.rows<[prompt_id: string, hits: string]>(HITS_OF_RUNS[s.engineIds === null ? 'unfiltered' : 'filtered'], ...dayParams(s, p));
  if (runs.length === 0) return [];
  const tracked = new Set(store.all<{ id: string }>(TRACKED_IDS, s.projectId).map((c) => c.id));
  const out = new Map<string, CompetitorPromptSums>();
  for (const [prompt_id, hits] of runs) {
    for (const m of parseHits(hits)) {
      if (!tracked.has(m.competitor_id)) continue;
      const key = `${m.competitor_id} ${prompt_id}`;
      let r = out.get(key);
      if (!r) out.set(key, (r = { competitor_id: m.competitor_id, prompt_id, ...zeroSums() }));
      addBest(r, m.position, m.sentiment);
    }
  }
  return [...out.values()].sort(byCompetitorPrompt);
}

/** Mention sums of tracked competitors per competitor x prompt in a slice (runs = 0, see COMPETITOR_SUMS). */
export function competitorSumsByPrompt(store: ReadStore, s: Slice): CompetitorPromptSums[] {
  const f = engineFilter(s.engineIds);
  const sql = COMPETITOR_BY_PROMPT_AT[s.engineIds === null ? 'unfiltered' : 'filtered'];
  return sliceSums(store, s, (p) => (p.grain === 'day' ? competitorsOfDays(store, s, p)
    : store.all<CompetitorPromptSums>(sql[p.grain], s.projectId, p.start, p.end, ...f.params, s.projectId, s.projectId)),
  (r) => `${r.competitor_id}|${r.prompt_id}`, byCompetitorPrompt);
}

/** A period's brand sums of one engine: `day` is the period's first day. */
export type PeriodEngineSums = DayEngineSums;

// The trend and the daily scores read the counted sums per project, day and engine (migration 008:
// agg_engine_day, kept by the writer under the deleted-prompt, known-engine and tracked-competitor
// rules): a year is 1,825 rows, not the ~90k rows by prompt and competitor they add up. The query
// itself takes ~0.1-0.4 ms; handing its 1,825 rows of 8 columns to JS took 4.1 ms on the Xeon host (each
// value made through V8's C++ API), the same rows as one JSON text + JSON.parse ~2.5 ms
// (docs/benchmarks.md, "The year-long trend's rows as one JSON text; ..."). Each row also carries
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
const PERIOD_OF_DAY: Record<Exclude<Period, 'day'>, string> = {
  week: "date(g.day, '-' || ((CAST(strftime('%w', g.day) AS INTEGER) + 6) % 7) || ' days')",
  month: "substr(g.day, 1, 8) || '01'",
};
/** The engine-day rows added up per period in SQL: a year by week is 260 rows to hand over, not 1,825. */
const ENGINE_PERIODS = (interval: Exclude<Period, 'day'>): string => `SELECT json_group_array(json_array(p, e, r, b, ps, rr, sf, sn, c))
  FROM (SELECT ${PERIOD_OF_DAY[interval]} AS p, g.engine_id AS e, sum(g.runs) AS r, sum(g.brand_runs) AS b, sum(g.position_sum) AS ps,
      sum(g.rr_fixed) AS rr, sum(g.sentiment_fixed) AS sf, sum(g.sentiment_n) AS sn, sum(g.competitor_runs) AS c
    FROM agg_engine_day g
    WHERE g.project_id = ? AND g.day BETWEEN ? AND ?
    GROUP BY 1, 2 ORDER BY 1, 2)`;
const ENGINE_SUMS: Record<Period, string> = { day: ENGINE_DAYS, week: ENGINE_PERIODS('week'), month: ENGINE_PERIODS('month') };

/** What the trend and the daily scores read of a range, per day, ISO week or month (`day` is the period's first day). */
export interface EnginePeriods {
  /** Brand sums per period x engine, oldest period first, engines in id order; a row of an unknown engine is left out, as a join would. */
  engines: PeriodEngineSums[];
  /** Per period with any: runs mentioning a tracked competitor, summed over competitors and engines (the share-of-voice denominator part). */
  competitorMentions: Map<string, number>;
}

/** The brand sums per period and engine of start..end, and the competitor mentions per period, in one read. */
export function engineSumsByPeriod(store: ReadStore, projectId: string, start: string, end: string, interval: Period): EnginePeriods {
  const rows = store.json<EngineDayRow[]>(ENGINE_SUMS[interval], projectId, start, end);
  // Sorted all the same: nothing binds the planner to keep a subquery's order in an aggregate (a
  // sort of rows already in order is one pass of comparisons, ~0.1 ms for a year).
  rows.sort((a, b) => compareStrings(a[0], b[0]) || compareStrings(a[1], b[1]));
  return engineSumsOf(rows, new Map(store.all<{ id: string; name: string }>(ENGINE_NAMES).map((e) => [e.id, e.name])));
}

/** periodStart for many rows of few days: each day's period computed once (a Date per call otherwise). */
function periodsOf(interval: Period): (day: string) => string {
  const seen = new Map<string, string>();
  return (day) => {
    let period = seen.get(day);
    if (period === undefined) seen.set(day, (period = periodStart(day, interval)));
    return period;
  };
}

const PROMPTS_BY_PERIOD_AT = perGrain(`SELECT a.day, a.prompt_id FROM agg_prompt_week a ${IN_SLICE} GROUP BY a.day, a.prompt_id`);
/** Days' distinct counted prompts, from the engine-day rows (counted runs only; each lists its prompts). */
const PROMPTS_OF_DAYS = 'SELECT day, prompt_ids FROM agg_engine_day WHERE project_id = ? AND day BETWEEN ? AND ?';

/** Per period with counted runs: its distinct prompts among them (a prompt counts once per period, however many pieces hold it). */
export function promptsByPeriod(store: ReadStore, projectId: string, start: string, end: string, interval: Period): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const periodOf = periodsOf(interval);
  const into = (day: string): Set<string> => {
    const period = periodOf(day);
    let prompts = out.get(period);
    if (!prompts) out.set(period, (prompts = new Set()));
    return prompts;
  };
  for (const p of rangePieces(start, end, interval, stalePeriods(store, projectId))) {
    if (p.grain === 'day') {
      for (const r of store.all<{ day: string; prompt_ids: string }>(PROMPTS_OF_DAYS, projectId, p.start, p.end)) {
        const prompts = into(r.day);
        for (const id of r.prompt_ids.split(',')) prompts.add(id);
      }
      continue;
    }
    for (const r of store.all<{ day: string; prompt_id: string }>(PROMPTS_BY_PERIOD_AT[p.grain], projectId, p.start, p.end, projectId)) into(r.day).add(r.prompt_id);
  }
  return out;
}

const TRACKED_COMPETITORS = 'SELECT id, name FROM competitors WHERE project_id = ? AND deleted = 0 ORDER BY name, id';

/** The project's tracked (non-deleted) competitors, by name then id. */
export function trackedCompetitors(store: ReadStore, projectId: string): Array<{ id: string; name: string }> {
  return store.all(TRACKED_COMPETITORS, projectId);
}

/** Adds rows into one total per key (integers: exact in any order). */
export function sumBy<T extends MentionSums>(rows: readonly T[], keyOf: (r: T) => string): Map<string, MentionSums> {
  const out = new Map<string, MentionSums>();
  for (const r of rows) {
    let into = out.get(keyOf(r));
    if (!into) out.set(keyOf(r), (into = zeroSums()));
    addSums(into, r);
  }
  return out;
}

/** A competitor's sums measured against the runs of its slice (mention_rate and score divide by them). */
export const overRuns = (s: MentionSums, runs: number): MentionSums => ({ ...s, runs });

/** part / whole; null when whole is 0 (share of voice of a competitor: its mentions / all mentions). */
export const shareOf = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);
