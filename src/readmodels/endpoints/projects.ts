import type { Project, Projects } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { visibleProjects } from '../store';

/** A projects row as stored: the Project columns (nullable only until an upsert arrives). */
export type ProjectRow = Project;

/** The seed's Project fields, picked from a row that also carries bookkeeping columns. */
export function toProject(r: ProjectRow): Project {
  return {
    id: r.id, company_id: r.company_id, name: r.name, domain: r.domain, description: r.description,
    category_summary: r.category_summary, status: r.status, created_at: r.created_at, updated_at: r.updated_at,
  };
}

export const endpoint: Endpoint = {
  name: 'projects',
  path: '/projects',
  summary: 'Projects visible to the key\'s account, by name then id',
  scope: 'account',
  params: [],
  schema: 'projects',
  dependsOn: ['project'],
  build(store, args): Projects {
    return visibleProjects<ProjectRow>(store, args.accountId).map(toProject);
  },
};
