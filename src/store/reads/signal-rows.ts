// The rows signals sums its slices from (src/readmodels/endpoints/signals.ts), as they are stored:
// slice_days and slice_hits (migration 022) for a range's ragged days, slice_months and
// slice_month_hits (migration 023) for its whole months (monthSplit). Not grouped in SQL: a GROUP BY
// sorts every row it reads (~0.3 us a row), and rows handed to JS as arrays cost ~1.5 us each; a
// read's columns as one comma-separated text each cost ~0.2 us a row to build and parse, and the
// caller adds each row to its sums directly (integers: the sums do not depend on the order).
import { addDays } from '../../lib/time';
import { KEY_OF } from '../keys';
import { nextMonth, periodEnd } from '../periods';
import type { ReadStore } from '../read-store';

/**
 * An engine's and a prompt's numbers (keys.n) as one number, a row's first column: engine * span +
 * prompt, the span above every keys.n. A few thousand keys make a small integer (a small-integer key
 * hashes several times faster than a larger number's); up to ~90M keys an exact one (below 2^53).
 */
const SPAN = 'SELECT coalesce(max(n), 0) + 1 FROM keys';

export function pairSpan(store: ReadStore): number {
  return store.value<number>(SPAN)!;
}

/** A read's columns, row i being the i-th value of each. */
export type SignalColumns = [pair: number[], where: number[], third: number[], fourth: number[]];

/** One read's columns and whether its sums add (1) or are taken away (-1). */
export interface SignalRead {
  sign: 1 | -1;
  columns: SignalColumns;
}

/**
 * A read of a range's rows, every engine, prompt and competitor by its number (keys.n): the counting
 * rule is the caller's. By kind, its columns:
 * - days: pair (pairSpan), dims number (0: none), runs, runs naming the brand;
 * - dayHits: pair, dims number, competitor, runs naming it;
 * - months: pair, country (countryCode), runs, runs naming the brand;
 * - monthHits: pair, country, competitor, runs naming it.
 */
export type SignalKind = 'days' | 'dayHits' | 'months' | 'monthHits';

/** Each of four columns of the rows as a JSON list. */
const columns = (values: readonly string[], from: string, when: string): string =>
  `SELECT ${values.map((v) => `coalesce('[' || group_concat(${v}) || ']', '[]')`).join(', ')}
  FROM ${from} s WHERE s.project = ${KEY_OF} AND ${when} BETWEEN ? AND ?`;

const PAIR = 's.engine * ? + s.prompt';
const DAYS = columns([PAIR, 's.dims', 's.runs', 's.brand_runs'], 'slice_days', 's.day');
const DAY_HITS = columns([PAIR, 's.dims', 's.competitor', 's.runs'], 'slice_hits', 's.day');
/** A country as a number (countryCode): its two letters' code points (the events' contract: ^[A-Z]{2}$, or '' none). */
const COUNTRY = "coalesce(unicode(s.country), 0) * 65536 + coalesce(unicode(substr(s.country, 2, 1)), 0)";
const MONTHS = columns([PAIR, COUNTRY, 's.runs', 's.brand_runs'], 'slice_months', 's.month');
const MONTH_HITS = columns([PAIR, COUNTRY, 's.competitor', 's.runs'], 'slice_month_hits', 's.month');

/**
 * The number a month row names its country by, as COUNTRY makes it in SQL: a number parses and
 * hashes several times faster than a string. Two letters and '' each have their own; a longer name
 * would not (the caller checks its countries' numbers are distinct).
 */
export function countryCode(country: string): number {
  return (country.codePointAt(0) ?? 0) * 65536 + (country.length > 1 ? country.codePointAt(1)! : 0);
}

/** Whether the project has runs on any day of from..to. */
const ANY_DAY = `SELECT 1 FROM slice_days s WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ? LIMIT 1`;

function read(store: ReadStore, sql: string, span: number, projectId: string, from: string, to: string, sign: 1 | -1): SignalRead {
  const texts = store.rows<[string, string, string, string]>(sql, span, projectId, from, to)[0]!;
  return { sign, columns: texts.map((t) => JSON.parse(t) as unknown) as SignalColumns };
}

