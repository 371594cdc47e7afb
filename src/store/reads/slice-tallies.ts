// A project's counted-run tallies per engine, prompt and country over a range of days, for the signals
// (src/readmodels/endpoints/signals.ts): what each slice's mention rates are summed from.
import { addDays } from '../../lib/time';
import { KEY_OF } from '../keys';
import { nextMonth, periodEnd } from '../periods';
import type { ReadStore } from '../read-store';

// ---- A range as its whole months (slice_months, slice_month_hits: migration 023) and the days
// before and after them (slice_days, slice_hits). The month rows are the sums of their days per
// country, so a read that keys by nothing finer than the country and the month adds the same integers
// either way: a year is ~11 month rows per pair and country, and up to two ragged months of days.

/** Bounds that BETWEEN matches nothing in. */
const NO_DAYS: readonly [string, string] = ['9999-12-31', '0000-01-01'];

/** start..end as [days before, whole months (their first days), days after], each a BETWEEN's bounds. */
export function monthSplit(start: string, end: string): Array<readonly [string, string]> {
  const first = start.endsWith('-01') ? start : nextMonth(start);
  let last = `${end.slice(0, 8)}01`; // the first day of the last whole month
  if (periodEnd(last, 'month') !== end) last = `${addDays(last, -1).slice(0, 8)}01`;
  if (first > last || first > end) return [[start, end], NO_DAYS, NO_DAYS];
  const lastDay = periodEnd(last, 'month');
  return [first > start ? [start, addDays(first, -1)] : NO_DAYS, [first, last], lastDay < end ? [addDays(lastDay, 1), end] : NO_DAYS];
}

/** A dims filter (a JSON list of dims numbers) on a day row, and the same on a month row: the countries of those numbers. */
const DIMS_IN = ' AND s.dims IN (SELECT value FROM json_each(?))';
const COUNTRY_IN = " AND s.country IN (SELECT d.country FROM dims d WHERE d.n IN (SELECT value FROM json_each(?)))";

/**
 * The rows of a range from days and whole months, as one source: day (a month row's first day),
 * engine, prompt, country ('' for none), then `sums`. Binds, three times: project, from, to (and the
 * dims list when filtered): what monthParams gives.
 */
function monthSource(days: string, months: string, sums: string, filtered: boolean): string {
  const dayRows = `SELECT s.day, s.engine, s.prompt, coalesce(d.country, '') AS country, ${sums}
    FROM ${days} s LEFT JOIN dims d ON d.n = s.dims WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ?${filtered ? DIMS_IN : ''}`;
  const monthRows = `SELECT s.month, s.engine, s.prompt, s.country, ${sums}
    FROM ${months} s WHERE s.project = ${KEY_OF} AND s.month BETWEEN ? AND ?${filtered ? COUNTRY_IN : ''}`;
  return `${dayRows} UNION ALL ${monthRows} UNION ALL ${dayRows}`;
}

/** The parameters of monthSource. */
function monthParams(projectId: string, start: string, end: string, dims: string | null): unknown[] {
  return monthSplit(start, end).flatMap(([from, to]) => (dims === null ? [projectId, from, to] : [projectId, from, to, dims]));
}

const BRAND_SUMS = 's.runs, s.brand_runs, s.position_sum, s.rr_fixed, s.sentiment_fixed, s.sentiment_n';
const HIT_SUMS = 's.competitor, s.runs, s.position_sum, s.rr_fixed, s.sentiment_fixed, s.sentiment_n';
const brandSource = (filtered: boolean): string => monthSource('slice_days', 'slice_months', BRAND_SUMS, filtered);
const hitSource = (filtered: boolean): string => monthSource('slice_hits', 'slice_month_hits', HIT_SUMS, filtered);

/**
 * Read from the sums per day and per month (migrations 022, 023), not the runs: a row per pair and
 * country of a whole month, and per pair of a ragged day. Summed per number in SQL first, then named
 * (a few thousand rows), in id order. A row's country is its dims number's ('' when it names none).
 */

