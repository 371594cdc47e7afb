// Period comparison (docs/metrics.md "Comparing two periods"): the period a request
// compares with, and how its rates changed. A read model measures the comparison period exactly as it
// measures the current one (the same slice but for its days, so the same filters) and adds
// `<rate>_change` beside each `<rate>_ci` from the counts behind both rates.
import type { ComparisonPeriod } from './bodies.gen';
import type { ReadArgs } from './args';
import { addDays } from '../lib/time';
import { rateChange, type RateChange } from './differences';
import type { ReadStore } from './store';
import { currentSlice, type Slice, type Window } from './windows';

/** The counts behind a rate: x of n (the same counts as its Wilson interval). */
export type Counts = readonly [x: number, n: number];

/** What a counterpart missing from the comparison period measured. */
export const NOTHING: Counts = [0, 0];

/** The rates that carry an interval, hence a change: `<rate>_ci` and `<rate>_change`. */
export type Rate = 'mention_rate' | 'share_of_voice';

/** The counts behind the rates of one row (a breakdown row has no share of voice). */
export type RateCounts = Readonly<Partial<Record<Rate, Counts>>>;

export interface Comparison {
  /** The days compared with, as the body names them; null when previous_period has no range to start from. */
  period: ComparisonPeriod | null;
  /** Those days as a slice with the request's filters; null with the period. */
  slice: Slice | null;
}

const DAY_MS = 86_400_000;

/** previous_period: as many days as `w`, ending the day before it starts. */
export function previousPeriod(w: Window): Window {
  const days = (Date.parse(w.end) - Date.parse(w.start)) / DAY_MS + 1;
  return { start: addDays(w.start, -days), end: addDays(w.start, -1) };
}

/**
 * The comparison a request asks for: compare_start_date..compare_end_date, or previous_period of the
 * current range as the request resolves it (`current`: an explicit range, one end with the default
 * length, or the current window). Null when it asks for none. The HTTP layer has checked the
 * parameters (serve/request/date-rules.ts checkCompare): never both forms, both dates or neither.
 */
export function comparisonOf(store: ReadStore, args: ReadArgs, current: Window | null): Comparison | null {
  let w: Window | null;
  if (args.compareStartDate !== null && args.compareEndDate !== null) w = { start: args.compareStartDate, end: args.compareEndDate };
  else if (args.compare === 'previous_period') w = current && previousPeriod(current);
  else return null;
  if (w === null) return { period: null, slice: null };
  // The request's own slice but for its days: every filter the current period has, the comparison has.
  return { period: { start_date: w.start, end_date: w.end }, slice: currentSlice(store, { ...args, startDate: w.start, endDate: w.end }) };
}

export type RateChanges = Readonly<Partial<Record<Rate, RateChange>>>;

/**
 * The change of each rate of a row from `before` to `now`; a row without a counterpart in the
 * comparison period (`before` undefined) measured nothing there: previous and deltas null.
 */
export function changes(now: RateCounts, before: RateCounts | undefined): RateChanges {
  const out: Partial<Record<Rate, RateChange>> = {};
  for (const [rate, [x1, n1]] of Object.entries(now) as Array<[Rate, Counts]>) {
    const [x2, n2] = before?.[rate] ?? NOTHING;
    out[rate] = rateChange(x1, n1, x2, n2);
  }
  return out;
}

/**
 * `row` with `<rate>_change` right after each `<rate>_ci` it has (a rate without an interval gets no
 * change), every other key where it was: the body without a comparison is this body minus the added
 * keys, byte for byte.
 */
export function withChanges<T extends object>(row: T, change: RateChanges): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    out[k] = v;
    if (k.endsWith('_ci')) {
      const rate = k.slice(0, -3);
      const c = change[rate as Rate];
      if (c !== undefined) out[`${rate}_change`] = c;
    }
  }
  return out as T; // T's _change fields are optional properties of the generated body types
}
