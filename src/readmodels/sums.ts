// Window sums shared by the metric endpoints (visibility, trends, segments, rankings): integer sums
// added per key, so the same numbers whatever pieces a range is read in.
import { addDays } from '../lib/time';
import type { Period } from './args';
import { countingOf, counts, dimsOf, rollupRows, type Counting } from './counted-runs';
import { EVERY_PERIOD_STALE, rangePieces, stalePeriods, type Stale } from './range-pieces';
import {
  addMention, addSums, compareStrings, dayHitRows, dayPairRows, engineDayRows, keyNumbers, engineNames, engineSumsOf, hitTotalNumbers, pairTotalNumbers, periodStart, promptIdsOfDays, promptRows, promptTexts, recountingProject, rollupLists,
  sliceHitsOfDays, sliceMentionsOfDays, sliceSumsOfDays, totalsEngines, trackedCompetitorIds, zeroMention, zeroSums, type DayEngineSums, type MentionSums, type PromptRow, type ReadStore,
  type SliceGrouping,
} from './store';
import { byMonthsToo, filtersDims, type Slice } from './windows';

export interface EnginePromptSums extends MentionSums {
  engine_id: string;
  engine_name: string;
  prompt_id: string;
  prompt_text: string;
}

/**
 * The periods of a slice read as their days: those pending (stalePeriods), and every one when the
 * slice filters on the runs' dimensions (no roll-up keys by them; a segment filter is one of prompts,
 * which the roll-ups key by).
 */
export function sliceStale(store: ReadStore, s: Slice): Stale {
  return filtersDims(s.filter) ? EVERY_PERIOD_STALE : stalePeriods(store, s.projectId);
}

/** One mention's terms, reused (a year read from the runs adds thousands: one object, not one each). */
const best = zeroMention();

/** A run's best mention added to sums (the writer's arithmetic: contributions.ts). */
export function addBest(into: MentionSums, position: number, sentiment: number | null): void {
  const d = best;
  d.runs = 0; d.position_sum = 0; d.rr_fixed = 0; d.sentiment_fixed = 0; d.sentiment_n = 0;
  addMention(d, position, sentiment, 1);
  into.mentioned += d.runs;
  into.position_sum += d.position_sum;
  into.rr_fixed += d.rr_fixed;
  into.sentiment_fixed += d.sentiment_fixed;
  into.sentiment_n += d.sentiment_n;
}

/** Stored sums added to sums: [runs, mentioned, position_sum, rr_fixed, sentiment_fixed, sentiment_n]. */
export function addStored(into: MentionSums, runs: number, mentioned: number, positionSum: number, rrFixed: number, sentimentFixedSum: number, sentimentN: number): void {
  into.runs += runs;
  into.mentioned += mentioned;
  into.position_sum += positionSum;
  into.rr_fixed += rrFixed;
  into.sentiment_fixed += sentimentFixedSum;
  into.sentiment_n += sentimentN;
}

const byEnginePrompt = (a: EnginePromptSums, b: EnginePromptSums): number => compareStrings(a.engine_id, b.engine_id) || compareStrings(a.prompt_id, b.prompt_id);

export interface CompetitorPromptSums extends MentionSums {
  competitor_id: string;
  prompt_id: string;
}

const byCompetitorPrompt = (a: CompetitorPromptSums, b: CompetitorPromptSums): number => compareStrings(a.competitor_id, b.competitor_id) || compareStrings(a.prompt_id, b.prompt_id);

/** What a slice's prompts measured: the brand's sums and its competitors'. */
export interface PromptSums {
  /** Brand sums per engine x prompt (only pairs with counted runs), in id order. */
  brand: EnginePromptSums[];
  /**
   * Mention sums of tracked competitors (not deleted; mentions of unknown ids are ignored) per
   * competitor x prompt, over counted runs (runs = 0: competitor rows carry no slice size; give them
   * the slice's runs with `overRuns`), in id order.
   */
  competitors: CompetitorPromptSums[];
}

/** A stored roll-up row (migration 013): places in its period's ids, then integer sums. */
type StoredRow = [number, number, ...number[]];

/** A report without a slice (no runs, no range) measured nothing. */
export const NO_PROMPT_SUMS: PromptSums = Object.freeze({ brand: [], competitors: [] });