/** Per engine x prompt x country: the succeeded runs, and those naming the brand (in no order: the caller's sums do not depend on it). */
const RUN_TALLIES = `SELECT json_group_array(json_array(e.id, p.id, t.k, t.n, t.b)) FROM (
  SELECT s.engine, s.prompt, s.country AS k, sum(s.runs) AS n, sum(s.brand_runs) AS b
  FROM (${brandSource(false)}) s GROUP BY 1, 2, 3) t
  JOIN keys e ON e.n = t.engine JOIN keys p ON p.n = t.prompt`;

/** Per engine x prompt x country x competitor: the succeeded runs naming the competitor (in no order: the caller's sums do not depend on it). */
const HIT_TALLIES = `SELECT json_group_array(json_array(e.id, p.id, t.k, c.id, t.n)) FROM (
  SELECT s.engine, s.prompt, s.country AS k, s.competitor, sum(s.runs) AS n
  FROM (${hitSource(false)}) s GROUP BY 1, 2, 3, 4) t
  JOIN keys e ON e.n = t.engine JOIN keys p ON p.n = t.prompt JOIN keys c ON c.n = t.competitor`;

export type RunTally = [engineId: string, promptId: string, country: string, runs: number, brandMentioned: number];
export type HitTally = [engineId: string, promptId: string, country: string, competitorId: string, mentioned: number];

/**
 * The project's succeeded runs completed on start..end (inclusive), per engine x prompt x country
 * (runs, brand mentions; country '' when the run names none) and per engine x prompt x country x
 * competitor (mentions), every engine, prompt and
 * competitor named: the counting rule is the caller's.
 */
export function runTallies(store: ReadStore, projectId: string, start: string, end: string): { runs: RunTally[]; hits: HitTally[] } {
  return {
    runs: store.json<RunTally[]>(RUN_TALLIES, ...monthParams(projectId, start, end, null)),
    hits: store.json<HitTally[]>(HIT_TALLIES, ...monthParams(projectId, start, end, null)),
  };
}

/** The numbers of the ids of a JSON list (keys, migration 013). */
const NUMBERS_OF = (param: string): string => `(SELECT k.n FROM json_each(${param}) j JOIN keys k ON k.id = j.value)`;

/**
 * The project's succeeded runs naming any dimension, of the engines and prompts given, per dims
 * number, over every day (migration 024): every pair's runs per dims number, less those of the pairs
 * not given (a row per pair read, and the rows of the pairs that do not count: CROSS JOIN keeps the
 * pairs the outer loop, or the planner scans every pair's rows). A number left with no runs is not
 * listed, as when the days were summed.
 */
const DIMS_RUNS = `SELECT t.dims, sum(t.runs) FROM (
    SELECT s.dims, s.runs FROM slice_dims s WHERE s.project = ${KEY_OF}
    UNION ALL
    SELECT x.dims, -x.runs FROM slice_pairs s CROSS JOIN slice_pair_dims x ON x.project = s.project AND x.engine = s.engine AND x.prompt = s.prompt
    WHERE s.project = ${KEY_OF} AND (s.engine NOT IN ${NUMBERS_OF('?')} OR s.prompt NOT IN ${NUMBERS_OF('?')})
  ) t GROUP BY t.dims HAVING sum(t.runs) > 0`;

/**
 * [dims number, runs] of the project's succeeded runs naming any dimension whose engine is one of
 * `engineIds` and prompt one of `promptIds` (the counting rule, decided in SQL on the numbers).
 */
export function dimsRunCounts(store: ReadStore, projectId: string, engineIds: readonly string[], promptIds: readonly string[]): Array<[number, number]> {
  return store.rows<[number, number]>(DIMS_RUNS, projectId, projectId, JSON.stringify(engineIds), JSON.stringify(promptIds));
}

