// The succeeded runs of a project by completion time (index runs_recent: project, completed_at).
import { KEY_OF } from '../keys';
import type { ReadStore } from '../read-store';

/**
 * A range's days are summed from the runs themselves (migration 011: a run is its day's row): the
 * succeeded runs of the project completed on the days start..end, through runs_recent.
 */
const RUNS_OF_DAYS = `SELECT id, completed_at, facts FROM runs
  WHERE project = ${KEY_OF} AND completed_at >= ? AND completed_at < ? || 'U' AND status = 'succeeded'`;

/**
 * The project's succeeded runs completed on the days start..end (inclusive): id, completed_at, facts
 * (JSON text), one at a time: a year of a large project's facts is never held whole.
 */
export function runRowsOfDays(store: ReadStore, projectId: string, start: string, end: string): IterableIterator<[string, string, string]> {
  return store.iterateRaw<[string, string, string]>(RUNS_OF_DAYS, projectId, start, end);
}

/**
 * The succeeded runs of the days start..end whose dims number is among some (migration 015; a JSON
 * list), decided on runs_recent's entries and read from the rows.
 */
const RUNS_OF_DAYS_IN = `SELECT id, completed_at, facts FROM runs INDEXED BY runs_recent
  WHERE project = ${KEY_OF} AND dims IN (SELECT value FROM json_each(?)) AND completed_at >= ? AND completed_at < ? || 'U' AND status = 'succeeded'`;

/** runRowsOfDays of the runs whose dims number is in `dims` (a JSON list of numbers), one at a time. */
export function runRowsOfDaysIn(store: ReadStore, projectId: string, start: string, end: string, dims: string): IterableIterator<[string, string, string]> {
  return store.iterateRaw<[string, string, string]>(RUNS_OF_DAYS_IN, projectId, dims, start, end);
}

/** A project's combinations (migration 015: numbers are per project). */
const DIMS = `SELECT n, country, persona, model, surface FROM dims WHERE project = ${KEY_OF}`;

/** Every combination of dimensions the project's runs name, by its number: [country, persona, model, surface], null where a run names none. */
export function dimsByNumber(store: ReadStore, projectId: string): Map<number, [string | null, string | null, string | null, string | null]> {
  const orNull = (v: string): string | null => (v === '' ? null : v);
  return new Map(store.rows<[number, string, string, string, string]>(DIMS, projectId).map(([n, c, p, m, s]) => [n, [orNull(c), orNull(p), orNull(m), orNull(s)]]));
}

/**
 * The numbers of the project's combinations that match a filter (null: any value): a value the run
 * does not name (null) matches no filter. Values are compared letter case aside (lower-cased), as
 * /dimensions lists them: persona=founder matches runs of Founder. A project's runs name a few dozen.
 */
export function dimsMatching(store: ReadStore, projectId: string, country: readonly string[] | null, persona: readonly string[] | null, model: readonly string[] | null): number[] {
  const fold = (wanted: readonly string[] | null): Set<string> | null => wanted && new Set(wanted.map((w) => w.toLowerCase()));
  const [countries, personas, models] = [fold(country), fold(persona), fold(model)];
  const ok = (wanted: Set<string> | null, v: string | null): boolean => wanted === null || (v !== null && wanted.has(v.toLowerCase()));
  return [...dimsByNumber(store, projectId)].filter(([, [c, p, m]]) => ok(countries, c) && ok(personas, p) && ok(models, m)).map(([n]) => n);
}

/**
 * Succeeded runs, newest first, walking runs_recent (the run id orders runs of one instant): rows
 * are read lazily, so a caller that has enough stops the walk.
 */
const RECENT_RUNS = `SELECT a.id, a.completed_at, a.facts, a.event, a.dims FROM runs a WHERE a.project = ${KEY_OF} AND a.status = 'succeeded'`;
const NEWEST_FIRST = ' ORDER BY a.completed_at DESC, a.id';
/** Runs completed in [from, to): binds the first instant and the one after the last. */
const IN_TIMES = ' AND a.completed_at >= ? AND a.completed_at < ?';
/** Keyset: runs after a run in NEWEST_FIRST order, that run included. */
const FROM_RUN = ' AND (a.completed_at < ? OR (a.completed_at = ? AND a.id >= ?))';
const RECENT = {
  all: RECENT_RUNS + NEWEST_FIRST,
  from: RECENT_RUNS + FROM_RUN + NEWEST_FIRST,
  times: RECENT_RUNS + IN_TIMES + NEWEST_FIRST,
  timesFrom: RECENT_RUNS + IN_TIMES + FROM_RUN + NEWEST_FIRST,
};

/** dims: the run's dims number (migration 015), null when it names no dimension. */
export interface RecentRun { id: string; completed_at: string; facts: string; event: string; dims: number | null }

/**
 * The project's succeeded runs, newest first, one at a time: those completed in `times` [from, to)
 * when given, from the run `from` (completed_at, id; that run included) when given.
 */
export function recentRuns(store: ReadStore, projectId: string, times: readonly [string, string] | null, from: readonly [string, string] | null): IterableIterator<RecentRun> {
  const sql = times ? (from ? RECENT.timesFrom : RECENT.times) : (from ? RECENT.from : RECENT.all);
  return store.iterate<RecentRun>(sql, projectId, ...(times ?? []), ...(from ? [from[0], from[0], from[1]] : []));
}
