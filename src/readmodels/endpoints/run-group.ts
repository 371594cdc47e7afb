import type { RunGroup } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { briefFacts } from '../../store';
import { KEY_OF } from '../formulas';
import { RUN_GROUP, toRunGroup, type RunGroupSummary } from './runs';

/**
 * The prompt runs of one group (index runs_by_group), failed ones included; only those of the group's own project.
 * `+project` keeps the planner off runs_recent: without statistics it would walk every run of the
 * project (a year of history) to find one group's runs.
 */
export const GROUP_RUNS = (columns: string): string => `SELECT ${columns} FROM runs
  WHERE run_group = ${KEY_OF} AND +project = ${KEY_OF}
  ORDER BY completed_at, id`;
const PROMPT_RUNS = GROUP_RUNS('id, status, completed_at, facts');

export const endpoint: Endpoint = {
  name: 'run-group',
  path: '/runs/:run_group_id',
  summary: 'A run group with its prompt runs',
  scope: 'run_group',
  params: [],
  schema: 'run-group',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): RunGroup {
    const group = store.get<RunGroupSummary>(RUN_GROUP, args.runGroupId);
    // Unreachable after the scope check, which only admits started groups of visible projects.
    if (!group) throw new Error(`run group ${args.runGroupId} is not visible`);
    const promptRuns = store.rows<[string, 'succeeded' | 'failed', string, string]>(PROMPT_RUNS, args.runGroupId, args.projectId).map(([id, status, completedAt, json]) => {
      const [engineId, promptId, brandPosition, , mentionCount, citationCount] = briefFacts(json);
      return {
        id, prompt_id: promptId, engine_id: engineId, status, completed_at: completedAt,
        brand_mentioned: brandPosition !== null, brand_position: brandPosition, mention_count: mentionCount, citation_count: citationCount,
      };
    });
    return { ...toRunGroup(group), prompt_runs: promptRuns };
  },
};
