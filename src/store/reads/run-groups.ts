// Run groups and the prompt runs of one group.
import { KEY_OF } from '../keys';
import type { ReadStore } from '../read-store';

/**
 * A started run group as the API shows it. status stays 'running' until run_group.completed has
 * arrived (c_at is its version); the counts come from agg_run_group, 0 before any prompt run, and
 * count only runs of the group's own project (a run naming another project is that project's).
 */
const GROUP_COLUMNS = `g.id, g.project_id,
    CASE WHEN g.c_at IS NULL THEN 'running' ELSE g.status END AS status,
    g.trigger, g.started_at, CASE WHEN g.c_at IS NULL THEN NULL ELSE g.completed_at END AS completed_at,
    coalesce(a.prompt_run_count, 0) AS prompt_run_count,
    coalesce(a.succeeded_count, 0) AS succeeded_count,
    coalesce(a.failed_count, 0) AS failed_count
  FROM run_groups g LEFT JOIN agg_run_group a ON a.run_group_id = g.id AND a.project_id = g.project_id`;

const RUNS = `SELECT ${GROUP_COLUMNS}
  WHERE g.project_id = ? AND g.started_at IS NOT NULL`;
/** Keyset: the groups after the previous page's last one in NEWEST_FIRST order (started_at, then id, is total). */
const AFTER = ' AND (g.started_at < ? OR (g.started_at = ? AND g.id > ?))';
const NEWEST_FIRST = ' ORDER BY g.started_at DESC, g.id LIMIT ?';
const FIRST = RUNS + NEWEST_FIRST;
const NEXT = RUNS + AFTER + NEWEST_FIRST;

/** The first `count` started groups of the project (-1: all), newest started first, after a group's (started_at, id) when one is given. */
export function runGroupRows<T>(store: ReadStore, projectId: string, after: readonly [string, string] | null, count: number): T[] {
  return after ? store.all<T>(NEXT, projectId, after[0], after[0], after[1], count) : store.all<T>(FIRST, projectId, count);
}

/** One started run group by id (for /runs/:run_group_id). */
const RUN_GROUP = `SELECT ${GROUP_COLUMNS}
  WHERE g.id = ? AND g.started_at IS NOT NULL`;

export function runGroupRow<T>(store: ReadStore, runGroupId: string): T | undefined {
  return store.get<T>(RUN_GROUP, runGroupId);
}

/**
 * The prompt runs of one group (index runs_by_group), failed ones included; only those of the group's own project.
 * `+project` keeps the planner off runs_recent: without statistics it would walk every run of the
 * project (a year of history) to find one group's runs.
 */
const GROUP_RUNS = (columns: string): string => `SELECT ${columns} FROM runs
  WHERE run_group = ${KEY_OF} AND +project = ${KEY_OF}
  ORDER BY completed_at, id`;
const PROMPT_RUNS = GROUP_RUNS('id, status, completed_at, facts');
const RESULTS = GROUP_RUNS('id, status, completed_at, facts, event');

export type RunStatus = 'succeeded' | 'failed';

/** A group's runs of its project in completion order: id, status, completed_at and the run's facts (JSON text). */
export function groupRuns(store: ReadStore, runGroupId: string, projectId: string): Array<[string, RunStatus, string, string]> {
  return store.rows<[string, RunStatus, string, string]>(PROMPT_RUNS, runGroupId, projectId);
}

/** groupRuns with each run's event (JSON text) too: its mentions and citations as the analyser reported them. */
export function groupRunsWithEvents(store: ReadStore, runGroupId: string, projectId: string): Array<[string, RunStatus, string, string, string]> {
  return store.rows<[string, RunStatus, string, string, string]>(RESULTS, runGroupId, projectId);
}
