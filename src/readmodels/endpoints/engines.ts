import type { Engines } from '../bodies.gen';
import type { Endpoint } from '../endpoint';

/**
 * Engines the project tracks now. `since` is the time of the winning tracked event, so an engine
 * untracked and tracked again reports the newer start. An engine not upserted yet does not show.
 */
const ENGINES = `SELECT e.id, e.name, e.provider, e.model, pe.since AS tracked_since
  FROM project_engines pe JOIN engines e ON e.id = pe.engine_id
  WHERE pe.project_id = ? AND pe.tracked = 1
  ORDER BY e.name, e.id`;

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
    return store.all<Engine>(ENGINES, args.projectId).map((r) => ({
      id: r.id, name: r.name, provider: r.provider, model: r.model, tracked_since: r.tracked_since,
    }));
  },
};
