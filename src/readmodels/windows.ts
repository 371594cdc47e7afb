// The days a request covers: the current window (following the data) or the range it names.
import { addDays } from '../lib/time';
import { latestRunDay, type ReadStore } from './store';

export interface Window {
  start: string;   // YYYY-MM-DD, inclusive
  end: string;     // YYYY-MM-DD, inclusive: the day of the project's latest succeeded run
}

/**
 * The current window: the `days` UTC days ending with the day of the project's latest succeeded run
 * (not the wall clock, so replays are reproducible). An engine filter never moves it. Null when the
 * project has no succeeded runs.
 */
export function currentWindow(store: ReadStore, projectId: string, days: number): Window | null {
  const end = latestRunDay(store, projectId);
  if (!end) return null;
  return { start: addDays(end, -(days - 1)), end };
}

/**
 * The filters on a run's dimensions and its prompt's segments (docs/metrics.md#filters): within one,
 * any of its values; across them, all. null: no filter on it. A run that does not name a dimension
 * never matches a filter on it.
 */
export interface RunFilter {
  country: string[] | null;
  persona: string[] | null;
  model: string[] | null;
  segmentIds: string[] | null;
}

/** The request's filters, or null when it gives none (every v1 request). */
export function filterOf(args: Partial<RunFilter>): RunFilter | null {
  const f = { country: args.country ?? null, persona: args.persona ?? null, model: args.model ?? null, segmentIds: args.segmentIds ?? null };
  return f.country === null && f.persona === null && f.model === null && f.segmentIds === null ? null : f;
}

/** Whether a filter names a dimension of the runs (not only segments): its range is read from the runs, day by day. */
export function filtersDims(f: RunFilter | null | undefined): f is RunFilter {
  return !!f && (f.country !== null || f.persona !== null || f.model !== null);
}

/**
 * Whether a filter names no dimension of the runs but the country: then a range's whole months may be
 * read from the sums per month and country (migration 023), which key by no other dimension.
 */
export function byMonthsToo(f: RunFilter | null | undefined): boolean {
  return !f || (f.persona === null && f.model === null);
}

/** Counted runs of one project over an inclusive day range, optionally restricted to some engines and by a filter. */
export interface Slice {
  projectId: string;
  start: string;
  end: string;
  engineIds: string[] | null;
  filter?: RunFilter | null;
}

/** What a request says about its days (ReadArgs). */
export interface RangeArgs {
  projectId: string;
  startDate: string | null;
  endDate: string | null;
}

/**
 * The days a request covers (docs/metrics.md#date-ranges): start_date..end_date when both are given
 * (checked by the HTTP layer: in order, at most 366 days); one of them alone, the `days` days starting
 * or ending there; neither, the current window of `days` days (v1: follows the data, null when the
 * project has no succeeded runs). An explicit range does not depend on the data, and may hold no runs.
 */
export function requestedWindow(store: ReadStore, args: RangeArgs, days: number): Window | null {
  if (args.startDate !== null && args.endDate !== null) return { start: args.startDate, end: args.endDate };
  if (args.endDate !== null) return { start: addDays(args.endDate, -(days - 1)), end: args.endDate };
  if (args.startDate !== null) return { start: args.startDate, end: addDays(args.startDate, days - 1) };
  return currentWindow(store, args.projectId, days);
}

/** The requested window of a request as a slice (with its engine filter); null when there is none (no runs, no range). */
export function currentSlice(store: ReadStore, args: RangeArgs & Partial<RunFilter> & { windowDays: number; engineIds: string[] | null }): Slice | null {
  const w = requestedWindow(store, args, args.windowDays);
  return w && { projectId: args.projectId, start: w.start, end: w.end, engineIds: args.engineIds, filter: filterOf(args) };
}
