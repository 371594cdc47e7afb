import type { Statement } from 'better-sqlite3';
import type { EventType } from '../events';
import type { Db } from './db';
import type { ReadStore } from './read-store';
import { CHANGE_KINDS, kindScope, type ChangeKind, type ChangeSet } from './versions';

/**
 * The change log (migration 006): per project, the commits that changed its read models, for the
 * change feed (GET /projects/{id}/changes), and each project's data-as-of. Written by the projector
 * in the transaction of the facts; read by the serving side with the functions below.
 */

/**
 * Versions kept per project. A feed client away for fewer changes than this resumes exactly;
 * one away longer gets a `reset` (refetch everything). ~100 bytes a row.
 */
export const CHANGE_LOG_KEEP = 1000;

/** Which kind of change an event is (see ChangeKind). Access and key events change no project. */
export function changeKindOf(type: EventType): ChangeKind {
  switch (type) {
    case 'prompt_run.completed':
    case 'run_group.started':
    case 'run_group.completed':
      return 'runs';
    case 'forum_post.discovered':
    case 'forum_post.updated':
      return 'forum';
    case 'project.upserted':
    case 'project.deleted':
      return 'project';
    case 'engine.upserted':
      return 'engines';
    default:
      return 'setup';
  }
}

const kindsText = (kinds: Iterable<ChangeKind>): string => [...kinds].sort().join(',');

/**
 * The writer's side: replaces the plain data_version bump for project scopes. Per changed project a
 * batch costs three statements on one primary key each (bump, log row, prune); a batch that changed
 * an engine (rare: every project shows engine names) logs a row for every project.
 */
export class ChangeLogWriter {
  private readonly stmts: {
    bumpProject: Statement;
    bumpKind: Statement;
    enginesVersion: Statement;
    log: Statement;
    prune: Statement;
    logAll: Statement;
    pruneAll: Statement;
    markMonth: Statement;
  };

  constructor(db: Db) {
    this.stmts = {
      // data_as_of only moves forward: a late event with an older occurred_at leaves it.
      bumpProject: db.prepare(`INSERT INTO data_versions (scope, version, updated_at, data_as_of) VALUES (?, 1, ?, ?)
        ON CONFLICT (scope) DO UPDATE SET version = version + 1, updated_at = excluded.updated_at,
          data_as_of = max(coalesce(data_as_of, ''), excluded.data_as_of)
        RETURNING version, data_as_of`),
      bumpKind: db.prepare(`INSERT INTO data_versions (scope, version, updated_at) VALUES (?, 1, ?)
        ON CONFLICT (scope) DO UPDATE SET version = version + 1, updated_at = excluded.updated_at`),
      enginesVersion: db.prepare("SELECT version FROM data_versions WHERE scope = 'engines'").pluck(),
      log: db.prepare('INSERT OR REPLACE INTO project_changes (project_id, version, kinds, data_as_of, committed_at) VALUES (?, ?, ?, ?, ?)'),
      prune: db.prepare('DELETE FROM project_changes WHERE project_id = ? AND version <= ?'),
      // Every project the batch did not change itself (those are bound as a JSON array): an engine changed.
      logAll: db.prepare(`INSERT OR IGNORE INTO project_changes (project_id, version, kinds, data_as_of, committed_at)
        SELECT substr(scope, 9), version + ?, 'engines', data_as_of, ? FROM data_versions
        WHERE scope LIKE 'project:%' AND substr(scope, 9) NOT IN (SELECT value FROM json_each(?))`),
      pruneAll: db.prepare(`DELETE FROM project_changes WHERE version <= ? - ? +
        (SELECT d.version FROM data_versions d WHERE d.scope = 'project:' || project_changes.project_id)`),
      markMonth: db.prepare(`INSERT INTO changed_months (project_id, month, version) VALUES (?, ?, ?)
        ON CONFLICT (project_id, month) DO UPDATE SET version = excluded.version`),
    };
  }

