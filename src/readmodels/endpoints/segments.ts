import type { Segments } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { segmentsOf } from '../store';

type Segment = Segments[number];

export const endpoint: Endpoint = {
  name: 'segments',
  path: '/projects/:project_id/segments',
  summary: 'Active customer segments with their prompt counts, by name then id',
  scope: 'project',
  params: [],
  schema: 'segments',
  dependsOn: ['setup'],
  build(store, args): Segments {
    return segmentsOf<Segment>(store, args.projectId).map((r) => ({
      id: r.id, project_id: r.project_id, name: r.name, description: r.description, prompt_count: r.prompt_count,
      created_at: r.created_at, updated_at: r.updated_at,
    }));
  },
};
