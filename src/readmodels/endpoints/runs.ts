import type { Runs } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import type { ReadArgs } from '../args';
import type { ReadStore } from '../store';
import { fetchCount, keysetPage, type Page } from '../paging';

export type RunGroupSummary = Runs[number];

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

/** One started run group by id (for /runs/:run_group_id). */
export const RUN_GROUP = `SELECT ${GROUP_COLUMNS}
  WHERE g.id = ? AND g.started_at IS NOT NULL`;

/** The fields of a run group, in schema order, from a row of GROUP_COLUMNS. */
export function toRunGroup(r: RunGroupSummary): RunGroupSummary {
  return {
    id: r.id, project_id: r.project_id, status: r.status, trigger: r.trigger, started_at: r.started_at,
    completed_at: r.completed_at, prompt_run_count: r.prompt_run_count, succeeded_count: r.succeeded_count,
    failed_count: r.failed_count,
  };
}

export const endpoint: Endpoint = {
  name: 'runs',
  path: '/projects/:project_id/runs',
  summary: 'Run groups of the project that have started, newest first',
  scope: 'project',
  // No limit in v1: without one the list is whole (the v1 bytes); with one it pages (issue 12).
  params: ['limit', 'cursor'],
  schema: 'runs',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): Runs {
    return readPage(store, args).items;
  },
  page: readPage,
};

/** The page after the cursor: `limit` groups (0: all), newest started first. */
function readPage(store: ReadStore, args: ReadArgs): Page<RunGroupSummary> {
  const after = args.cursor?.after;
  const rows = after
    ? store.all<RunGroupSummary>(RUNS + AFTER + NEWEST_FIRST, args.projectId, String(after[0]), String(after[0]), String(after[1]), fetchCount(args.limit))
    : store.all<RunGroupSummary>(RUNS + NEWEST_FIRST, args.projectId, fetchCount(args.limit));
  return keysetPage(rows.map(toRunGroup), args.limit, (g) => [g.started_at, g.id]);
}