  /**
   * Bumps the data_version of every project `changes` names, with its data-as-of, and of each kind
   * of change it had (kindScope), and logs the commit for each. Call after the other scopes were bumped (the engines version is part of each
   * logged version), inside the batch's transaction.
   */
  record(changes: ChangeSet, now: string): void {
    const engineChanged = changes.shared.has('engines');
    const engines = (this.stmts.enginesVersion.get() as number | undefined) ?? 0;
    for (const [projectId, change] of changes.projects) {
      const row = this.stmts.bumpProject.get(`project:${projectId}`, now, change.newest) as { version: number; data_as_of: string };
      const version = row.version + engines;
      // The months whose runs changed, at the project's own version (what an export's manifest records).
      for (const month of change.months) this.stmts.markMonth.run(projectId, month, row.version);
      // Each kind's own counter (kindScope): what depends on other kinds only stays current.
      for (const kind of change.kinds) if (kind !== 'engines') this.stmts.bumpKind.run(kindScope(kind, projectId), now);
      if (engineChanged) change.kinds.add('engines');
      this.stmts.log.run(projectId, version, kindsText(change.kinds), row.data_as_of, now);
      this.stmts.prune.run(projectId, version - CHANGE_LOG_KEEP);
    }
    if (engineChanged) {
      this.stmts.logAll.run(engines, now, JSON.stringify([...changes.projects.keys()]));
      this.stmts.pruneAll.run(engines, CHANGE_LOG_KEEP);
    }
  }
}

/** One logged commit, as the feed sends it. */
export interface LoggedChange {
  version: number;
  kinds: ChangeKind[];
  data_as_of: string | null;
}

const SCOPE_VERSION = 'SELECT version, updated_at FROM data_versions WHERE scope = ?';
const DATA_AS_OF = "SELECT data_as_of FROM data_versions WHERE scope = 'project:' || ?";
const CHANGES_AFTER = `SELECT version, kinds, data_as_of FROM project_changes
  WHERE project_id = ? AND version > ? ORDER BY version LIMIT ?`;
const OLDEST_CHANGE = 'SELECT min(version) FROM project_changes WHERE project_id = ?';

/**
 * A project's data versions read in one statement (one snapshot): its data_version (the 'project:<id>'
 * scope plus the shared 'engines', what X-Data-Version says), the newest event time applied, and the
 * version of each kind of change (kindScope; 'engines' is the shared scope's). A body built from a
 * snapshot whose kinds it depends on have the same versions as now's holds the same bytes as now.
 */
export interface ProjectVersions {
  version: number;
  updated_at: string;
  data_as_of: string | null;
  kinds: Record<ChangeKind, number>;
}

const NEVER_UPDATED = new Date(0).toISOString();
const PROJECT_VERSIONS = `SELECT scope, version, updated_at, data_as_of FROM data_versions
  WHERE scope IN (@project, 'engines', ${CHANGE_KINDS.filter((k) => k !== 'engines').map((k) => `'kind:${k}:' || @id`).join(', ')})`;

export function projectVersions(store: ReadStore, projectId: string): ProjectVersions {
  const rows = store.all<{ scope: string; version: number; updated_at: string; data_as_of: string | null }>(PROJECT_VERSIONS, { project: `project:${projectId}`, id: projectId });
  const v: ProjectVersions = { version: 0, updated_at: NEVER_UPDATED, data_as_of: null, kinds: { engines: 0, forum: 0, project: 0, runs: 0, setup: 0 } };
  for (const r of rows) {
    if (r.scope === 'engines') v.kinds.engines = r.version;
    else if (!r.scope.startsWith('project:')) {
      v.kinds[r.scope.slice(5, r.scope.indexOf(':', 5)) as ChangeKind] = r.version;
      continue;
    } else v.data_as_of = r.data_as_of;
    v.version += r.version;
    if (r.updated_at > v.updated_at) v.updated_at = r.updated_at;
  }
  return v;
}

/** The version of what depends on `kinds` only: the sum of their counters (each only grows, so equal sums are equal counters). */
export function inputsVersion(v: ProjectVersions, kinds: readonly ChangeKind[]): number {
  let sum = 0;
  for (const k of kinds) sum += v.kinds[k];
  return sum;
}

/** One scope's data version and when it moved; undefined before any commit touched the scope. */
export function scopeVersion(store: ReadStore, scope: string): { version: number; updated_at: string } | undefined {
  return store.get<{ version: number; updated_at: string }>(SCOPE_VERSION, scope);
}

/** The newest event time applied to the project (RFC 3339, UTC), or null when none was. */
export function dataAsOf(store: ReadStore, projectId: string): string | null {
  return store.value<string | null>(DATA_AS_OF, projectId) ?? null;
}

/** The project's logged commits after `version`, oldest first, at most `limit`. */
export function changesAfter(store: ReadStore, projectId: string, version: number, limit: number): LoggedChange[] {
  return store.all<{ version: number; kinds: string; data_as_of: string | null }>(CHANGES_AFTER, projectId, version, limit)
    .map((r) => ({ version: r.version, kinds: r.kinds.split(',') as ChangeKind[], data_as_of: r.data_as_of }));
}

/** The oldest version the log still holds for the project; null when it holds none. */
export function oldestLoggedVersion(store: ReadStore, projectId: string): number | null {
  return store.value<number | null>(OLDEST_CHANGE, projectId) ?? null;
}
