// A project's brand sums per period, engine and one dimension's value over a range, without the
// prompt (slice_values, slice_value_months: migration 026), for a group_by by a dimension or a period.
import { KEY_OF } from '../keys';
import { periodEnd } from '../periods';
import { monthSplit } from './slice-tallies';
import type { ReadStore } from '../read-store';

/** The dimension a read keys by: 0 none (every run), 1 country, 2 persona, 3 model (migration 026). */
export type ValueDimension = 0 | 1 | 2 | 3;

/** [period ('' when none), engine id ('' when not by engine), value ('' when the run names none), runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n]. */
export type SliceValueRow = [period: string, engineId: string, value: string, runs: number, brandRuns: number, positionSum: number, rrFixed: number,
  sentimentFixed: number, sentimentN: number];

export interface ValueGrouping {
  period: 'day' | 'week' | 'month' | null;
  dimension: ValueDimension;
  byEngine: boolean;
}

/** Prompts not counted above which the sums are not worth taking away (each costs a seek per day and engine). */
export const MAX_UNCOUNTED_PROMPTS = 20;

const NUMBERS_OF = (param: string): string => `(SELECT k.n FROM json_each(${param}) j JOIN keys k ON k.id = j.value)`;

/**
 * The prompts the project's runs name (run_refs, migration 011: every run's, a superset of those with
 * succeeded runs) that are not among `promptIds` (a JSON list): their numbers.
 */
const UNCOUNTED = `SELECT k.n FROM run_refs r JOIN keys k ON k.id = r.ref_id
  WHERE r.kind = 'prompt' AND r.project_id = ? AND r.ref_id NOT IN (SELECT value FROM json_each(?)) ORDER BY k.n`;

/** The numbers of the prompts the project's runs name that do not count (none of their sums may be read). */
export function uncountedPrompts(store: ReadStore, projectId: string, countedPromptIds: readonly string[]): number[] {
  return store.column<number>(UNCOUNTED, projectId, JSON.stringify(countedPromptIds));
}

const PERIOD_OF: Record<NonNullable<ValueGrouping['period']>, string> = {
  day: 's.day',
  week: "date(s.day, 'weekday 0', '-6 days')",
  month: "substr(s.day, 1, 8) || '01'",
};
const VALUE_OF = ["''", "coalesce(d.country, '')", "coalesce(d.persona, '')", "coalesce(d.model, '')"];
const SUMS = 's.runs, s.brand_runs, s.position_sum, s.rr_fixed, s.sentiment_fixed, s.sentiment_n';
const MINUS = '-s.runs, -s.brand_runs, -s.position_sum, -s.rr_fixed, -s.sentiment_fixed, -s.sentiment_n';
/** Binds: project, from, to, dimension, the engines' JSON list. */
const valueRows = (table: string, period: string): string => `SELECT s.${period}, s.engine, s.value, ${SUMS} FROM ${table} s
  WHERE s.project = ${KEY_OF} AND s.${period} BETWEEN ? AND ? AND s.dimension = ? AND s.engine IN ${NUMBERS_OF('?')}`;
/** ? for each of n binds. */
const binds = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * The slice_days rows of the uncounted prompts, negated: a seek per day and engine with runs (the
 * range's dimension-0 rows drive it), not a scan of the range's rows. Binds: the prompts' numbers,
 * project, from, to, the engines' JSON list.
 */
const uncountedDays = (dimension: ValueDimension, prompts: number): string => `SELECT s.day, s.engine, ${VALUE_OF[dimension]}, ${MINUS}
  FROM slice_values t CROSS JOIN slice_days s ON s.project = t.project AND s.day = t.day AND s.engine = t.engine
    AND s.prompt IN (${binds(prompts)}) LEFT JOIN dims d ON d.n = s.dims
  WHERE t.project = ${KEY_OF} AND t.dimension = 0 AND t.day BETWEEN ? AND ? AND t.engine IN ${NUMBERS_OF('?')}`;

/** The same of whole months from slice_months (migration 023: keyed by the country), for dimension 0 or 1: a seek per month and engine. */
const uncountedMonths = (dimension: 0 | 1, prompts: number): string => `SELECT s.month, s.engine, ${dimension === 1 ? 's.country' : "''"}, ${MINUS}
  FROM slice_value_months t CROSS JOIN slice_months s ON s.project = t.project AND s.month = t.month AND s.engine = t.engine
    AND s.prompt IN (${binds(prompts)})
  WHERE t.project = ${KEY_OF} AND t.dimension = 0 AND t.month BETWEEN ? AND ? AND t.engine IN ${NUMBERS_OF('?')}`;

/** The rows summed, and their binds. */
interface Source { sql: string; params: unknown[] }

function sql(g: ValueGrouping, sources: readonly Source[]): string {
  return `SELECT t.period, coalesce(e.id, ''), t.value, t.runs, t.brand_runs, t.position_sum, t.rr_fixed, t.sentiment_fixed, t.sentiment_n FROM (
    SELECT ${g.period === null ? "''" : PERIOD_OF[g.period]} AS period, ${g.byEngine ? 's.engine' : '0'} AS engine, s.value AS value,
      sum(s.runs) AS runs, sum(s.brand_runs) AS brand_runs, sum(s.position_sum) AS position_sum, sum(s.rr_fixed) AS rr_fixed,
      sum(s.sentiment_fixed) AS sentiment_fixed, sum(s.sentiment_n) AS sentiment_n
    FROM (${sources.map((q) => q.sql).join(' UNION ALL ')}) s
    GROUP BY 1, 2, 3 HAVING sum(s.runs) != 0) t LEFT JOIN keys e ON e.n = t.engine`;
}

/**
 * The brand's sums of start..end per period, engine and value of one dimension, over the runs of the
 * engines `engineIds` whose prompt is not one of `uncounted` (numbers: uncountedPrompts), in no order.
 * Whole months are read by month when no key is finer than the month. A group with no run left is no row.
 */
export function sliceValueSums(store: ReadStore, projectId: string, start: string, end: string, g: ValueGrouping, engineIds: readonly string[],
  uncounted: readonly number[]): SliceValueRow[] {
  const engines = JSON.stringify(engineIds);
  const n = uncounted.length;
  const sources: Source[] = [];
  const days = (from: string, to: string): void => {
    sources.push({ sql: valueRows('slice_values', 'day'), params: [projectId, from, to, g.dimension, engines] });
    if (n > 0) sources.push({ sql: uncountedDays(g.dimension, n), params: [...uncounted, projectId, from, to, engines] });
  };
  if (g.period === null || g.period === 'month') {
    const [before, months, after] = monthSplit(start, end);
    days(...before!);
    sources.push({ sql: valueRows('slice_value_months', 'month'), params: [projectId, ...months!, g.dimension, engines] });
    if (n > 0) {
      sources.push(g.dimension <= 1
        ? { sql: uncountedMonths(g.dimension as 0 | 1, n), params: [...uncounted, projectId, ...months!, engines] }
        : { sql: uncountedDays(g.dimension, n), params: [...uncounted, projectId, months![0], periodEnd(months![1], 'month'), engines] });
    }
    days(...after!);
  } else {
    days(start, end);
  }
  return store.rows<SliceValueRow>(sql(g, sources), ...sources.flatMap((q) => q.params));
}