/**
 * A slice's sums of days start..end from slice_days, per engine and prompt, and per period and
 * dimension value when asked (otherwise '' and null): [period, engine id, prompt id, country, persona,
 * model, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n]. The period is the
 * day, or the first day of its ISO week or month (periods.ts periodStart, in SQL); a dimension value
 * is null where the run names none. `dims`: only the rows of these dims numbers (a JSON list), null
 * for every row. Grouped in SQL by numbers and values, named after: a row per pair, period and value.
 */
export type SliceSumRow = [period: string, engineId: string, promptId: string, country: string | null, persona: string | null, model: string | null,
  runs: number, brandRuns: number, positionSum: number, rrFixed: number, sentimentFixed: number, sentimentN: number];

export type SliceDimension = 'country' | 'persona' | 'model';
export interface SliceGrouping {
  period: 'day' | 'week' | 'month' | null;
  dimensions: readonly SliceDimension[];
}

/** The first day of a day's period in SQL: an ISO week starts on Monday ('weekday 0' is the Sunday on or after it). */
const PERIOD_OF: Record<NonNullable<SliceGrouping['period']>, string> = {
  day: 's.day',
  week: "date(s.day, 'weekday 0', '-6 days')",
  month: "substr(s.day, 1, 8) || '01'",
};

/**
 * Whether a read keyed by `g` can take whole months from slice_months: it keys by no period finer than
 * the month and by no dimension but the country, and `monthly` says its filter is none or the country's alone.
 */
const byMonths = (g: SliceGrouping, monthly: boolean): boolean =>
  monthly && (g.period === null || g.period === 'month') && g.dimensions.every((d) => d === 'country');

/**
 * The counting rule decided in SQL (a group_by's read): only the rows of these engines and prompts,
 * summed per engine and per prompt only when the answer keys by them; a row's engine or prompt id
 * is '' where it does not.
 */
export interface CountedPairs {
  engineIds: readonly string[];
  promptIds: readonly string[];
  byEngine: boolean;
  byPrompt: boolean;
}

/** The pairs' filter on a source's rows `s` (binds the engines' then the prompts' JSON lists). */
const PAIRS_IN = ` AND s.engine IN ${NUMBERS_OF('?')} AND s.prompt IN ${NUMBERS_OF('?')}`;

/** The outer select of a sums read: the pairs named (left joins where the answer may not key by them). */
function namedSums(inner: string, pairs: CountedPairs | null): string {
  const join = pairs === null ? 'JOIN' : 'LEFT JOIN';
  return `SELECT t.period, ${pairs === null ? 'e.id, p.id' : "coalesce(e.id, ''), coalesce(p.id, '')"}, t.country, t.persona, t.model, t.runs, t.brand_runs,
    t.position_sum, t.rr_fixed, t.sentiment_fixed, t.sentiment_n FROM (${inner}) t ${join} keys e ON e.n = t.engine ${join} keys p ON p.n = t.prompt`;
}

const SUM_COLUMNS = `sum(s.runs) AS runs, sum(s.brand_runs) AS brand_runs,
    sum(s.position_sum) AS position_sum, sum(s.rr_fixed) AS rr_fixed, sum(s.sentiment_fixed) AS sentiment_fixed, sum(s.sentiment_n) AS sentiment_n`;
const pairColumns = (pairs: CountedPairs | null): string => `${pairs === null || pairs.byEngine ? 's.engine' : '0'} AS engine, ${pairs === null || pairs.byPrompt ? 's.prompt' : '0'} AS prompt`;

/** sliceSumsSql from days and whole months (monthSource). */
function sliceMonthSumsSql(g: SliceGrouping, filtered: boolean, pairs: CountedPairs | null): string {
  const country = g.dimensions.includes('country') ? "nullif(s.country, '')" : 'NULL';
  return namedSums(`SELECT ${g.period === null ? "''" : PERIOD_OF[g.period]} AS period, ${pairColumns(pairs)},
    ${country} AS country, NULL AS persona, NULL AS model, ${SUM_COLUMNS}
  FROM (${brandSource(filtered)}) s${pairs === null ? '' : ` WHERE 1${PAIRS_IN}`}
  GROUP BY 1, 2, 3, 4, 5, 6`, pairs);
}

