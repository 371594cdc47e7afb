// The counting rule and the rows a range is read from: the runs of its days and the roll-ups of its weeks and months.
import type { Piece } from './range-pieces';
import { filtersDims, type RunFilter, type Slice } from './windows';
import {
  countedPromptIds, dimsMatching, knownEngineIds, parseNames, rollupLists, runRowsOfDays, runRowsOfDaysIn, segmentPrompts, type ReadStore,
  type RollupList, type RollupNames,
} from './store';

/**
 * The counting rule (COUNTED_RUNS, as docs/metrics.md states it) as sets, read once per range: the project's non-deleted prompts
 * and the known engines. A run counts when its prompt is the project's (upstream ids can disagree;
 * another project's prompt must not count or show) and not deleted, and its engine is known. A fact
 * whose parent has not arrived yet shows once it arrives.
 */
export interface Counting {
  prompts: ReadonlySet<string>;
  engines: ReadonlySet<string>;
}

export function countingOf(store: ReadStore, projectId: string, filter: RunFilter | null = null): Counting {
  const prompts = new Set(countedPromptIds(store, projectId));
  if (filter?.segmentIds) {
    // A segment filter is a prompt filter: the counted prompts that list any of the segments now.
    const wanted = new Set(filter.segmentIds);
    const inSegments = new Set(segmentPrompts(store, projectId).filter((r) => wanted.has(r.segment_id)).map((r) => r.prompt_id));
    for (const id of prompts) if (!inSegments.has(id)) prompts.delete(id);
  }
  return { prompts, engines: new Set(knownEngineIds(store)) };
}

/** The numbers of the project's dims combinations (migration 015) a filter on the runs' dimensions matches, as the JSON list the run reads bind. */
export function dimsOf(store: ReadStore, projectId: string, f: RunFilter): string {
  return JSON.stringify(dimsMatching(store, projectId, f.country, f.persona, f.model));
}

/** Whether a run of this engine and prompt counts, after an engine filter (null: none). */
export function counts(c: Counting, engines: ReadonlySet<string> | null, engineId: string, promptId: string): boolean {
  return c.engines.has(engineId) && c.prompts.has(promptId) && (engines === null || engines.has(engineId));
}

/** What runsOfDays needs of a run's parsed facts: its engine and prompt, first. */
type KeyedFacts = { readonly engineId: string; readonly promptId: string };

/** A counted, succeeded run of a range's days, as its row keeps it (migration 013: runs.facts). */
export interface DayRun<F extends KeyedFacts> {
  id: string;
  completed_at: string;
  day: string;
  facts: F;
}

/**
 * The runs themselves of a piece's days, for what no sum holds (the cited URLs: citations): the
 * succeeded runs of the project completed on the days of the piece, those that count (and pass the
 * slice's engine filter) kept. A filter on the dimensions is decided in SQL (the dims number of each
 * run's index entry); one on segments by the prompts that count (countingOf). Sums of a range's days
 * are read from slice_days and slice_hits instead (sums.ts).
 */
export function* runsOfDays<F extends KeyedFacts>(store: ReadStore, s: Slice, p: Piece, counting: Counting, parse: (json: string) => F): Iterable<DayRun<F>> {
  const engines = s.engineIds === null ? null : new Set(s.engineIds);
  const rows = filtersDims(s.filter)
    ? runRowsOfDaysIn(store, s.projectId, p.start, p.end, dimsOf(store, s.projectId, s.filter))
    : runRowsOfDays(store, s.projectId, p.start, p.end);
  // Read and parsed one at a time and dropped by the caller: a year read from the runs keeps no run
  // alive, so a build's heap does not grow with the range and a scavenge has little to copy.
  for (const [id, completedAt, json] of rows) {
    const facts = parse(json);
    if (counts(counting, engines, facts.engineId, facts.promptId)) yield { id, completed_at: completedAt, day: completedAt.slice(0, 10), facts };
  }
}

/**
 * The rows of one list of the roll-ups of a project's weeks or months (a piece: the periods' first
 * days), period by period, decoded (src/store/rollup-rows.ts).
 */
export function rollupRows<R>(store: ReadStore, projectId: string, p: Piece, kind: RollupList,
  decode: (names: RollupNames, json: string) => R[]): Array<{ day: string; rows: R[] }> {
  return rollupLists(store, projectId, p.grain, p.start, p.end, kind)
    .map(([day, ids, urls, json]) => ({ day, rows: decode(parseNames(ids, urls), json) }));
}
