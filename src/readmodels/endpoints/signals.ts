// Signals: the changes of mention rate between two periods that are statistically real,
// across the project's slices, with the false discovery rate controlled (docs/metrics.md#signals).
import type { Signal, Signals } from '../bodies.gen';
import { previousPeriod } from '../comparison';
import { countingOf, type Counting } from '../counted-runs';
import { benjaminiHochberg, FALSE_DISCOVERY_RATE, newcombe, twoProportionP } from '../differences';
import type { Endpoint } from '../endpoint';
import {
  activeSegments, compareStrings, dimsByNumber, engineNames, keyNumbers, pairSpan, projectName, segmentPrompts, signalReads, type SignalRead, trackedCompetitors,
  type ReadStore,
} from '../store';
import { requestedWindow, type Window } from '../windows';

/**
 * The counted runs a slice needs in each period to be tested. Fewer, and the z-test's normal
 * approximation is poor while no change short of all-or-nothing could reach q <= 5 % among hundreds
 * of slices: testing them would only raise m, the count every q-value is adjusted by. The body
 * counts the slices skipped.
 */
export const MIN_RUNS = 10;

export const endpoint: Endpoint = {
  name: 'signals',
  path: '/projects/:project_id/signals',
  summary: 'The statistically real changes of mention rate between the range and the period before it, across the brand and competitors x engines x segments x countries',
  scope: 'project',
  params: ['engine_ids', 'start_date', 'end_date', 'compare', 'compare_start_date', 'compare_end_date', 'limit-default-100'],
  comparesByDefault: true,
  schema: 'signals',
  // 'project': the brand is listed under the project's name (as competitor-rankings does).
  dependsOn: ['runs', 'setup', 'engines', 'project'],
  build(store, args): Signals {
    const current = requestedWindow(store, args, args.windowDays);
    const previous = current && comparedWindow(current, args.compareStartDate, args.compareEndDate);
    const found = current && previous ? signalsOf(store, args.projectId, args.engineIds, current, previous) : { tested: 0, skipped: 0, signals: [] };
    return {
      project_id: args.projectId,
      start_date: current?.start ?? null,
      end_date: current?.end ?? null,
      compare_start_date: previous?.start ?? null,
      compare_end_date: previous?.end ?? null,
      min_runs: MIN_RUNS,
      slices_tested: found.tested,
      slices_skipped: found.skipped,
      false_discovery_rate: FALSE_DISCOVERY_RATE,
      // The cap lists the largest changes; slices_tested still counts every slice the q-values adjust for.
      signals: found.signals.slice(0, args.limit),
    };
  },
};

/**
 * The period compared with: compare_start_date..compare_end_date when given (the HTTP layer checked
 * them), else the previous period (comparison.ts previousPeriod, as the compared reports take it).
 */
export function comparedWindow(current: Window, start: string | null, end: string | null): Window {
  return start !== null && end !== null ? { start, end } : previousPeriod(current);
}

/**
 * A slice's counted runs and the runs of it naming each entity (by its place: 0 the brand, then the
 * tracked competitors), in each period: [0] the range, [1] the period compared with.
 */
interface Cell {
  engine: string | null;
  segment: string | null;
  country: string | null;
  runs: [number, number];
  mentioned: [number[], number[]];
}

/**
 * What the rows' numbers (keys.n) stand for: the counted engines and prompts, the tracked competitors'
 * places (of `tracked` competitors: one no run names has no number, and its counts stay 0), the dims
 * numbers' countries.
 */
interface Numbers {
  engines: ReadonlyMap<number, string>;
  prompts: ReadonlyMap<number, string>;
  tracked: number;
  places: ReadonlyMap<number, number>;
  countries: ReadonlyMap<number, string>;
}

/**
 * Both periods' cells, from the stored sums' rows (signalReads), in three steps of integer sums (no
 * order of rows changes them). Each row adds to its engine, prompt and country's sums (runs, then
 * the runs naming each entity by place); each of those adds to its engine's, country's ('' none) and
 * each of its prompt's segments' or all's; and those to the slices of their engine or all and their
 * country or all (a run naming no country is in no country's slice). A year's rows cost an index and
 * an addition each. A row of an engine or prompt that does not count (the counting rule, the engine
 * filter) is skipped; a slice is made only where runs are, in either period.
 */
