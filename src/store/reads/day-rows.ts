// A short range's sums read as the day rows themselves (slice_days, slice_hits: migration 022), keyed
// by numbers (keys, migration 013): no grouping in SQL and no id strings made per row. A day holds
// about a row per pair (and a few competitor rows a pair), so a range of a day or two is fewer rows
// than the running totals' four seeks a pair (range-total-rows.ts); the caller names the numbers once.
import { KEY_OF } from '../keys';
import type { ReadStore } from '../read-store';

/** [engine n, prompt n, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n]: a pair's row of one day and dims number. */
export type DayPairRow = [engine: number, prompt: number, runs: number, brandRuns: number, positionSum: number, rrFixed: number, sentimentFixed: number, sentimentN: number];
/** [engine n, prompt n, competitor n, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n]: a competitor's row of one day, pair and dims number. */
export type DayHitRow = [engine: number, prompt: number, competitor: number, runs: number, positionSum: number, rrFixed: number, sentimentFixed: number, sentimentN: number];

// One JSON text each: for thousands of small rows, about half the cost of rows as arrays (ReadStore.json).
const DAY_PAIR_ROWS = `SELECT json_group_array(json_array(s.engine, s.prompt, s.runs, s.brand_runs, s.position_sum, s.rr_fixed, s.sentiment_fixed, s.sentiment_n))
  FROM slice_days s WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ?`;
const DAY_HIT_ROWS = `SELECT json_group_array(json_array(s.engine, s.prompt, s.competitor, s.runs, s.position_sum, s.rr_fixed, s.sentiment_fixed, s.sentiment_n))
  FROM slice_hits s WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ?`;

/** Every slice_days row of the project on start..end (inclusive), unsummed and in no order: the counting rule is the caller's. */
export function dayPairRows(store: ReadStore, projectId: string, start: string, end: string): DayPairRow[] {
  return store.json<DayPairRow[]>(DAY_PAIR_ROWS, projectId, start, end);
}

/** Every slice_hits row of the project on start..end (inclusive), unsummed and in no order. */
export function dayHitRows(store: ReadStore, projectId: string, start: string, end: string): DayHitRow[] {
  return store.json<DayHitRow[]>(DAY_HIT_ROWS, projectId, start, end);
}