/**
 * What a month's rows cost against a day's, in days: a pair's month is a row per country its runs
 * name (~5) and a day a row per run (~1 a pair at one run group a day). On the medium tier (300
 * prompts x 6 engines) a month is ~46k rows with the competitors' and a day ~5.5k: ~8 days.
 */
export const MONTH_COST_DAYS = 8;

/** A piece of a range: a month's row ('month': `from` its first day) or days from..to, added or taken away. */
export interface SignalPiece {
  kind: 'month' | 'days';
  from: string;
  to: string;
  sign: 1 | -1;
}

const dayCount = (from: string, to: string): number => (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;

/**
 * start..end as pieces, month by month: a month the range covers whole is its month row; a month it
 * covers in part is its days, or its month row less the days it leaves out when those are fewer by
 * more than a month row's cost (MONTH_COST_DAYS). The sums are integers, so both give the same.
 * `openEnd`: no day of end's month after `end` has runs, so leaving those days out costs nothing.
 */
export function signalPieces(start: string, end: string, openEnd: boolean): SignalPiece[] {
  const out: SignalPiece[] = [];
  for (let month = `${start.slice(0, 8)}01`; month <= end; month = nextMonth(month)) {
    const last = periodEnd(month, 'month');
    const [from, to] = [start > month ? start : month, end < last ? end : last];
    const before = from > month ? dayCount(month, addDays(from, -1)) : 0;
    const after = to < last && !openEnd ? dayCount(addDays(to, 1), last) : 0;
    if (from === month && (to === last || openEnd)) {
      out.push({ kind: 'month', from: month, to: month, sign: 1 });
    } else if (MONTH_COST_DAYS + before + after < dayCount(from, to)) {
      out.push({ kind: 'month', from: month, to: month, sign: 1 });
      if (before > 0) out.push({ kind: 'days', from: month, to: addDays(from, -1), sign: -1 });
      if (after > 0) out.push({ kind: 'days', from: addDays(to, 1), to: last, sign: -1 });
    } else {
      out.push({ kind: 'days', from, to, sign: 1 });
    }
  }
  return out;
}

/**
 * The project's rows of start..end (inclusive), by signalPieces, each pair by `span` (pairSpan), one
 * read at a time: each is read when the caller asks for the next, so a build holds one piece's
 * columns (a month's or a ragged edge's), never a range's (a year of a large project's days would be
 * over 100 MB of a build thread's heap). When no day of end's month after `end` has runs (the
 * current month, most often), that month's row holds the sums of its days up to `end`: the range's
 * last month is whole from its first day on, and in part at a lower cost.
 */
export function* signalReads(store: ReadStore, projectId: string, start: string, end: string, span: number): Generator<[SignalKind, SignalRead]> {
  const monthEnd = periodEnd(`${end.slice(0, 8)}01`, 'month');
  const openEnd = monthEnd === end || store.value<number>(ANY_DAY, projectId, addDays(end, 1), monthEnd) === undefined;
  for (const p of signalPieces(start, end, openEnd)) {
    if (p.kind === 'month') {
      yield ['months', read(store, MONTHS, span, projectId, p.from, p.to, p.sign)];
      yield ['monthHits', read(store, MONTH_HITS, span, projectId, p.from, p.to, p.sign)];
    } else {
      yield ['days', read(store, DAYS, span, projectId, p.from, p.to, p.sign)];
      yield ['dayHits', read(store, DAY_HITS, span, projectId, p.from, p.to, p.sign)];
    }
  }
}

const KEY_NUMBERS = 'SELECT k.id, k.n FROM keys k WHERE k.id IN (SELECT value FROM json_each(?))';

/** The numbers (keys.n) of these ids, by id: an id no stored row names has none. */
export function keyNumbers(store: ReadStore, ids: readonly string[]): Map<string, number> {
  return new Map(store.rows<[string, number]>(KEY_NUMBERS, JSON.stringify(ids)));
}
