import { addDays } from '../lib/time';
import { addMention, zeroMention } from '../store/contributions';
import { briefFacts, competitorRows, KEY_OF, parseNames, promptRows, type BriefFacts, type CompetitorRow, type PromptRow, type RollupNames } from '../store';
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

/** The number runs key a project or run group by (migration 013: keys), as SQL: binds the id. */
export { KEY_OF };

/** The day of the project's newest succeeded run, walking runs_recent from the newest run (usually one step). */
const LATEST_DAY = `SELECT substr(completed_at, 1, 10) FROM runs WHERE project = ${KEY_OF} AND status = 'succeeded'
  ORDER BY completed_at DESC LIMIT 1`;

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

/**
 * The counting rule (COUNTED_RUNS, as docs/metrics.md states it) as sets, read once per range: the project's non-deleted prompts
 * and the known engines. A run counts when its prompt is the project's (upstream ids can disagree;
 * another project's prompt must not count or show) and not deleted, and its engine is known. A fact
 * whose parent has not arrived yet shows once it arrives.
 */
export interface Counting {
  prompts: ReadonlySet<string>;
  engines: ReadonlySet<string>;
}

const COUNTED_PROMPTS = 'SELECT id FROM prompts WHERE project_id = ? AND deleted = 0';
const KNOWN_ENGINES = 'SELECT id FROM engines';

export function countingOf(store: ReadStore, projectId: string): Counting {
  return { prompts: new Set(store.column<string>(COUNTED_PROMPTS, projectId)), engines: new Set(store.column<string>(KNOWN_ENGINES)) };
}

/** Whether a run of this engine and prompt counts, after an engine filter (null: none). */
export function counts(c: Counting, engines: ReadonlySet<string> | null, engineId: string, promptId: string): boolean {
  return c.engines.has(engineId) && c.prompts.has(promptId) && (engines === null || engines.has(engineId));
}

/** What runsOfDays needs of a run's parsed facts: its engine and prompt, first. */
type KeyedFacts = { readonly 0: string; readonly 1: string };

/** A counted, succeeded run of a range's days, as its row keeps it (migration 013: runs.facts). */
export interface DayRun<F extends KeyedFacts = BriefFacts> {
  id: string;
  completed_at: string;
  day: string;
  facts: F;
}

/**
 * A range's days are summed from the runs themselves (migration 011: a run is its day's row): the
 * succeeded runs of the project completed on the days start..end, through runs_recent (project,
 * completed_at), those that count (and pass the engine filter) kept. The sums are those the writer
 * adds to the roll-ups (src/store/contributions.ts), so a range reads the same numbers whatever its pieces.
 * Each run's facts are parsed without its cited URLs (briefFacts) unless `parse` says otherwise.
 */
const RUNS_OF_DAYS = `SELECT id, completed_at, facts FROM runs
  WHERE project = ${KEY_OF} AND completed_at >= ? AND completed_at < ? || 'U' AND status = 'succeeded'`;

export function runsOfDays(store: ReadStore, s: Slice, p: Piece, counting: Counting): DayRun[];
export function runsOfDays<F extends KeyedFacts>(store: ReadStore, s: Slice, p: Piece, counting: Counting, parse: (json: string) => F): Array<DayRun<F>>;
export function runsOfDays(store: ReadStore, s: Slice, p: Piece, counting: Counting, parse: (json: string) => KeyedFacts = briefFacts): Array<DayRun<KeyedFacts>> {
  const engines = s.engineIds === null ? null : new Set(s.engineIds);
  const out: Array<DayRun<KeyedFacts>> = [];
  for (const [id, completedAt, json] of store.rows<[string, string, string]>(RUNS_OF_DAYS, s.projectId, p.start, p.end)) {
    const facts = parse(json);
    if (counts(counting, engines, facts[0], facts[1])) out.push({ id, completed_at: completedAt, day: completedAt.slice(0, 10), facts });
  }
  return out;
}