function sliceSumsSql(g: SliceGrouping, filtered: boolean, pairs: CountedPairs | null): string {
  const value = (d: SliceDimension): string => (g.dimensions.includes(d) ? `nullif(d.${d}, '')` : 'NULL');
  const byDims = g.dimensions.length > 0;
  return namedSums(`SELECT ${g.period === null ? "''" : PERIOD_OF[g.period]} AS period, ${pairColumns(pairs)},
    ${value('country')} AS country, ${value('persona')} AS persona, ${value('model')} AS model, ${SUM_COLUMNS}
  FROM slice_days s${byDims ? ' LEFT JOIN dims d ON d.n = s.dims' : ''}
  WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ?${filtered ? ' AND s.dims IN (SELECT value FROM json_each(?))' : ''}${pairs === null ? '' : PAIRS_IN}
  GROUP BY 1, 2, 3, 4, 5, 6`, pairs);
}

/**
 * The rows of SliceSumRow, one at a time (a year by day is many). `monthly`: the dims filter is none
 * or on the country alone, so whole months may be read from slice_months (byMonths). `pairs`: the
 * counting rule applied in SQL, and the rows summed over the engines or prompts the answer does not key by.
 */
export function sliceSumsOfDays(store: ReadStore, projectId: string, start: string, end: string, g: SliceGrouping, dims: string | null,
  monthly = false, pairs: CountedPairs | null = null): IterableIterator<SliceSumRow> {
  const counted = pairs === null ? [] : [JSON.stringify(pairs.engineIds), JSON.stringify(pairs.promptIds)];
  if (byMonths(g, monthly)) {
    return store.iterateRaw<SliceSumRow>(sliceMonthSumsSql(g, dims !== null, pairs), ...monthParams(projectId, start, end, dims), ...counted);
  }
  const sql = sliceSumsSql(g, dims !== null, pairs);
  return store.iterateRaw<SliceSumRow>(sql, ...(dims === null ? [projectId, start, end] : [projectId, start, end, dims]), ...counted);
}

/**
 * A slice's competitor sums of days start..end from slice_hits, per engine, prompt and competitor,
 * and per day when `byDay` (otherwise ''): [day, engine id, prompt id, competitor id, runs,
 * position_sum, rr_fixed, sentiment_fixed, sentiment_n]. `dims` as in sliceSumsOfDays.
 */
export type SliceHitRow = [day: string, engineId: string, promptId: string, competitorId: string, runs: number,
  positionSum: number, rrFixed: number, sentimentFixed: number, sentimentN: number];

const sliceHitsSql = (byDay: boolean, filtered: boolean): string => `SELECT t.day, e.id, p.id, c.id, t.runs,
    t.position_sum, t.rr_fixed, t.sentiment_fixed, t.sentiment_n FROM (
  SELECT ${byDay ? 's.day' : "''"} AS day, s.engine, s.prompt, s.competitor, sum(s.runs) AS runs,
    sum(s.position_sum) AS position_sum, sum(s.rr_fixed) AS rr_fixed, sum(s.sentiment_fixed) AS sentiment_fixed, sum(s.sentiment_n) AS sentiment_n
  FROM slice_hits s WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ?${filtered ? ' AND s.dims IN (SELECT value FROM json_each(?))' : ''}
  GROUP BY ${byDay ? 's.day, ' : ''}s.engine, s.prompt, s.competitor) t
  JOIN keys e ON e.n = t.engine JOIN keys p ON p.n = t.prompt JOIN keys c ON c.n = t.competitor`;
const SLICE_HITS = [false, true].map((byDay) => [false, true].map((filtered) => sliceHitsSql(byDay, filtered)));

