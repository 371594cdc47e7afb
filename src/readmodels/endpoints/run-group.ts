import type { RunGroup } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { briefFacts, groupRuns, runGroupRow } from '../store';
import { toRunGroup, type RunGroupSummary } from './runs';

export const endpoint: Endpoint = {
  name: 'run-group',
  path: '/runs/:run_group_id',
  summary: 'A run group with its prompt runs',
  scope: 'run_group',
  params: [],
  schema: 'run-group',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): RunGroup {
    const group = runGroupRow<RunGroupSummary>(store, args.runGroupId);
    // Unreachable after the scope check, which only admits started groups of visible projects.
    if (!group) throw new Error(`run group ${args.runGroupId} is not visible`);
    const promptRuns = groupRuns(store, args.runGroupId, args.projectId).map(([id, status, completedAt, json]) => {
      const { engineId, promptId, brandPosition, mentionCount, citationCount } = briefFacts(json);
      return {
        id, prompt_id: promptId, engine_id: engineId, status, completed_at: completedAt,
        brand_mentioned: brandPosition !== null, brand_position: brandPosition, mention_count: mentionCount, citation_count: citationCount,
      };
    });
    return { ...toRunGroup(group), prompt_runs: promptRuns };
  },
};

/**
 * The same body under its project's path: a router that sends each project to its shard (a sharded
 * fleet, docs/scale-out.md) routes it in one hop. A group of another project is a 404.
 */
export const inProject: Endpoint = {
  ...endpoint, name: 'project-run-group', path: '/projects/:project_id/runs/:run_group_id', summary: 'A run group of the project with its prompt runs',
};