/**
 * The rows of one list of the roll-ups of a project's weeks or months start..end (a piece: the
 * periods' first days), period by period (migration 013: one row per period, its lists naming ids
 * and URLs by their place in `ids` and `urls`).
 * The brand and competitor lists name no URL: their periods' URLs are not read (nor parsed: a
 * period's URLs are most of its row).
 */
const ROLLUPS = (column: 'prompts' | 'competitors' | 'cited' | 'cited_engines', urls: 'urls' | "'[]'"): string =>
  `SELECT day, ids, ${urls}, ${column} FROM rollups WHERE project_id = ? AND grain = ? AND day BETWEEN ? AND ? ORDER BY day`;
const ROLLUP_SQL = {
  prompts: ROLLUPS('prompts', "'[]'"), competitors: ROLLUPS('competitors', "'[]'"), cited: ROLLUPS('cited', 'urls'), cited_engines: ROLLUPS('cited_engines', 'urls'),
};

export function rollupRows<R>(store: ReadStore, projectId: string, p: Piece, kind: keyof typeof ROLLUP_SQL,
  decode: (names: RollupNames, json: string) => R[]): Array<{ day: string; rows: R[] }> {
  return store.rows<[string, string, string, string]>(ROLLUP_SQL[kind], projectId, p.grain, p.start, p.end)
    .map(([day, ids, urls, json]) => ({ day, rows: decode(parseNames(ids, urls), json) }));
}

export interface EnginePromptSums extends MentionSums {
  engine_id: string;
  engine_name: string;
  prompt_id: string;
  prompt_text: string;
}

const ENGINE_NAMES = 'SELECT id, name FROM engines';
const PROMPT_TEXTS = 'SELECT id, text FROM prompts WHERE project_id = ?';

/** The text of each prompt of a project (deleted ones included), by id. */
export function promptTexts(store: ReadStore, projectId: string): Map<string, string> {
  return new Map(store.rows<[string, string]>(PROMPT_TEXTS, projectId));
}

/**
 * Sums of each piece of a slice's days (rangePieces, 'total'), added per key: integers, so the same
 * numbers whatever the pieces, then put in the order `compare` states.
 */
