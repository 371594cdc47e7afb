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

/** A read's columns, row i being the i-th value of each: `where` a dims number (days) or a country (months). */
export type SignalColumns = [pair: number[], where: number[] | string[], third: number[], fourth: number[]];

/** One read's columns and what its sums add to each period asked for: 1, -1 (taken away) or 0 (nothing). */
export interface SignalRead {
  signs: number[];
  columns: SignalColumns;
}

/**
 * A read of a range's rows, every engine, prompt and competitor by its number (keys.n): the counting
 * rule is the caller's. By kind, its columns:
 * - days: pair (pairSpan), dims number (0: none), runs, runs naming the brand;
 * - dayHits: pair, dims number, competitor, runs naming it;
 * - months: pair, country (as stored: two letters, '' none), runs, runs naming the brand;
 * - monthHits: pair, country, competitor, runs naming it.
 */
export type SignalKind = 'days' | 'dayHits' | 'months' | 'monthHits';

/**
 * A month row's country as stored (the events' contract: ^[A-Z]{2}$, or '' none), its read joined
 * by commas and split: ~13 % less CPU for a month's competitor rows than a number made of its code
 * points in SQL (unicode() twice a row), the caller's hash of a two-letter string as cheap.
 */
const COUNTRY = 's.country';

/** Each of four columns of the rows as a JSON list; COUNTRY's as the countries joined by commas (NULL: no row). */
const columns = (values: readonly string[], from: string, when: string): string =>
  `SELECT ${values.map((v) => (v === COUNTRY ? `group_concat(${v})` : `coalesce('[' || group_concat(${v}) || ']', '[]')`)).join(', ')}
  FROM ${from} s WHERE s.project = ${KEY_OF} AND ${when} BETWEEN ? AND ?`;

const PAIR = 's.engine * ? + s.prompt';
const DAYS = columns([PAIR, 's.dims', 's.runs', 's.brand_runs'], 'slice_days', 's.day');
const DAY_HITS = columns([PAIR, 's.dims', 's.competitor', 's.runs'], 'slice_hits', 's.day');
const MONTHS = columns([PAIR, COUNTRY, 's.runs', 's.brand_runs'], 'slice_months', 's.month');
const MONTH_HITS = columns([PAIR, COUNTRY, 's.competitor', 's.runs'], 'slice_month_hits', 's.month');

/** Whether the project has runs on any day of from..to. */
const ANY_DAY = `SELECT 1 FROM slice_days s WHERE s.project = ${KEY_OF} AND s.day BETWEEN ? AND ? LIMIT 1`;

function read(store: ReadStore, sql: string, span: number, projectId: string, from: string, to: string, signs: number[]): SignalRead {
  const [pair, where, third, fourth] = store.rows<[string, string | null, string, string]>(sql, span, projectId, from, to)[0]!;
  const columns: SignalColumns = [JSON.parse(pair) as number[], [], JSON.parse(third) as number[], JSON.parse(fourth) as number[]];
  if (sql === MONTHS || sql === MONTH_HITS) {
    columns[1] = where === null ? [] : where.split(',');
    // A comma in a country would shift every row after it: a broken store, not a count.
    if (columns[1].length !== columns[0].length) throw new Error('a month row names a country with a comma');
  } else {
    columns[1] = JSON.parse(where!) as number[];
  }
  return { signs, columns };
}

/**
 * What a month's rows cost against a day's, in days: a pair's month is a row per country its runs
 * name (~5) and a day a row per run (~1 a pair at one run group a day). On the medium tier (300
 * prompts x 6 engines) a month is ~46k rows with the competitors' and a day ~5.5k: ~8 days.
 */
export const MONTH_COST_DAYS = 8;

/** Days first..last, both included. */
export interface DayRange {
  start: string;
  end: string;
}

/** A read serving several periods at once: a month's row ('month': `from` its first day) or days from..to, and what it adds to each period. */
export interface SignalPiece {
  kind: 'month' | 'days';
  from: string;
  to: string;
  signs: number[];
}

