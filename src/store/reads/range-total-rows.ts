// A range's sums per pair from the running totals (migration 025): the pair's totals on the last day
// <= end minus those on the last day < start, two reads per pair whatever the range's length.
import { KEY_OF } from '../keys';
import type { ReadStore } from '../read-store';

/** The project's next engine number after one (-1: the first), a seek. */
const NEXT_ENGINE = `SELECT t.engine FROM range_totals t WHERE t.project = ${KEY_OF} AND t.engine > ? ORDER BY t.engine LIMIT 1`;

/** The ids of the engines with any succeeded run of the project (whatever counts), ever: one seek each. */
export function totalsEngines(store: ReadStore, projectId: string): string[] {
  const out: string[] = [];
  for (let n = store.value<number>(NEXT_ENGINE, projectId, -1); n !== undefined; n = store.value<number>(NEXT_ENGINE, projectId, n)) {
    out.push(store.value<string>('SELECT id FROM keys WHERE n = ?', n)!);
  }
  return out;
}

/**
 * The totals of `table` for the key `t.<a> = a.n AND t.<b> = b.n` on the last day <= ? (hi) and the
 * last day < ? (lo, none before the key's first day): each a seek for the day and one for its row.
 * CROSS JOINs keep that order: the planner would otherwise scan the project's rows for `hi`. Keyed by
 * the numbers (keys, migration 013) the caller named once, as one JSON text: no id string made per
 * row, and for thousands of rows about half the cost of rows as arrays (ReadStore.json).
 */
function totalNumbersOf(table: string, a: string, b: string, sums: readonly string[]): string {
  const key = (t: string): string => `${t}.project = pr.n AND ${t}.${a} = a.n AND ${t}.${b} = b.n`;
  const last = (op: string): string => `(SELECT max(x.day) FROM ${table} x WHERE ${key('x')} AND x.day ${op} ?)`;
  return `WITH pr(n) AS (SELECT ${KEY_OF}), a(n) AS MATERIALIZED (SELECT value FROM json_each(?)), b(n) AS MATERIALIZED (SELECT value FROM json_each(?))
  SELECT json_group_array(json_array(a.n, b.n, ${sums.map((c) => `hi.${c} - coalesce(lo.${c}, 0)`).join(', ')}))
  FROM pr CROSS JOIN a CROSS JOIN b CROSS JOIN ${table} hi ON ${key('hi')} AND hi.day = ${last('<=')}
    LEFT JOIN ${table} lo ON ${key('lo')} AND lo.day = ${last('<')}
  WHERE hi.runs > coalesce(lo.runs, 0)`;
}

const SUMS = ['position_sum', 'rr_fixed', 'sentiment_fixed', 'sentiment_n'];
const PAIR_TOTAL_NUMBERS = totalNumbersOf('range_totals', 'engine', 'prompt', ['runs', 'brand_runs', ...SUMS]);
const HIT_TOTAL_NUMBERS = totalNumbersOf('range_hit_totals', 'prompt', 'competitor', ['runs', ...SUMS]);

export type PairTotalNumbers = [engine: number, prompt: number, runs: number, brandRuns: number, positionSum: number, rrFixed: number, sentimentFixed: number, sentimentN: number];
export type HitTotalNumbers = [prompt: number, competitor: number, mentions: number, positionSum: number, rrFixed: number, sentimentFixed: number, sentimentN: number];

/** Per pair of the engines x prompts of these numbers with succeeded runs on start..end: the runs and the brand's sums, in no order. */
export function pairTotalNumbers(store: ReadStore, projectId: string, start: string, end: string, engines: readonly number[], prompts: readonly number[]): PairTotalNumbers[] {
  return store.json<PairTotalNumbers[]>(PAIR_TOTAL_NUMBERS, projectId, JSON.stringify(engines), JSON.stringify(prompts), end, start);
}

/**
 * Per prompt x competitor of these numbers named by succeeded runs on start..end, over every engine:
 * the mentions and their sums, in no order.
 */
export function hitTotalNumbers(store: ReadStore, projectId: string, start: string, end: string, prompts: readonly number[], competitors: readonly number[]): HitTotalNumbers[] {
  return store.json<HitTotalNumbers[]>(HIT_TOTAL_NUMBERS, projectId, JSON.stringify(prompts), JSON.stringify(competitors), end, start);
}
