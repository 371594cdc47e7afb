// GET /runs/:run_group_id/results — every prompt run of a group with its mentions and citations.
import type { RunResults } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import type { PromptRunCompleted } from '../../events';
import { briefFacts, groupRunsWithEvents, promptTexts, storedCitations, storedMentions } from '../store';

/**
 * The runs of ONE run group, read by index (store/reads/run-groups.ts), each with the mentions and
 * citations stored on it, only the runs and prompts of the group's own project (upstream ids can disagree;
 * another project's run or prompt must never show here). The run of a deleted prompt shows its prompt_id
 * with a null prompt_text: a deletion keeps no data (docs/decisions.md), as for an unknown prompt.
 */
export const endpoint: Endpoint = {
  name: 'run-results',
  path: '/runs/:run_group_id/results',
  summary: 'Every prompt run of a run group with its mentions and citations',
  scope: 'run_group',
  params: [],
  schema: 'run-results',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): RunResults {
    const rows = groupRunsWithEvents(store, args.runGroupId, args.projectId);
    if (rows.length === 0) return [];
    const texts = promptTexts(store, args.projectId);
    return rows.map(([id, status, completedAt, json, event]) => {
      const run = (JSON.parse(event) as { data: PromptRunCompleted }).data;
      const { engineId, promptId, brandPosition, brandSentiment } = briefFacts(json);
      return {
        prompt_run_id: id, prompt_id: promptId, prompt_text: texts.get(promptId) ?? null, engine_id: engineId,
        status, completed_at: completedAt, response_excerpt: run.response_excerpt ?? null,
        brand_mentioned: brandPosition !== null, brand_position: brandPosition, sentiment: brandSentiment,
        // As the analyser reported them, in its order, in the response's item shape (absent fields null).
        mentions: storedMentions(run.mentions),
        citations: storedCitations(run.citations),
      };
    });
  },
};

/** The same body under its project's path (run-group.ts inProject says why). */
export const inProject: Endpoint = {
  ...endpoint, name: 'project-run-results', path: '/projects/:project_id/runs/:run_group_id/results',
  summary: 'Every prompt run of a run group of the project with its mentions and citations',
};
