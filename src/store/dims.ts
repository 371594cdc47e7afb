import type { Db } from './db';

/** The optional dimensions of a run (prompt_run.completed): null where the run names none. */
export interface RunDims {
  country: string | null;
  persona: string | null;
  model: string | null;
  surface: string | null;
}

/**
 * A run's dimensions as one key (a JSON array of the four, null where absent), or null when the run
 * names none: what a precompute thread hands the writer, one repeated string per combination.
 */
export function dimsKey(run: { country?: string | null; persona?: string | null; model?: string | null; surface?: string | null }): string | null {
  const c = run.country ?? null;
  const p = run.persona ?? null;
  const m = run.model ?? null;
  const s = run.surface ?? null;
  return c === null && p === null && m === null && s === null ? null : JSON.stringify([c, p, m, s]);
}

/**
 * The small number of each combination of dimensions a run names (migration 015: `dims`), so that a
 * run's row and its day index entry hold one integer. A number is given when a combination is first
 * seen, per project; the writer keeps the ones it knows in memory (a project names a few dozen), so a run costs a
 * map lookup, not a query.
 */
export class Dims {
  private readonly known = new Map<string, number>();
  private readonly find;
  private readonly add;

  constructor(db: Db) {
    this.find = db.prepare('SELECT n FROM dims WHERE project = ? AND country = ? AND persona = ? AND model = ? AND surface = ?').pluck();
    this.add = db.prepare('INSERT INTO dims (project, country, persona, model, surface) VALUES (?, ?, ?, ?, ?)');
  }

  /**
   * The number of a dimensions key (dimsKey) in a project (its keys.n), given now if it has none
   * (inside the writer's transaction); null for none. Numbers are per project: what one project's runs
   * name never lengthens another's filters.
   */
  numberOf(project: number, key: string | null | undefined): number | null {
    if (key === null || key === undefined) return null;
    const known = `${project} ${key}`;
    let n = this.known.get(known);
    if (n !== undefined) return n;
    // '' for a value the run does not name: UNIQUE treats NULLs as distinct.
    const values = (JSON.parse(key) as Array<string | null>).map((v) => v ?? '');
    n = (this.find.get(project, ...values) as number | undefined) ?? Number(this.add.run(project, ...values).lastInsertRowid);
    if (this.known.size >= DIMS_KEPT) this.known.clear();
    this.known.set(known, n);
    return n;
  }

  /** The transaction (or an event's savepoint) failed: numbers it gave are not in the table any more. */
  fail(): void {
    this.known.clear();
  }
}

/** Combinations kept in memory (countries x personas x models x surfaces of all projects). */
const DIMS_KEPT = 10_000;