function cellsOf(store: ReadStore, projectId: string, periods: readonly [Window, Window], numbers: Numbers,
  segmentsOf: ReadonlyMap<string, readonly string[]>, segmentIds: readonly string[]): Cell[] {
  const width = numbers.tracked + 2; // runs, the brand, each tracked competitor
  const countryAt = new Map<string, number>([['', 0]]);
  const countryIndex = (country: string): number => {
    let i = countryAt.get(country);
    if (i === undefined) countryAt.set(country, (i = countryAt.size));
    return i;
  };
  const dimsCountry = new Map<number, number>();
  for (const [n, country] of numbers.countries) dimsCountry.set(n, countryIndex(country));
  const engineIds = [...numbers.engines.values()];
  const engineAt = new Map(engineIds.map((id, i) => [id, i]));
  const segmentAt = new Map(segmentIds.map((id, i) => [id, i + 1])); // 0: all segments
  const span = pairSpan(store);

  // A sums' key per (pair, country): its pair's slot (-1: the pair does not count), then per country the key.
  const slotOf = new Map<number, number>();
  const slotEngine: number[] = [];
  const slotSegments: number[][] = [];
  const keysOfSlot: number[][] = [];
  const keySlot: number[] = [];
  const keyCountry: number[] = [];
  const sums: [number[], number[]] = [[], []];
  const keyOf = (pair: number, country: number): number => {
    let slot = slotOf.get(pair);
    if (slot === undefined) {
      const engine = Math.floor(pair / span);
      const engineId = numbers.engines.get(engine);
      const promptId = numbers.prompts.get(pair - engine * span);
      slot = engineId === undefined || promptId === undefined ? -1 : slotEngine.push(engineAt.get(engineId)!) - 1;
      if (slot >= 0) {
        slotSegments.push([0, ...(segmentsOf.get(promptId!) ?? []).map((id) => segmentAt.get(id)!)]);
        keysOfSlot.push([]);
      }
      slotOf.set(pair, slot);
    }
    if (slot < 0) return -1;
    const keys = keysOfSlot[slot]!;
    let key = keys[country];
    if (key === undefined) {
      keys[country] = key = keySlot.push(slot) - 1;
      keyCountry.push(country);
      for (const acc of sums) for (let e = 0; e < width; e++) acc.push(0);
    }
    return key;
  };
  const add = ({ signs, columns: [pair, where, third, fourth] }: SignalRead, countryOf: (where: number | string) => number, hits: boolean): void => {
    signs.forEach((sign, side) => {
      if (sign === 0) return;
      const acc = sums[side]!;
      for (let i = 0; i < pair.length; i++) {
        const key = keyOf(pair[i]!, countryOf(where[i]!));
        if (key < 0) continue;
        const at = key * width;
        if (hits) {
          const place = numbers.places.get(third[i]!);
          if (place !== undefined) acc[at + 1 + place]! += sign * fourth[i]!;
        } else {
          acc[at]! += sign * third[i]!;
          acc[at + 1]! += sign * fourth[i]!;
        }
      }
    });
  };
  const byDims = (dims: number | string): number => dimsCountry.get(dims as number) ?? 0;
  // A month row's country is a dims row's (migration 023): one the dims do not name is a broken store.
  const byName = (country: number | string): number => {
    const at = countryAt.get(country as string);
    if (at === undefined) throw new Error(`a month row names a country no dims row does (${country})`);
    return at;
  };
  // Both periods' rows, each piece read once for both (signalPieces: adjacent periods often share a month).
  for (const [kind, read] of signalReads(store, projectId, periods, span)) {
    add(read, kind === 'days' || kind === 'dayHits' ? byDims : byName, kind === 'dayHits' || kind === 'monthHits');
  }

  // Per engine, segment (0 all) and country (0 none): the keys' sums, and whether any key with runs adds to it.
  const [nE, nS, nC] = [engineIds.length, segmentIds.length + 1, countryAt.size];
  const base: [Float64Array, Float64Array] = [new Float64Array(nE * nS * nC * width), new Float64Array(nE * nS * nC * width)];
  const present = new Uint8Array(nE * nS * nC);
  for (let key = 0; key < keySlot.length; key++) {
    const at = key * width;
    // A key whose runs are none in both periods has no slice (as the runs themselves would give none).
    if (sums[0][at] === 0 && sums[1][at] === 0) continue;
    const slot = keySlot[key]!;
    for (const s of slotSegments[slot]!) {
      const b = (slotEngine[slot]! * nS + s) * nC + keyCountry[key]!;
      present[b] = 1;
      for (let side = 0; side < 2; side++) for (let e = 0; e < width; e++) base[side]![b * width + e]! += sums[side]![at + e]!;
    }
  }
  // The slices: engine (0 all, then each), segment, country (0 all, then each but none).
  const countryNames = [...countryAt.keys()];
  const cells = new Map<number, Cell>();
  for (let e = 0; e < nE; e++) {
    for (let s = 0; s < nS; s++) {
      for (let c = 0; c < nC; c++) {
        const b = (e * nS + s) * nC + c;
        if (present[b] === 0) continue;
        for (const ce of [0, e + 1]) {
          for (const cc of c === 0 ? [0] : [0, c]) {
            const at = (ce * nS + s) * nC + cc;
            let cell = cells.get(at);
            if (cell === undefined) {
              const zeros = (): number[] => new Array<number>(width - 1).fill(0);
              cells.set(at, (cell = {
                engine: ce === 0 ? null : engineIds[e]!, segment: s === 0 ? null : segmentIds[s - 1]!, country: cc === 0 ? null : countryNames[c]!,
                runs: [0, 0], mentioned: [zeros(), zeros()],
              }));
            }
            for (let side = 0; side < 2; side++) {
              const from = base[side]!;
              cell.runs[side] += from[b * width]!;
              const m = cell.mentioned[side]!;
              for (let x = 1; x < width; x++) m[x - 1]! += from[b * width + x]!;
            }
          }
        }
      }
    }
  }
  return [...cells.values()];
}

