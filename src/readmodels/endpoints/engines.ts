import type { Engines } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { trackedEngines } from '../store';

type Engine = Engines[number];

export const endpoint: Endpoint = {
  name: 'engines',
  path: '/projects/:project_id/engines',
  summary: 'Engines (models) tracked for the project, by name then id',
  scope: 'project',
  params: [],
  schema: 'engines',
  dependsOn: ['setup', 'engines'],
  build(store, args): Engines {
    return trackedEngines<Engine>(store, args.projectId).map((r) => ({
      id: r.id, name: r.name, provider: r.provider, model: r.model, tracked_since: r.tracked_since,
    }));
  },
};
