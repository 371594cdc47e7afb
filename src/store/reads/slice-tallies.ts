// A project's counted-run tallies per engine, prompt and country over a range of days, for the signals
// (src/readmodels/endpoints/signals.ts): what each slice's mention rates are summed from.
import { KEY_OF } from '../keys';
import type { ReadStore } from '../read-store';

/**
 * Read from slice_days and slice_hits (migration 022: integer sums per day, engine, prompt and dims),
 * not the runs: one row per day and pair, whatever the runs. Summed per number in SQL first, then
 * named (a few thousand rows), in id order.
 */
const IN_RANGE = `WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ?`;

/** A row's country (migration 015: its dims number's; '' when it names none). */
const COUNTRY = "coalesce(d.country, '')";

/** Per engine x prompt x country: the succeeded runs, and those naming the brand (in no order: the caller's sums do not depend on it). */
const RUN_TALLIES = `SELECT json_group_array(json_array(e.id, p.id, t.k, t.n, t.b)) FROM (
  SELECT s.engine, s.prompt, ${COUNTRY} AS k, sum(s.runs) AS n, sum(s.brand_runs) AS b
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims ${IN_RANGE} GROUP BY 1, 2, 3) t
  JOIN keys e ON e.n = t.engine JOIN keys p ON p.n = t.prompt`;

/** Per engine x prompt x country x competitor: the succeeded runs naming the competitor (in no order: the caller's sums do not depend on it). */
const HIT_TALLIES = `SELECT json_group_array(json_array(e.id, p.id, t.k, c.id, t.n)) FROM (
  SELECT s.engine, s.prompt, ${COUNTRY} AS k, s.competitor, sum(s.runs) AS n
  FROM slice_hits s LEFT JOIN dims d ON d.n = s.dims ${IN_RANGE} GROUP BY 1, 2, 3, 4) t
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
    runs: store.json<RunTally[]>(RUN_TALLIES, projectId, start, end),
    hits: store.json<HitTally[]>(HIT_TALLIES, projectId, start, end),
  };
}

/** The numbers of the ids of a JSON list (keys, migration 013). */
const NUMBERS_OF = (param: string): string => `(SELECT k.n FROM json_each(${param}) j JOIN keys k ON k.id = j.value)`;

/** The project's succeeded runs naming any dimension, of the engines and prompts given, per dims number: every day of slice_days. */
const DIMS_RUNS = `SELECT s.dims, sum(s.runs) FROM slice_days s
  WHERE s.project = ${KEY_OF} AND s.dims != 0 AND s.engine IN ${NUMBERS_OF('?')} AND s.prompt IN ${NUMBERS_OF('?')} GROUP BY s.dims`;

/**
 * [dims number, runs] of the project's succeeded runs naming any dimension whose engine is one of
 * `engineIds` and prompt one of `promptIds` (the counting rule, decided in SQL on the numbers).
 */
export function dimsRunCounts(store: ReadStore, projectId: string, engineIds: readonly string[], promptIds: readonly string[]): Array<[number, number]> {
  return store.rows<[number, number]>(DIMS_RUNS, projectId, JSON.stringify(engineIds), JSON.stringify(promptIds));
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

function sliceSumsSql(g: SliceGrouping, filtered: boolean): string {
  const value = (d: SliceDimension): string => (g.dimensions.includes(d) ? `nullif(d.${d}, '')` : 'NULL');
  const byDims = g.dimensions.length > 0;
  return `SELECT t.period, e.id, p.id, t.country, t.persona, t.model, t.runs, t.brand_runs,
    t.position_sum, t.rr_fixed, t.sentiment_fixed, t.sentiment_n FROM (
  SELECT ${g.period === null ? "''" : PERIOD_OF[g.period]} AS period, s.engine, s.prompt,
    ${value('country')} AS country, ${value('persona')} AS persona, ${value('model')} AS model, sum(s.runs) AS runs, sum(s.brand_runs) AS brand_runs,
    sum(s.position_sum) AS position_sum, sum(s.rr_fixed) AS rr_fixed, sum(s.sentiment_fixed) AS sentiment_fixed, sum(s.sentiment_n) AS sentiment_n
  FROM slice_days s${byDims ? ' LEFT JOIN dims d ON d.n = s.dims' : ''}
  WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ?${filtered ? ' AND s.dims IN (SELECT value FROM json_each(?))' : ''}
  GROUP BY 1, 2, 3, 4, 5, 6) t JOIN keys e ON e.n = t.engine JOIN keys p ON p.n = t.prompt`;
}

/** The rows of SliceSumRow, one at a time (a year by day is many). */
export function sliceSumsOfDays(store: ReadStore, projectId: string, start: string, end: string, g: SliceGrouping, dims: string | null): IterableIterator<SliceSumRow> {
  const sql = sliceSumsSql(g, dims !== null);
  return dims === null ? store.iterateRaw<SliceSumRow>(sql, projectId, start, end) : store.iterateRaw<SliceSumRow>(sql, projectId, start, end, dims);
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

/** The rows of SliceHitRow, one at a time. */
export function sliceHitsOfDays(store: ReadStore, projectId: string, start: string, end: string, byDay: boolean, dims: string | null): IterableIterator<SliceHitRow> {
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

/** The rows of SliceMentionRow, one at a time. */
export function sliceMentionsOfDays(store: ReadStore, projectId: string, start: string, end: string, period: NonNullable<SliceGrouping['period']>,
  competitorIds: readonly string[], dims: string | null): IterableIterator<SliceMentionRow> {
  const sql = sliceMentionsSql(period, dims !== null);
  const competitors = JSON.stringify(competitorIds);
  return dims === null ? store.iterateRaw<SliceMentionRow>(sql, projectId, start, end, competitors)
    : store.iterateRaw<SliceMentionRow>(sql, projectId, start, end, dims, competitors);
}