/**
 * Ranges of at most this many days are read as their day rows by number (dayRowSums); longer ones from
 * the running totals. On a 1,000 x 8 project a day's rows cost about a third of the totals' four seeks a
 * pair, three days about as much (docs/decisions.md, "A short range's sums").
 */
const DAY_ROWS_DAYS = 2;

/**
 * Whether a range is one whole ISO week whose roll-up row is written (one JSON text a list: less than
 * the totals' seeks). A pending week (a live project's current one, migration 010) reads the totals.
 */
const wholeWeek = (store: ReadStore, s: Slice): boolean =>
  addDays(s.start, 6) === s.end && rangePieces(s.start, s.end, 'total', sliceStale(store, s)).every((p) => p.grain === 'week');

/** A range's sums per engine and prompt alone. */
const NO_GROUPING: SliceGrouping = { period: null, dimensions: [] };

/**
 * Both sums of a slice: a range of DAY_ROWS_DAYS or less from its day rows (dayRowSums); a longer one
 * per pair from the running totals (migration 025), two reads a pair whatever the range's length,
 * unless it is one whole ISO week or the slice filters on the runs' dimensions; then, and for the competitors of a slice that
 * leaves out an engine with runs, by the range's pieces (piecesSums).
 */
export function promptSums(store: ReadStore, s: Slice): PromptSums {
  const counting = countingOf(store, s.projectId, s.filter ?? null);
  const engines = s.engineIds === null ? null : new Set(s.engineIds);
  const tracked = new Set(trackedCompetitorIds(store, s.projectId));
  // Nested by the ids' own strings, never by a key joined from them: a year of roll-ups adds ~10^5
  // rows, and a joined key is a new string to hash at each.
  const brandOut = new Map<string, Map<string, EnginePromptSums>>();
  const competitorOut = new Map<string, Map<string, CompetitorPromptSums>>();
  const brandOf = (engineId: string, promptId: string): EnginePromptSums => {
    let byPrompt = brandOut.get(engineId);
    if (!byPrompt) brandOut.set(engineId, (byPrompt = new Map()));
    let r = byPrompt.get(promptId);
    if (!r) byPrompt.set(promptId, (r = { engine_id: engineId, engine_name: '', prompt_id: promptId, prompt_text: '', ...zeroSums() }));
    return r;
  };
  const competitorOf = (competitorId: string, promptId: string): CompetitorPromptSums => {
    let byPrompt = competitorOut.get(competitorId);
    if (!byPrompt) competitorOut.set(competitorId, (byPrompt = new Map()));
    let r = byPrompt.get(promptId);
    if (!r) byPrompt.set(promptId, (r = { competitor_id: competitorId, prompt_id: promptId, ...zeroSums() }));
    return r;
  };
  let fromPieces = { brand: true, competitors: true };
  if (!filtersDims(s.filter) && addDays(s.start, DAY_ROWS_DAYS) > s.end) {
    // A day or two: its rows (about one a pair and day) cost less than the totals' seeks.
    dayRowSums(store, s, counting, engines, tracked, brandOf, competitorOf);
    fromPieces = { brand: false, competitors: false };
  } else if (!filtersDims(s.filter) && !wholeWeek(store, s)) {
    // The running totals (migration 025): two reads per pair, whatever the range's length, keyed by
    // the numbers of what counts (named once, as dayRowSums does).
    const engineOf = numbered(store, [...counting.engines].filter((id) => engines === null || engines.has(id)));
    const promptOf = numbered(store, counting.prompts);
    for (const [e, q, runs, mentioned, ps, rr, sf, sn] of pairTotalNumbers(store, s.projectId, s.start, s.end, [...engineOf.keys()], [...promptOf.keys()])) {
      addStored(brandOf(engineOf.get(e)!, promptOf.get(q)!), runs, mentioned, ps, rr, sf, sn);
    }
    // A competitor's totals are over every engine: read when every engine with runs is read, else by pieces.
    const everyEngine = totalsEngines(store, s.projectId).every((id) => counting.engines.has(id) && (engines === null || engines.has(id)));
    if (everyEngine) {
      const competitorIdOf = numbered(store, tracked);
      for (const [q, c, mentioned, ps, rr, sf, sn] of hitTotalNumbers(store, s.projectId, s.start, s.end, [...promptOf.keys()], [...competitorIdOf.keys()])) {
        addStored(competitorOf(competitorIdOf.get(c)!, promptOf.get(q)!), 0, mentioned, ps, rr, sf, sn);
      }
    }
    fromPieces = { brand: false, competitors: !everyEngine };
  }
  if (fromPieces.brand || fromPieces.competitors) {
    piecesSums(store, s, counting, engines, tracked, fromPieces.brand ? brandOf : null, fromPieces.competitors ? competitorOf : null);
  }
  const brand = [...brandOut.values()].flatMap((m) => [...m.values()]).sort(byEnginePrompt);
  if (brand.length > 0) {
    const names = engineNames(store);
    const texts = promptTexts(store, s.projectId);
    for (const r of brand) {
      r.engine_name = names.get(r.engine_id)!; // counted runs: the engine is known, the prompt the project's
      r.prompt_text = texts.get(r.prompt_id)!;
    }
  }
  return { brand, competitors: [...competitorOut.values()].flatMap((m) => [...m.values()]).sort(byCompetitorPrompt) };
}

