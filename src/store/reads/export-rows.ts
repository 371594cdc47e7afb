// What `visibility-api export` reads (src/export): the projects, a project's runs of a span of time
// with their dimensions, the months that hold runs, and the months whose runs changed after a version
// (migration 017). An export reads them all inside one held read transaction (ReadStore.hold).
import type { ReadStore } from '../read-store';
import { KEY_OF } from '../keys';

/** The projects an export can write: every project not deleted, by id. */
export function liveProjectIds(store: ReadStore): string[] {
  return store.column<string>('SELECT id FROM projects WHERE deleted = 0 ORDER BY id');
}

/** A stored run as an export writes it: the run's columns, its facts (migration 013) and event (JSON texts), and its dimensions. */
export type ExportRunRow = [
  id: string, run_group_id: string, status: string, completed_at: string, facts: string, event: string,
  country: string | null, persona: string | null, model: string | null, surface: string | null,
];

// A page starts where the last one ended: at its last completion time, past the ids up to its last
// one there. The time bound alone narrows the index range (runs_recent), so a page costs its rows.
const RUNS = `SELECT r.id, g.id, r.status, r.completed_at, r.facts, r.event,
    nullif(d.country, ''), nullif(d.persona, ''), nullif(d.model, ''), nullif(d.surface, '')
  FROM runs r JOIN keys g ON g.n = r.run_group LEFT JOIN dims d ON d.n = r.dims
  WHERE r.project = ${KEY_OF} AND r.completed_at >= ? AND r.completed_at < ? AND NOT (r.completed_at = ? AND r.id <= ?)
  ORDER BY r.completed_at, r.id LIMIT ?`;

/**
 * Runs a page holds: a page's rows (events included) are what an export holds of a month's runs. 200
 * rather than 500: peak RSS 250 against 264 MB exporting a 1,000-prompt x 8-engine project.
 */
export const EXPORT_RUN_PAGE = 200;

/**
 * The project's runs (succeeded and failed) completed in [from, to) (UTC ISO instants), oldest first
 * then by id, a page at a time: a month of a large project is never held whole. Read inside a held
 * read transaction, the pages are one snapshot.
 */
export function* runsCompletedIn(store: ReadStore, projectId: string, from: string, to: string, pageSize = EXPORT_RUN_PAGE): Generator<ExportRunRow[]> {
  let at = from;
  let after = '';
  for (;;) {
    const page = store.rows<ExportRunRow>(RUNS, projectId, at, to, at, after, pageSize);
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
    const last = page.at(-1)!;
    at = last[3];
    after = last[0];
  }
}

const RUN_MONTHS = `SELECT DISTINCT substr(completed_at, 1, 7) FROM runs
  WHERE project = ${KEY_OF} AND completed_at >= ? AND completed_at < ? ORDER BY 1`;

/** The months ('YYYY-MM') in which the project has runs completed in [from, to): read from the runs' day index only. */
export function runMonths(store: ReadStore, projectId: string, from: string, to: string): string[] {
  return store.column<string>(RUN_MONTHS, projectId, from, to);
}

/** The months whose runs changed after the project's data version `version` (its 'project:<id>' scope), oldest first. */
export function monthsChangedAfter(store: ReadStore, projectId: string, version: number): string[] {
  return store.column<string>('SELECT month FROM changed_months WHERE project_id = ? AND version > ? ORDER BY month', projectId, version);
}

/** The schema version the file is at (PRAGMA user_version). */
export function schemaVersionOf(store: ReadStore): number {
  return store.value<number>('PRAGMA user_version') ?? 0;
}
