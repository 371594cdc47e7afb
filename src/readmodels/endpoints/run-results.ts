// GET /runs/:run_group_id/results — every prompt run of a group with its mentions and citations.
import type { RunResults } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import type { PromptRunCompleted } from '../../events';
import { storedCitations, storedMentions } from '../../store/contributions';

/**
 * The runs of ONE run group, read by index (prompt_runs_by_group), each with the mentions and
 * citations stored on it, only the runs and prompts of the group's own project (upstream ids can disagree;
 * another project's run or prompt must never show here). The run of a deleted prompt shows its prompt_id
 * with a null prompt_text: a deletion keeps no data (docs/decisions.md), as for an unknown prompt.
 * `+r.project_id` keeps the planner on the group's index: on project_id it would walk the project's whole history.
 */
const RESULTS = `SELECT r.id AS prompt_run_id, r.prompt_id, p.text AS prompt_text, r.engine_id, r.status, r.completed_at,
    r.brand_position, r.brand_sentiment AS sentiment, r.event
  FROM prompt_runs r LEFT JOIN prompts p ON p.id = r.prompt_id AND p.project_id = r.project_id
  WHERE r.run_group_id = ? AND +r.project_id = ?
  ORDER BY r.completed_at, r.id`;

type Result = RunResults[number];
type ResultRow = Omit<Result, 'brand_mentioned' | 'mentions' | 'citations' | 'response_excerpt'> & { event: string };

export const endpoint: Endpoint = {
  name: 'run-results',
  path: '/runs/:run_group_id/results',
  summary: 'Every prompt run of a run group with its mentions and citations',
  scope: 'run_group',
  query: {},
  schema: 'run-results',
  build(store, args): RunResults {
    return store.all<ResultRow>(RESULTS, args.runGroupId, args.projectId).map((r) => {
      const run = (JSON.parse(r.event) as { data: PromptRunCompleted }).data;
      return {
        prompt_run_id: r.prompt_run_id, prompt_id: r.prompt_id, prompt_text: r.prompt_text, engine_id: r.engine_id,
        status: r.status, completed_at: r.completed_at, response_excerpt: run.response_excerpt ?? null,
        brand_mentioned: r.brand_position !== null, brand_position: r.brand_position, sentiment: r.sentiment,
        // As the analyser reported them, in its order, in the response's item shape (absent fields null).
        mentions: storedMentions(run.mentions),
        citations: storedCitations(run.citations),
      };
    });
  },
};
