// The visibility report's `groups` (group_by): the brand's figures per group of one or two keys,
// summed from the counted runs of the slice (docs/metrics.md#breakdowns).
import type { VisibilityGroup } from './bodies.gen';
import type { QueryArgs } from './params.gen';
import { countingOf, dimsOf } from './counted-runs';
import { addStored, engineSumsByPeriod, periodsOf, type EnginePromptSums } from './sums';
import {
  activeSegments, averageRank, compareStrings, engineNames, mentionRate, mentionRateCi, promptTexts, score, segmentPrompts, sentiment,
  MAX_UNCOUNTED_PROMPTS, sliceSumsOfDays, sliceValueSums, uncountedPrompts, zeroSums, type CountedPairs, type MentionSums, type ReadStore,
  type SliceDimension, type SliceGrouping, type ValueDimension,
} from './store';
import { byMonthsToo, filtersDims, type Slice } from './windows';

export type GroupKey = NonNullable<QueryArgs['groupBy']>[number];

/** A group's value of one key: an id, a label or a period; null when the run names none. */
type Value = string | null;

/** Values of a key, with how a row shows them and orders them. */
interface KeyDef {
  /** The values a counted run has for the key: one, or several (a prompt in two segments), or [null]. */
  of(run: RunOfSlice): Value[];
  /** The row's fields for a value. */
  fields(v: Value): Partial<VisibilityGroup>;
  /** Sort key of a value: labels then ids; null last. */
  order(v: Value): string;
}

interface RunOfSlice {
  engineId: string;
  promptId: string;
  day: string;
  dims: readonly [Value, Value, Value, Value] | undefined;
}

const NONE: readonly [Value, Value, Value, Value] = [null, null, null, null];
/** Null sorts after every value: U+FFFF is after any label or id. */
const LAST = '\uffff';

function keyDefs(store: ReadStore, projectId: string): (key: GroupKey) => KeyDef {
  let engines: Map<string, string> | undefined;
  let texts: Map<string, string> | undefined;
  let segments: { names: Map<string, string>; ofPrompt: Map<string, string[]> } | undefined;
  const segmentsOf = (): NonNullable<typeof segments> => {
    if (segments) return segments;
    const names = new Map(activeSegments(store, projectId).map((s) => [s.id, s.name]));
    const ofPrompt = new Map<string, string[]>();
    for (const r of segmentPrompts(store, projectId)) {
      if (!names.has(r.segment_id)) continue; // an inactive or deleted segment is no group
      let list = ofPrompt.get(r.prompt_id);
      if (!list) ofPrompt.set(r.prompt_id, (list = []));
      list.push(r.segment_id);
    }
    return (segments = { names, ofPrompt });
  };
  const dim = (i: 0 | 1 | 2, field: 'country' | 'persona' | 'model'): KeyDef => ({
    of: (r) => [(r.dims ?? NONE)[i]],
    fields: (v) => ({ [field]: v }),
    order: (v) => v ?? LAST,
  });
  const period = (grain: 'day' | 'week' | 'month'): KeyDef => {
    const of = periodsOf(grain); // each day's period once, not a Date per run
    return { of: (r) => [of(r.day)], fields: (v) => ({ period: v! }), order: (v) => v! };
  };
  return (key) => {
    switch (key) {
      case 'engine': {
        engines ??= engineNames(store);
        const names = engines;
        return { of: (r) => [r.engineId], fields: (v) => ({ engine_id: v, engine_name: names.get(v!)! }), order: (v) => `${names.get(v!)!}\u0000${v!}` };
      }
      case 'prompt': {
        texts ??= promptTexts(store, projectId);
        const t = texts;
        return { of: (r) => [r.promptId], fields: (v) => ({ prompt_id: v, prompt_text: t.get(v!)! }), order: (v) => `${t.get(v!)!}\u0000${v!}` };
      }
      case 'segment': {
        const s = segmentsOf();
        return {
          of: (r) => s.ofPrompt.get(r.promptId) ?? [null],
          fields: (v) => ({ segment_id: v, segment_name: v === null ? null : s.names.get(v)! }),
          order: (v) => (v === null ? LAST : `${s.names.get(v)!}\u0000${v}`),
        };
      }
      case 'country': return dim(0, 'country');
      case 'persona': return dim(1, 'persona');
      case 'model': return dim(2, 'model');
      default: return period(key);
    }
  };
}

