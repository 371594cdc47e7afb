// Signals: the changes of mention rate between two periods that are statistically real,
// across the project's slices, with the false discovery rate controlled (docs/metrics.md#signals).
import type { Signal, Signals } from '../bodies.gen';
import { previousPeriod } from '../comparison';
import { countingOf, counts, type Counting } from '../counted-runs';
import { benjaminiHochberg, FALSE_DISCOVERY_RATE, newcombe, twoProportionP } from '../differences';
import type { Endpoint } from '../endpoint';
import {
  activeSegments, compareStrings, engineNames, projectName, runTallies, segmentPrompts, trackedCompetitors, type ReadStore,
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

/** One period's counted runs of a slice and the runs of it naming each entity (by its place: 0 the brand, then the tracked competitors). */
interface Cell {
  engine: string | null;
  segment: string | null;
  country: string | null;
  runs: number;
  mentioned: number[];
}

type Key = [engine: string | null, segment: string | null, country: string | null];

/**
 * The slices a run of this engine, prompt and country ('' none) belongs to: its engine or all, x each
 * of its prompt's segments or all, x its country or all (a run naming no country is in no country's slice).
 */
function sliceKeys(engineId: string, segments: readonly string[], country: string): Key[] {
  const out: Key[] = [];
  for (const e of [null, engineId]) for (const s of [null, ...segments]) for (const c of country === '' ? [null] : [null, country]) out.push([e, s, c]);
  return out;
}

/**
 * A period's cells by slice key, from the tallies under the counting rule. The cells of an engine,
 * prompt and country are found once (a hit tally names the same ones as its run tally), and each
 * cell counts its entities by place: a tally adds to a dozen cells, not a dozen keys made and hashed.
 */
function cellsOf(store: ReadStore, projectId: string, w: Window, keep: (engineId: string, promptId: string) => boolean,
  segmentsOf: ReadonlyMap<string, readonly string[]>, entities: ReadonlyMap<string, number>): Map<string, Cell> {
  const cells = new Map<string, Cell>();
  const cell = ([engine, segment, country]: Key): Cell => {
    const key = `${engine ?? ''} ${segment ?? ''} ${country ?? ''}`;
    let c = cells.get(key);
    if (!c) cells.set(key, (c = { engine, segment, country, runs: 0, mentioned: new Array<number>(entities.size + 1).fill(0) }));
    return c;
  };
  const cellsOfTally = new Map<string, Cell[]>();
  const cellsFor = (e: string, p: string, country: string): Cell[] => {
    const id = `${e} ${p} ${country}`;
    let list = cellsOfTally.get(id);
    if (list === undefined) cellsOfTally.set(id, (list = sliceKeys(e, segmentsOf.get(p) ?? [], country).map(cell)));
    return list;
  };
  const t = runTallies(store, projectId, w.start, w.end);
  for (const [e, p, country, runs, brand] of t.runs) {
    if (!keep(e, p)) continue;
    for (const c of cellsFor(e, p, country)) {
      c.runs += runs;
      c.mentioned[0]! += brand;
    }
  }
  for (const [e, p, country, competitor, n] of t.hits) {
    const at = entities.get(competitor);
    if (at === undefined || !keep(e, p)) continue;
    for (const c of cellsFor(e, p, country)) c.mentioned[at]! += n;
  }
  return cells;
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
  const keep = (e: string, p: string): boolean => counts(counting, engines, e, p);
  const segments = new Map(activeSegments(store, projectId).map((s) => [s.id, s.name]));
  const segmentsOf = new Map<string, string[]>();
  for (const { segment_id: s, prompt_id: p } of segmentPrompts(store, projectId)) {
    if (segments.has(s)) segmentsOf.set(p, [...(segmentsOf.get(p) ?? []), s]);
  }
  const competitors = trackedCompetitors(store, projectId);
  const tracked = new Set(competitors.map((c) => c.id));
  // Each tracked competitor's place in a cell's counts (0 is the brand's).
  const entities = new Map([...tracked].map((id, i) => [id, i + 1]));
  const now = cellsOf(store, projectId, current, keep, segmentsOf, entities);
  const before = cellsOf(store, projectId, previous, keep, segmentsOf, entities);

  // Every slice with counted runs in either period, for the brand and each tracked competitor.
  const slices: Slice[] = [];
  for (const key of new Set([...now.keys(), ...before.keys()])) {
    const a = now.get(key);
    const b = before.get(key);
    const where = (a ?? b)!;
    ['', ...tracked].forEach((entity, i) => {
      slices.push({
        entity, engine: where.engine, segment: where.segment, country: where.country,
        x1: a?.mentioned[i] ?? 0, n1: a?.runs ?? 0, x2: b?.mentioned[i] ?? 0, n2: b?.runs ?? 0,
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