/** The ids by their numbers (keys, migration 013): an id no stored row names has none, and no row to count. */
function numbered(store: ReadStore, ids: Iterable<string>): Map<number, string> {
  return new Map([...keyNumbers(store, [...ids])].map(([id, n]) => [n, id]));
}

/**
 * promptSums of a short unfiltered range from its day rows as numbers (store/reads/day-rows.ts): the
 * numbers of what counts named once, and a row whose engine, prompt or competitor is not among them
 * left out, as counts() and the tracked competitors decide for ids. The same integers as piecesSums.
 */
function dayRowSums(store: ReadStore, s: Slice, counting: Counting, engines: ReadonlySet<string> | null, tracked: ReadonlySet<string>,
  brandOf: (engineId: string, promptId: string) => EnginePromptSums,
  competitorOf: (competitorId: string, promptId: string) => CompetitorPromptSums): void {
  const engineOf = numbered(store, [...counting.engines].filter((id) => engines === null || engines.has(id)));
  const promptOf = numbered(store, counting.prompts);
  for (const [e, q, runs, mentioned, ps, rr, sf, sn] of dayPairRows(store, s.projectId, s.start, s.end)) {
    const engineId = engineOf.get(e);
    const promptId = promptOf.get(q);
    if (engineId !== undefined && promptId !== undefined) addStored(brandOf(engineId, promptId), runs, mentioned, ps, rr, sf, sn);
  }
  const competitorIdOf = numbered(store, tracked);
  for (const [e, q, c, mentioned, ps, rr, sf, sn] of dayHitRows(store, s.projectId, s.start, s.end)) {
    const competitorId = competitorIdOf.get(c);
    const promptId = promptOf.get(q);
    if (competitorId !== undefined && promptId !== undefined && engineOf.has(e)) addStored(competitorOf(competitorId, promptId), 0, mentioned, ps, rr, sf, sn);
  }
}

/**
 * promptSums by the range's pieces: whole months and weeks from the roll-ups (migration 013), days from
 * slice_days and slice_hits (022, 023 by month under a country filter), for a filter on the runs'
 * dimensions (no running total keys by them) and the competitors of a read that leaves an engine out.
 * `brandOf`, `competitorOf`: where each sum goes, null for a sum not read here.
 */
