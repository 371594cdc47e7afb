import type { Segments } from '../bodies.gen';
import type { Endpoint } from '../endpoint';

/**
 * Active, non-deleted segments with the number of non-deleted prompts (active or not) of the same
 * project that list them. The prompts' own segment_ids array is the source of truth, read with
 * json_each; DISTINCT guards against an id listed twice in one prompt.
 */
const SEGMENTS = `SELECT s.id, s.project_id, s.name, s.description, s.created_at, s.updated_at,
    (SELECT count(DISTINCT p.id) FROM prompts p, json_each(p.segment_ids) j
      WHERE p.project_id = s.project_id AND p.deleted = 0 AND j.value = s.id) AS prompt_count
  FROM segments s
  WHERE s.project_id = ? AND s.active = 1 AND s.deleted = 0
  ORDER BY s.name, s.id`;

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
    return store.all<Segment>(SEGMENTS, args.projectId).map((r) => ({
      id: r.id, project_id: r.project_id, name: r.name, description: r.description, prompt_count: r.prompt_count,
      created_at: r.created_at, updated_at: r.updated_at,
    }));
  },
};
