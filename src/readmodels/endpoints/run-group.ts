import type { RunGroup } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { RUN_GROUP, toRunGroup, type RunGroupSummary } from './runs';

/**
 * The prompt runs of one group (index prompt_runs_by_group), failed ones included; only those of the group's own project.
 * `+project_id` keeps the planner off prompt_runs_recent: without statistics it would walk every run of the
 * project (a year of history) to find one group's runs.
 */
const PROMPT_RUNS = `SELECT id, prompt_id, engine_id, status, completed_at, brand_position, mention_count, citation_count
  FROM prompt_runs
  WHERE run_group_id = ? AND +project_id = ?
  ORDER BY completed_at, id`;

type PromptRun = RunGroup['prompt_runs'][number];
type PromptRunRow = Omit<PromptRun, 'brand_mentioned'>;

export const endpoint: Endpoint = {
  name: 'run-group',
  path: '/runs/:run_group_id',
  summary: 'A run group with its prompt runs',
  scope: 'run_group',
  query: {},
  schema: 'run-group',
  build(store, args): RunGroup {
    const group = store.get<RunGroupSummary>(RUN_GROUP, args.runGroupId);
    // Unreachable after the scope check, which only admits started groups of visible projects.
    if (!group) throw new Error(`run group ${args.runGroupId} is not visible`);
    const promptRuns = store.all<PromptRunRow>(PROMPT_RUNS, args.runGroupId, args.projectId).map((r) => ({
      id: r.id, prompt_id: r.prompt_id, engine_id: r.engine_id, status: r.status, completed_at: r.completed_at,
      brand_mentioned: r.brand_position !== null, brand_position: r.brand_position,
      mention_count: r.mention_count, citation_count: r.citation_count,
    }));
    return { ...toRunGroup(group), prompt_runs: promptRuns };
  },
};