function piecesSums(store: ReadStore, s: Slice, counting: Counting, engines: ReadonlySet<string> | null, tracked: ReadonlySet<string>,
  brandOf: ((engineId: string, promptId: string) => EnginePromptSums) | null,
  competitorOf: ((competitorId: string, promptId: string) => CompetitorPromptSums) | null): void {
  const dims = filtersDims(s.filter) ? dimsOf(store, s.projectId, s.filter) : null;
  const monthly = byMonthsToo(s.filter);
  // Integers added per key: the same numbers whatever pieces the range is read in.
  for (const p of rangePieces(s.start, s.end, 'total', sliceStale(store, s))) {
    if (p.grain === 'day') {
      // The days' sums per engine and prompt (migration 022): a row per pair, whatever the runs.
      if (brandOf) {
        for (const [, engineId, promptId, , , , runs, mentioned, ps, rr, sf, sn] of sliceSumsOfDays(store, s.projectId, p.start, p.end, NO_GROUPING, dims, monthly)) {
          if (counts(counting, engines, engineId, promptId)) addStored(brandOf(engineId, promptId), runs, mentioned, ps, rr, sf, sn);
        }
      }
      if (competitorOf) {
        for (const [, engineId, promptId, competitorId, mentioned, ps, rr, sf, sn] of sliceHitsOfDays(store, s.projectId, p.start, p.end, false, dims, monthly)) {
          if (tracked.has(competitorId) && counts(counting, engines, engineId, promptId)) addStored(competitorOf(competitorId, promptId), 0, mentioned, ps, rr, sf, sn);
        }
      }
      continue;
    }
    // A period's lists name ids by their place in its `ids`: what counts is decided once per place,
    // and a row costs array lookups, not an array of id strings of its own.
    if (brandOf) {
      for (const [, idList, , json] of rollupLists(store, s.projectId, p.grain, p.start, p.end, 'prompts')) {
        const ids = JSON.parse(idList) as string[];
        const engineOk = ids.map((id) => counting.engines.has(id) && (engines === null || engines.has(id)));
        const promptOk = ids.map((id) => counting.prompts.has(id));
        for (const [e, q, runs, mentioned, ps, rr, sf, sn] of JSON.parse(json) as StoredRow[]) {
          if (engineOk[e]! && promptOk[q]!) addStored(brandOf(ids[e]!, ids[q]!), runs!, mentioned!, ps!, rr!, sf!, sn!);
        }
      }
    }
    if (competitorOf) {
      for (const [, idList, , json] of rollupLists(store, s.projectId, p.grain, p.start, p.end, 'competitors')) {
        const ids = JSON.parse(idList) as string[];
        const engineOk = ids.map((id) => counting.engines.has(id) && (engines === null || engines.has(id)));
        const promptOk = ids.map((id) => counting.prompts.has(id));
        const trackedAt = ids.map((id) => tracked.has(id));
        for (const [e, q, c, mentioned, ps, rr, sf, sn] of JSON.parse(json) as StoredRow[]) {
          if (trackedAt[c!]! && engineOk[e]! && promptOk[q]!) addStored(competitorOf(ids[c!]!, ids[q]!), 0, mentioned!, ps!, rr!, sf!, sn!);
        }
      }
    }
  }
}

/** A period's brand sums of one engine: `day` is the period's first day. */
export type PeriodEngineSums = DayEngineSums;

/** What the trend and the daily scores read of a range, per day, ISO week or month (`day` is the period's first day). */
export interface EnginePeriods {
  /** Brand sums per period x engine, oldest period first, engines in id order; a row of an unknown engine is left out, as a join would. */
  engines: PeriodEngineSums[];
  /** Per period with any: runs mentioning a tracked competitor, summed over competitors and engines (the share-of-voice denominator part). */
  competitorMentions: Map<string, number>;
}

/** The brand sums per period and engine of start..end, and the competitor mentions per period, in one read (store/reads/period-rows.ts). */
export function engineSumsByPeriod(store: ReadStore, projectId: string, start: string, end: string, interval: Period): EnginePeriods {
  // Its rows being counted again (migration 018): from the runs, the same arithmetic.
  if (recountingProject(store, projectId)) return filteredPeriods(store, { projectId, start, end, engineIds: null, filter: null }, interval);
  const rows = engineDayRows(store, projectId, start, end, interval);
  // Sorted all the same: nothing binds the planner to keep a subquery's order in an aggregate (a
  // sort of rows already in order is one pass of comparisons, ~0.1 ms for a year).
  rows.sort((a, b) => compareStrings(a[0], b[0]) || compareStrings(a[1], b[1]));
  return engineSumsOf(rows, engineNames(store));
}

/** periodStart for many rows of few days: each day's period computed once (a Date per call otherwise). */
export function periodsOf(interval: Period): (day: string) => string {
  const seen = new Map<string, string>();
  return (day) => {
    let period = seen.get(day);
    if (period === undefined) seen.set(day, (period = periodStart(day, interval)));
    return period;
  };
}