/** sliceHitsSql over the whole range (no day), from days and whole months (monthSource). */
const sliceMonthHitsSql = (filtered: boolean): string => `SELECT t.day, e.id, p.id, c.id, t.runs,
    t.position_sum, t.rr_fixed, t.sentiment_fixed, t.sentiment_n FROM (
  SELECT '' AS day, s.engine, s.prompt, s.competitor, sum(s.runs) AS runs,
    sum(s.position_sum) AS position_sum, sum(s.rr_fixed) AS rr_fixed, sum(s.sentiment_fixed) AS sentiment_fixed, sum(s.sentiment_n) AS sentiment_n
  FROM (${hitSource(filtered)}) s
  GROUP BY s.engine, s.prompt, s.competitor) t
  JOIN keys e ON e.n = t.engine JOIN keys p ON p.n = t.prompt JOIN keys c ON c.n = t.competitor`;
const SLICE_MONTH_HITS = [false, true].map(sliceMonthHitsSql);

/** The rows of SliceHitRow, one at a time. `monthly` as in sliceSumsOfDays (whole months are read by month when not `byDay`). */
export function sliceHitsOfDays(store: ReadStore, projectId: string, start: string, end: string, byDay: boolean, dims: string | null,
  monthly = false): IterableIterator<SliceHitRow> {
  if (!byDay && monthly) return store.iterateRaw<SliceHitRow>(SLICE_MONTH_HITS[Number(dims !== null)]!, ...monthParams(projectId, start, end, dims));
  const sql = SLICE_HITS[Number(byDay)]![Number(dims !== null)]!;
  return dims === null ? store.iterateRaw<SliceHitRow>(sql, projectId, start, end) : store.iterateRaw<SliceHitRow>(sql, projectId, start, end, dims);
}

/**
 * Per period (as in sliceSumsOfDays), engine and prompt: the runs mentioning each of `competitorIds`
 * (a JSON list; the tracked ones), added over those competitors from slice_hits: [period, engine id,
 * prompt id, mentions]. `dims` as in sliceSumsOfDays.
 */
export type SliceMentionRow = [period: string, engineId: string, promptId: string, mentions: number];

const sliceMentionsSql = (period: NonNullable<SliceGrouping['period']>, filtered: boolean): string => `SELECT t.period, e.id, p.id, t.n FROM (
  SELECT ${PERIOD_OF[period]} AS period, s.engine, s.prompt, sum(s.runs) AS n FROM slice_hits s
  WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ?${filtered ? ' AND s.dims IN (SELECT value FROM json_each(?))' : ''}
    AND s.competitor IN ${NUMBERS_OF('?')}
  GROUP BY 1, 2, 3) t JOIN keys e ON e.n = t.engine JOIN keys p ON p.n = t.prompt`;

/** sliceMentionsSql by month, from days and whole months (monthSource). */
const sliceMonthMentionsSql = (filtered: boolean): string => `SELECT t.period, e.id, p.id, t.n FROM (
  SELECT ${PERIOD_OF.month} AS period, s.engine, s.prompt, sum(s.runs) AS n FROM (${hitSource(filtered)}) s
  WHERE s.competitor IN ${NUMBERS_OF('?')}
  GROUP BY 1, 2, 3) t JOIN keys e ON e.n = t.engine JOIN keys p ON p.n = t.prompt`;
const SLICE_MONTH_MENTIONS = [false, true].map(sliceMonthMentionsSql);

/** The rows of SliceMentionRow, one at a time. `monthly` as in sliceSumsOfDays (by month only). */
export function sliceMentionsOfDays(store: ReadStore, projectId: string, start: string, end: string, period: NonNullable<SliceGrouping['period']>,
  competitorIds: readonly string[], dims: string | null, monthly = false): IterableIterator<SliceMentionRow> {
  const competitors = JSON.stringify(competitorIds);
  if (period === 'month' && monthly) {
    return store.iterateRaw<SliceMentionRow>(SLICE_MONTH_MENTIONS[Number(dims !== null)]!, ...monthParams(projectId, start, end, dims), competitors);
  }
  const sql = sliceMentionsSql(period, dims !== null);
  return dims === null ? store.iterateRaw<SliceMentionRow>(sql, projectId, start, end, competitors)
    : store.iterateRaw<SliceMentionRow>(sql, projectId, start, end, dims, competitors);
}
