import type { Competitors } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { competitorsOf } from '../store';

type Competitor = Competitors[number];
/** aliases is stored as the JSON text of the event's array. */
type CompetitorRow = Omit<Competitor, 'aliases'> & { aliases: string };

export const endpoint: Endpoint = {
  name: 'competitors',
  path: '/projects/:project_id/competitors',
  summary: 'Tracked competitors that are not deleted, by name then id',
  scope: 'project',
  params: [],
  schema: 'competitors',
  dependsOn: ['setup'],
  build(store, args): Competitors {
    return competitorsOf<CompetitorRow>(store, args.projectId).map((r) => ({
      id: r.id, project_id: r.project_id, name: r.name, domain: r.domain, aliases: JSON.parse(r.aliases) as string[],
      created_at: r.created_at, updated_at: r.updated_at,
    }));
  },
};