/** Per period with counted runs: its distinct prompts among them (a prompt counts once per period, however many pieces hold it). */
export function promptsByPeriod(store: ReadStore, projectId: string, start: string, end: string, interval: Period): Map<string, Set<string>> {
  if (recountingProject(store, projectId)) return filteredPeriods(store, { projectId, start, end, engineIds: null, filter: null }, interval).prompts;
  const out = new Map<string, Set<string>>();
  const counting = countingOf(store, projectId);
  const periodOf = periodsOf(interval);
  const into = (day: string): Set<string> => {
    const period = periodOf(day);
    let prompts = out.get(period);
    if (!prompts) out.set(period, (prompts = new Set()));
    return prompts;
  };
  for (const p of rangePieces(start, end, interval, stalePeriods(store, projectId))) {
    if (p.grain === 'day') {
      for (const r of promptIdsOfDays(store, projectId, p.start, p.end)) {
        const prompts = into(r.day);
        for (const id of r.prompt_ids.split(',')) prompts.add(id);
      }
      continue;
    }
    for (const period of rollupRows<PromptRow>(store, projectId, p, 'prompts', promptRows)) {
      for (const [engineId, promptId] of period.rows) if (counts(counting, null, engineId, promptId)) into(period.day).add(promptId);
    }
  }
  return out;
}

/**
 * engineSumsByPeriod and promptsByPeriod of a filtered slice, from its counted runs (the roll-ups and
 * engine-day rows key by neither dimension nor segment): per period and engine, the brand sums; per
 * period, the tracked competitors the runs mention (as the writer counts competitor_runs) and the
 * distinct prompts. The same arithmetic as the writer's rows, so an empty filter would give their numbers.
 */
export function filteredPeriods(store: ReadStore, s: Slice, interval: Period): EnginePeriods & { prompts: Map<string, Set<string>> } {
  const counting = countingOf(store, s.projectId, s.filter ?? null);
  const only = s.engineIds === null ? null : new Set(s.engineIds);
  const tracked = new Set(trackedCompetitorIds(store, s.projectId));
  const names = engineNames(store);
  const rows = new Map<string, PeriodEngineSums>();
  const competitorMentions = new Map<string, number>();
  const prompts = new Map<string, Set<string>>();
  const dims = filtersDims(s.filter) ? dimsOf(store, s.projectId, s.filter) : null;
  const monthly = byMonthsToo(s.filter);
  // The sums per period, engine and prompt (migrations 022, 023: the periods summed in SQL).
  for (const [period, engineId, promptId, , , , runs, mentioned, ps, rr, sf, sn] of sliceSumsOfDays(store, s.projectId, s.start, s.end, { period: interval, dimensions: [] }, dims, monthly)) {
    if (!counts(counting, only, engineId, promptId)) continue;
    const key = `${period} ${engineId}`;
    let r = rows.get(key);
    if (!r) rows.set(key, (r = { day: period, engine_id: engineId, engine_name: names.get(engineId)!, ...zeroSums() }));
    addStored(r, runs, mentioned, ps, rr, sf, sn);
    let ids = prompts.get(period);
    if (!ids) prompts.set(period, (ids = new Set()));
    ids.add(promptId);
  }
  // Runs mentioning a tracked competitor, once per competitor (as the writer counts competitor_runs),
  // added over the tracked competitors in SQL.
  for (const [period, engineId, promptId, mentioned] of sliceMentionsOfDays(store, s.projectId, s.start, s.end, interval, [...tracked], dims, monthly)) {
    if (counts(counting, only, engineId, promptId)) competitorMentions.set(period, (competitorMentions.get(period) ?? 0) + mentioned);
  }
  const engines = [...rows.values()].sort((a, b) => compareStrings(a.day, b.day) || compareStrings(a.engine_id, b.engine_id));
  return { engines, competitorMentions, prompts };
}

/** Adds rows into one total per key (integers: exact in any order). */
export function sumBy<T extends MentionSums>(rows: readonly T[], keyOf: (r: T) => string): Map<string, MentionSums> {
  const out = new Map<string, MentionSums>();
  for (const r of rows) {
    let into = out.get(keyOf(r));
    if (!into) out.set(keyOf(r), (into = zeroSums()));
    addSums(into, r);
  }
  return out;
}

/** A competitor's sums measured against the runs of its slice (mention_rate and score divide by them). */
export const overRuns = (s: MentionSums, runs: number): MentionSums => ({ ...s, runs });

/** part / whole; null when whole is 0 (share of voice of a competitor: its mentions / all mentions). */
export const shareOf = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);
