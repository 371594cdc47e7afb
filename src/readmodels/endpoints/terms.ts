import type { Terms } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { termsOf } from '../store';

type Term = Terms[number];

export const endpoint: Endpoint = {
  name: 'terms',
  path: '/projects/:project_id/terms',
  summary: 'Tracked brand and domain terms that are not deleted, by value then id',
  scope: 'project',
  params: [],
  schema: 'terms',
  dependsOn: ['setup'],
  build(store, args): Terms {
    return termsOf<Term>(store, args.projectId).map((r) => ({
      id: r.id, project_id: r.project_id, value: r.value, kind: r.kind, created_at: r.created_at,
    }));
  },
};