/**
 * The brand's figures per group of `keys` over the slice's counted runs (its engine filter and
 * filters applied). Read from the fewest rows that hold them: keys of the engine, prompt and segment
 * from `measured` (the report's sums per engine and prompt, when given); periods and one dimension
 * from the sums per period and engine or per value (valueGroups); otherwise from slice_days
 * (migration 022) and whole months of slice_months (023), the counted rows summed in SQL per engine,
 * prompt, period and dimension value only when a key needs them.
 */
export function visibilityGroups(store: ReadStore, s: Slice, keys: readonly GroupKey[], measured: readonly EnginePromptSums[] | null = null): VisibilityGroup[] {
  const defs = keys.map(keyDefs(store, s.projectId));
  // Keys of the engine, the prompt and the segment alone: the report's own sums per engine and prompt
  // (promptSums: the same counted runs, the same filters) hold every group, a few thousand rows
  // already read, whatever the range.
  if (measured !== null && keys.every(byPair)) return groupRows(defs, measured);
  const counting = countingOf(store, s.projectId, s.filter ?? null);
  const engines = s.engineIds === null ? null : new Set(s.engineIds);
  // Summed in SQL by the finest period a key needs and the dimensions the keys name: rows per pair, period and value.
  const periods = keys.filter((k) => k === 'day' || k === 'week' || k === 'month');
  const grouping: SliceGrouping = {
    period: periods.length === 0 ? null : periods.length === 1 ? periods[0]! : 'day',
    dimensions: keys.filter((k): k is SliceDimension => k === 'country' || k === 'persona' || k === 'model'),
  };
  const engineIds = [...counting.engines].filter((e) => engines === null || engines.has(e));
  const byValues = valueGroups(store, s, keys, defs, grouping, engineIds, counting.prompts);
  if (byValues !== null) return byValues;
  const groups: Groups = new Map();
  // The counting rule (and the engine filter) decided in SQL, and the rows summed there over the
  // engines and prompts no key needs: a group_by by country or month hands over a row per value, not per pair.
  const pairs: CountedPairs = {
    engineIds,
    promptIds: [...counting.prompts],
    byEngine: keys.includes('engine'),
    byPrompt: keys.includes('prompt') || keys.includes('segment'),
  };
  const rows = sliceSumsOfDays(store, s.projectId, s.start, s.end, grouping,
    filtersDims(s.filter) ? dimsOf(store, s.projectId, s.filter) : null, byMonthsToo(s.filter), pairs);
  for (const [day, engineId, promptId, country, persona, model, runs, brandRuns, positionSum, rrFixed, sentimentFixed, sentimentN] of rows) {
    addToGroups(groups, defs, { engineId, promptId, day, dims: [country, persona, model, null] }, runs, brandRuns, positionSum, rrFixed, sentimentFixed, sentimentN);
  }
  return groupsOut(groups, defs);
}

const DIMENSION_OF: Record<SliceDimension, ValueDimension> = { country: 1, persona: 2, model: 3 };

/**
 * Groups of keys that name no prompt nor segment and at most one dimension, over a slice filtered on
 * no dimension: by periods alone from the sums per period and engine, by a dimension from the sums
 * per engine and value (migration 026: a year by country is ~12 rows per engine and value plus the
 * ragged days), with the runs of the few prompts with runs that do not count taken away; null when another read must answer (a filter on dimensions or segments, two
 * dimensions, many prompts not counted).
 */