function sliceSums<T extends MentionSums>(store: ReadStore, s: Slice, add: (piece: Piece, into: Map<string, T>) => void, compare: (a: T, b: T) => number): T[] {
  const out = new Map<string, T>();
  for (const piece of rangePieces(s.start, s.end, 'total', stalePeriods(store, s.projectId))) add(piece, out);
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

/** Stored sums added to sums: [runs, mentioned, position_sum, rr_fixed, sentiment_fixed, sentiment_n]. */
function addStored(into: MentionSums, runs: number, mentioned: number, positionSum: number, rrFixed: number, sentimentFixedSum: number, sentimentN: number): void {
  into.runs += runs;
  into.mentioned += mentioned;
  into.position_sum += positionSum;
  into.rr_fixed += rrFixed;
  into.sentiment_fixed += sentimentFixedSum;
  into.sentiment_n += sentimentN;
}

const byEnginePrompt = (a: EnginePromptSums, b: EnginePromptSums): number => compareStrings(a.engine_id, b.engine_id) || compareStrings(a.prompt_id, b.prompt_id);

/** Brand sums per engine x prompt in a slice (only pairs with counted runs), in id order. */
export function brandSumsByEnginePrompt(store: ReadStore, s: Slice): EnginePromptSums[] {
  const counting = countingOf(store, s.projectId);
  const engines = s.engineIds === null ? null : new Set(s.engineIds);
  const into = (out: Map<string, EnginePromptSums>, engineId: string, promptId: string): EnginePromptSums => {
    const key = `${engineId} ${promptId}`;
    let r = out.get(key);
    if (!r) out.set(key, (r = { engine_id: engineId, engine_name: '', prompt_id: promptId, prompt_text: '', ...zeroSums() }));
    return r;
  };
  const rows = sliceSums<EnginePromptSums>(store, s, (p, out) => {
    if (p.grain === 'day') {
      for (const { facts: f } of runsOfDays(store, s, p, counting)) {
        const r = into(out, f[0], f[1]);
        r.runs += 1;
        if (f[2] !== null) addBest(r, f[2], f[3]);
      }
      return;
    }
    for (const period of rollupRows<PromptRow>(store, s.projectId, p, 'prompts', promptRows)) {
      for (const [engineId, promptId, runs, mentioned, ps, rr, sf, sn] of period.rows) {
        if (counts(counting, engines, engineId, promptId)) addStored(into(out, engineId, promptId), runs, mentioned, ps, rr, sf, sn);
      }
    }
  }, byEnginePrompt);
  if (rows.length === 0) return rows;
  const engineNames = new Map(store.all<{ id: string; name: string }>(ENGINE_NAMES).map((e) => [e.id, e.name]));
  const texts = promptTexts(store, s.projectId);
  for (const r of rows) {
    r.engine_name = engineNames.get(r.engine_id)!; // counted runs: the engine is known, the prompt the project's
    r.prompt_text = texts.get(r.prompt_id)!;
  }
  return rows;
}

export interface CompetitorPromptSums extends MentionSums {
  competitor_id: string;
  prompt_id: string;
}

const TRACKED_IDS = 'SELECT id FROM competitors WHERE project_id = ? AND deleted = 0';

const byCompetitorPrompt = (a: CompetitorPromptSums, b: CompetitorPromptSums): number => compareStrings(a.competitor_id, b.competitor_id) || compareStrings(a.prompt_id, b.prompt_id);

/**
 * Mention sums of tracked competitors (not deleted; mentions of unknown ids are ignored) per
 * competitor x prompt in a slice, over counted runs (runs = 0: competitor rows carry no slice size;
 * give them the slice's runs with `overRuns`).
 */
export function competitorSumsByPrompt(store: ReadStore, s: Slice): CompetitorPromptSums[] {
  const counting = countingOf(store, s.projectId);
  const engines = s.engineIds === null ? null : new Set(s.engineIds);
  const tracked = new Set(store.column<string>(TRACKED_IDS, s.projectId));
  const into = (out: Map<string, CompetitorPromptSums>, competitorId: string, promptId: string): CompetitorPromptSums => {
    const key = `${competitorId} ${promptId}`;
    let r = out.get(key);
    if (!r) out.set(key, (r = { competitor_id: competitorId, prompt_id: promptId, ...zeroSums() }));
    return r;
  };
  return sliceSums<CompetitorPromptSums>(store, s, (p, out) => {
    if (p.grain === 'day') {
      for (const { facts: f } of runsOfDays(store, s, p, counting)) {
        for (const [competitorId, position, sentimentValue] of f[6]) if (tracked.has(competitorId)) addBest(into(out, competitorId, f[1]), position, sentimentValue);
      }
      return;
    }
    for (const period of rollupRows<CompetitorRow>(store, s.projectId, p, 'competitors', competitorRows)) {
      for (const [engineId, promptId, competitorId, mentioned, ps, rr, sf, sn] of period.rows) {
        if (tracked.has(competitorId) && counts(counting, engines, engineId, promptId)) addStored(into(out, competitorId, promptId), 0, mentioned, ps, rr, sf, sn);
      }
    }
  }, byCompetitorPrompt);
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

/** Days' distinct counted prompts, from the engine-day rows (counted runs only; each lists its prompts). */
const PROMPTS_OF_DAYS = 'SELECT day, prompt_ids FROM agg_engine_day WHERE project_id = ? AND day BETWEEN ? AND ?';

/** Per period with counted runs: its distinct prompts among them (a prompt counts once per period, however many pieces hold it). */
export function promptsByPeriod(store: ReadStore, projectId: string, start: string, end: string, interval: Period): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const counting = countingOf(store, projectId);
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
    for (const period of rollupRows<PromptRow>(store, projectId, p, 'prompts', promptRows)) {
      for (const [engineId, promptId] of period.rows) if (counts(counting, null, engineId, promptId)) into(period.day).add(promptId);
    }
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
