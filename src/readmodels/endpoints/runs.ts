import type { Runs } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import type { ReadArgs } from '../args';
import { runGroupRows, type ReadStore } from '../store';
import { fetchCount, keysetPage, type Page } from '../paging';

export type RunGroupSummary = Runs[number];

/** The fields of a run group, in schema order, from a row of the store's (store/reads/run-groups.ts). */
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
  // No limit in v1: without one the list is whole (the v1 bytes); with one it pages.
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
  const rows = runGroupRows<RunGroupSummary>(store, args.projectId, after ? [String(after[0]), String(after[1])] : null, fetchCount(args.limit));
  return keysetPage(rows.map(toRunGroup), args.limit, (g) => [g.started_at, g.id]);
}