const dayCount = (from: string, to: string): number => (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;

/** Days of a month between the periods' edges: in each period wholly or not at all. */
interface Atom {
  from: string;
  to: string;
  days: number;
  sides: boolean[];
}

/** A month's days cut at every period's first day and the day after its last. */
function atomsOf(month: string, periods: readonly DayRange[]): Atom[] {
  const last = periodEnd(month, 'month');
  const cuts = new Set([month]);
  for (const p of periods) {
    for (const cut of [p.start, addDays(p.end, 1)]) if (cut > month && cut <= last) cuts.add(cut);
  }
  const starts = [...cuts].sort();
  return starts.map((from, i) => {
    const to = i + 1 < starts.length ? addDays(starts[i + 1]!, -1) : last;
    return { from, to, days: dayCount(from, to), sides: periods.map((p) => p.start <= from && from <= p.end) };
  });
}

/**
 * The periods' days as pieces, month by month, each piece read once for every period (two compared
 * periods often share a month: 30 days against the 30 before split one between them). Per month, each
 * period's sum is its days, or the month's row less the month's other days; days with no runs
 * (`hasRuns`: the current month after the last day with runs, before the first) add nothing and are
 * never read. Of the ways that give every period its sum, the one reading the fewest rows (a month
 * row costing MONTH_COST_DAYS days; days, on a tie). The sums are integers, so every way gives the same.
 */
export function signalPieces(periods: readonly DayRange[], hasRuns: (from: string, to: string) => boolean): SignalPiece[] {
  const out: SignalPiece[] = [];
  const first = periods.reduce((a, p) => (p.start < a ? p.start : a), periods[0]!.start);
  const last = periods.reduce((a, p) => (p.end > a ? p.end : a), periods[0]!.end);
  for (let month = `${first.slice(0, 8)}01`; month <= last; month = nextMonth(month)) {
    const all = atomsOf(month, periods);
    if (!all.some((a) => a.sides.includes(true))) continue;
    const atoms = all.filter((a) => hasRuns(a.from, a.to));
    // Whether a period can take its sum from the atoms read (`mask`) alone, or from the month row less them.
    const direct = (mask: number, side: number): boolean => atoms.every((a, i) => !a.sides[side] || (mask >> i) & 1);
    const less = (mask: number, side: number): boolean => atoms.every((a, i) => a.sides[side] || (mask >> i) & 1);
    let best = { cost: Infinity, withMonth: false, mask: 0 };
    for (const withMonth of [false, true]) {
      for (let mask = 0; mask < 1 << atoms.length; mask++) {
        if (!periods.every((_, side) => direct(mask, side) || (withMonth && less(mask, side)))) continue;
        const cost = (withMonth ? MONTH_COST_DAYS : 0) + atoms.reduce((c, a, i) => c + ((mask >> i) & 1 ? a.days : 0), 0);
        if (cost < best.cost) best = { cost, withMonth, mask };
      }
    }
    const signs = atoms.map(() => periods.map(() => 0));
    const monthSigns = periods.map(() => 0);
    periods.forEach((_, side) => {
      const own = direct(best.mask, side);
      if (!own) monthSigns[side] = 1;
      atoms.forEach((a, i) => {
        if ((best.mask >> i) & 1) signs[i]![side] = own ? (a.sides[side] ? 1 : 0) : (a.sides[side] ? 0 : -1);
      });
    });
    if (monthSigns.some((x) => x !== 0)) out.push({ kind: 'month', from: month, to: month, signs: monthSigns });
    // Atoms read, next to each other and adding alike, as one read.
    let open: SignalPiece | undefined;
    atoms.forEach((a, i) => {
      if (!signs[i]!.some((x) => x !== 0)) return;
      if (open && addDays(open.to, 1) === a.from && open.signs.every((x, side) => x === signs[i]![side])) {
        open.to = a.to;
      } else {
        out.push((open = { kind: 'days', from: a.from, to: a.to, signs: signs[i]! }));
      }
    });
  }
  return out;
}

/**
 * The project's rows of the periods (each first..last, inclusive), by signalPieces, each pair by
 * `span` (pairSpan), one read at a time: each is read when the caller asks for the next, so a build
 * holds one piece's columns (a month's or a ragged edge's), never a range's (a year of a large
 * project's days would be over 100 MB of a build thread's heap).
 */
export function* signalReads(store: ReadStore, projectId: string, periods: readonly DayRange[], span: number): Generator<[SignalKind, SignalRead]> {
  const hasRuns = (from: string, to: string): boolean => store.value<number>(ANY_DAY, projectId, from, to) !== undefined;
  for (const p of signalPieces(periods, hasRuns)) {
    if (p.kind === 'month') {
      yield ['months', read(store, MONTHS, span, projectId, p.from, p.to, p.signs)];
      yield ['monthHits', read(store, MONTH_HITS, span, projectId, p.from, p.to, p.signs)];
    } else {
      yield ['days', read(store, DAYS, span, projectId, p.from, p.to, p.signs)];
      yield ['dayHits', read(store, DAY_HITS, span, projectId, p.from, p.to, p.signs)];
    }
  }
}

const KEY_NUMBERS = 'SELECT k.id, k.n FROM keys k WHERE k.id IN (SELECT value FROM json_each(?))';

/** The numbers (keys.n) of these ids, by id: an id no stored row names has none. */
export function keyNumbers(store: ReadStore, ids: readonly string[]): Map<string, number> {
  return new Map(store.rows<[string, number]>(KEY_NUMBERS, JSON.stringify(ids)));
}