/** A slice's counts in both periods: x1 of n1 now, x2 of n2 before. */
export interface SliceCounts {
  x1: number;
  n1: number;
  x2: number;
  n2: number;
}

/** A tested slice: its difference, interval, p-value and q-value. */
export interface Tested<T> {
  slice: T;
  delta: number;
  low: number;
  high: number;
  p: number;
  q: number;
}

/**
 * Tests every slice with at least MIN_RUNS runs on both sides (the others are skipped): the pooled
 * two-proportion z-test, Newcombe's interval, and Benjamini-Hochberg q-values across all tested.
 */
export function testSlices<T extends SliceCounts>(slices: readonly T[]): { tested: Array<Tested<T>>; skipped: number } {
  const kept = slices.filter((s) => s.n1 >= MIN_RUNS && s.n2 >= MIN_RUNS);
  const ps = kept.map((s) => twoProportionP(s.x1, s.n1, s.x2, s.n2)!); // n >= MIN_RUNS on both sides: never null
  const qs = benjaminiHochberg(ps);
  const tested = kept.map((slice, i) => {
    const d = newcombe(slice.x1, slice.n1, slice.x2, slice.n2)!;
    return { slice, delta: d.delta, low: d.low, high: d.high, p: ps[i], q: qs[i] };
  });
  return { tested, skipped: slices.length - kept.length };
}

interface Slice extends SliceCounts {
  entity: string;
  engine: string | null;
  segment: string | null;
  country: string | null;
}