function valueGroups(store: ReadStore, s: Slice, keys: readonly GroupKey[], defs: readonly KeyDef[], g: SliceGrouping, engineIds: readonly string[],
  counted: ReadonlySet<string>): VisibilityGroup[] | null {
  if (s.filter?.segmentIds || filtersDims(s.filter) || g.dimensions.length > 1 || keys.includes('prompt') || keys.includes('segment')) return null;
  const groups: Groups = new Map();
  if (g.dimensions.length === 0) {
    // By periods (and engine) alone: the counted runs' sums per period and engine the trend reads
    // (agg_engine_day, or its recount), a row per day and engine at most.
    const only = new Set(engineIds);
    for (const r of engineSumsByPeriod(store, s.projectId, s.start, s.end, g.period ?? 'month').engines) {
      if (r.runs === 0 || !only.has(r.engine_id)) continue;
      addToGroups(groups, defs, { engineId: r.engine_id, promptId: '', day: r.day, dims: undefined }, r.runs, r.mentioned, r.position_sum, r.rr_fixed,
        r.sentiment_fixed, r.sentiment_n);
    }
    return groupsOut(groups, defs);
  }
  const uncounted = uncountedPrompts(store, s.projectId, [...counted]);
  if (uncounted.length > MAX_UNCOUNTED_PROMPTS) return null;
  const dimension = DIMENSION_OF[g.dimensions[0]!];
  const rows = sliceValueSums(store, s.projectId, s.start, s.end, { period: g.period, dimension, byEngine: keys.includes('engine') }, engineIds, uncounted);
  for (const [period, engineId, v, runs, brandRuns, positionSum, rrFixed, sentimentFixed, sentimentN] of rows) {
    const value = v === '' ? null : v;
    const dims: [Value, Value, Value, Value] = [null, null, null, null];
    dims[dimension - 1] = value;
    addToGroups(groups, defs, { engineId, promptId: '', day: period, dims }, runs, brandRuns, positionSum, rrFixed, sentimentFixed, sentimentN);
  }
  return groupsOut(groups, defs);
}

/** Keys a group of the report's sums per engine and prompt can be told by. */
const byPair = (k: GroupKey): boolean => k === 'engine' || k === 'prompt' || k === 'segment';

/** Groups of keys in byPair from the report's sums per engine and prompt. */
function groupRows(defs: readonly KeyDef[], measured: readonly EnginePromptSums[]): VisibilityGroup[] {
  const groups: Groups = new Map();
  for (const r of measured) {
    addToGroups(groups, defs, { engineId: r.engine_id, promptId: r.prompt_id, day: '', dims: undefined }, r.runs, r.mentioned, r.position_sum, r.rr_fixed, r.sentiment_fixed, r.sentiment_n);
  }
  return groupsOut(groups, defs);
}

/** By the first key's value, then the second's (null with one key): maps, so no value can collide with another. */
type Groups = Map<Value, Map<Value, { values: Value[]; sums: MentionSums }>>;

/** A row's sums added to each of its groups. */
function addToGroups(groups: Groups, defs: readonly KeyDef[], run: RunOfSlice, runs: number, brandRuns: number, positionSum: number, rrFixed: number,
  sentimentFixed: number, sentimentN: number): void {
  // Every combination of the row's values (a prompt in two segments is in both segments' groups).
  // One or two keys: the row's groups are the combinations of its values of each (several only for segments).
  const first = defs[0]!.of(run);
  const second = defs.length > 1 ? defs[1]!.of(run) : null;
  for (const a of first) for (const b of second ?? [undefined]) {
    let inner = groups.get(a);
    if (!inner) groups.set(a, (inner = new Map()));
    const k = b === undefined ? null : b;
    let g = inner.get(k);
    if (!g) inner.set(k, (g = { values: b === undefined ? [a] : [a, b], sums: zeroSums() }));
    addStored(g.sums, runs, brandRuns, positionSum, rrFixed, sentimentFixed, sentimentN);
  }
}

/** The groups as the report's rows, in the keys' order. */
function groupsOut(groups: Groups, defs: readonly KeyDef[]): VisibilityGroup[] {
  const order = (values: Value[]): string[] => values.map((v, i) => defs[i]!.order(v));
  return [...groups.values()].flatMap((inner) => [...inner.values()])
    .map((g) => ({ g, o: order(g.values) }))
    .sort((a, b) => a.o.reduce((c, x, i) => c || compareStrings(x, b.o[i]!), 0))
    .map(({ g }): VisibilityGroup => {
      const row: Partial<VisibilityGroup> = {};
      g.values.forEach((v, i) => Object.assign(row, defs[i]!.fields(v)));
      const m = g.sums;
      return {
        ...row, run_count: m.runs, mention_count: m.mentioned, mention_rate: mentionRate(m), mention_rate_ci: mentionRateCi(m),
        average_rank: averageRank(m), sentiment: sentiment(m), score: score(m) ?? 0,
      };
    });
}
