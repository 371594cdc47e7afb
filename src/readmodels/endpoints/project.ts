import type { Project } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { projectRow } from '../store';
import { toProject, type ProjectRow } from './projects';


export const endpoint: Endpoint = {
  name: 'project',
  path: '/projects/:project_id',
  summary: 'One project visible to the key\'s account',
  scope: 'project',
  params: [],
  schema: 'project',
  dependsOn: ['project'],
  build(store, args): Project {
    // The HTTP layer has already checked that the key's account sees this project.
    const row = projectRow<ProjectRow>(store, args.projectId);
    // Unreachable after the scope check; a clear error beats an invalid body.
    if (!row) throw new Error(`project ${args.projectId} is not visible`);
    return toProject(row);
  },
};