function signalsOf(store: ReadStore, projectId: string, engineIds: string[] | null, current: Window, previous: Window): { tested: number; skipped: number; signals: Signal[] } {
  const counting: Counting = countingOf(store, projectId);
  const engines = engineIds === null ? null : new Set(engineIds);
  const segments = new Map(activeSegments(store, projectId).map((s) => [s.id, s.name]));
  const segmentsOf = new Map<string, string[]>();
  for (const { segment_id: s, prompt_id: p } of segmentPrompts(store, projectId)) {
    if (segments.has(s)) segmentsOf.set(p, [...(segmentsOf.get(p) ?? []), s]);
  }
  const competitors = trackedCompetitors(store, projectId);
  const tracked = [...new Set(competitors.map((c) => c.id))];
  const numbered = keyNumbers(store, [...counting.engines, ...counting.prompts, ...tracked]);
  const numbers = (ids: Iterable<string>): Map<number, string> => {
    const out = new Map<number, string>();
    for (const id of ids) {
      const n = numbered.get(id);
      if (n !== undefined) out.set(n, id);
    }
    return out;
  };
  const cells = cellsOf(store, projectId, [current, previous], {
    engines: numbers([...counting.engines].filter((e) => engines === null || engines.has(e))),
    prompts: numbers(counting.prompts),
    tracked: tracked.length,
    // Each tracked competitor's place in a cell's counts (0 is the brand's).
    places: new Map(tracked.flatMap((id, i) => (numbered.has(id) ? [[numbered.get(id)!, i + 1] as const] : []))),
    countries: new Map([...dimsByNumber(store, projectId)].map(([n, [country]]) => [n, country ?? ''])),
  }, segmentsOf, [...segments.keys()]);

  // Every slice with counted runs in either period, for the brand and each tracked competitor.
  const slices: Slice[] = [];
  for (const c of cells) {
    ['', ...tracked].forEach((entity, i) => {
      slices.push({
        entity, engine: c.engine, segment: c.segment, country: c.country,
        x1: c.mentioned[0][i]!, n1: c.runs[0], x2: c.mentioned[1][i]!, n2: c.runs[1],
      });
    });
  }
  const { tested, skipped } = testSlices(slices);

  const brandName = projectName(store, projectId) ?? '';
  const names = new Map(competitors.map((c) => [c.id, c.name]));
  const engineName = engineNames(store);
  const signals = tested.filter((t) => t.q <= FALSE_DISCOVERY_RATE).map((t): Signal => {
    const s = t.slice;
    return {
      entity_type: s.entity === '' ? 'brand' : 'competitor',
      competitor_id: s.entity === '' ? null : s.entity,
      name: s.entity === '' ? brandName : names.get(s.entity)!,
      engine_id: s.engine,
      engine_name: s.engine === null ? null : engineName.get(s.engine)!, // counted runs: the engine is known
      segment_id: s.segment,
      segment_name: s.segment === null ? null : segments.get(s.segment)!,
      country: s.country,
      metric: 'mention_rate',
      current: { rate: s.x1 / s.n1, mentioned: s.x1, runs: s.n1 },
      previous: { rate: s.x2 / s.n2, mentioned: s.x2, runs: s.n2 },
      delta: t.delta,
      delta_ci: { low: t.low, high: t.high },
      p_value: t.p,
      q_value: t.q,
    };
  });
  return { tested: tested.length, skipped, signals: signals.sort(bySignal) };
}

/** null (all) before any value, then the values in string order. */
function nullsFirst(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compareStrings(a, b);
}

/**
 * |delta| descending, then a total order, so the bytes never depend on the read's order: the brand
 * first, then by name and competitor id; all engines first, then by engine name and id; likewise
 * segments, then countries.
 */
function bySignal(a: Signal, b: Signal): number {
  return Math.abs(b.delta) - Math.abs(a.delta)
    || nullsFirst(a.competitor_id === null ? null : a.name, b.competitor_id === null ? null : b.name)
    || nullsFirst(a.competitor_id, b.competitor_id)
    || nullsFirst(a.engine_name, b.engine_name) || nullsFirst(a.engine_id, b.engine_id)
    || nullsFirst(a.segment_name, b.segment_name) || nullsFirst(a.segment_id, b.segment_id)
    || nullsFirst(a.country, b.country);
}
