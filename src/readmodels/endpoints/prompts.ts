import type { Prompts } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { promptsOf } from '../store';

type Prompt = Prompts[number];
/** segment_ids is stored as the JSON text of the event's array (sorted); active as 0/1. */
type PromptRow = Omit<Prompt, 'segment_ids' | 'active'> & { segment_ids: string; active: number };

export const endpoint: Endpoint = {
  name: 'prompts',
  path: '/projects/:project_id/prompts',
  summary: 'Tracked prompts that are not deleted, by text then id',
  scope: 'project',
  params: [],
  schema: 'prompts',
  dependsOn: ['setup'],
  build(store, args): Prompts {
    return promptsOf<PromptRow>(store, args.projectId).map((r) => ({
      id: r.id, project_id: r.project_id, text: r.text, segment_ids: JSON.parse(r.segment_ids) as string[],
      active: r.active === 1, created_at: r.created_at, updated_at: r.updated_at,
    }));
  },
};
