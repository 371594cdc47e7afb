// GET /projects/:project_id/forum/opportunities — every forum post the crawler found for the project.
import type { Endpoint } from '../endpoint';
import type { ForumOpportunities } from '../bodies.gen';
import { forumPosts } from '../forum';

export const endpoint: Endpoint = {
  name: 'forum-opportunities',
  path: '/projects/:project_id/forum/opportunities',
  summary: 'All forum opportunities, newest discovered first',
  scope: 'project',
  query: {},
  schema: 'forum-opportunities',
  build(store, args): ForumOpportunities {
    return forumPosts(store, args.projectId);
  },
};
