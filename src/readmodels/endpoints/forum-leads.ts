// GET /projects/:project_id/forum/leads — forum posts worth answering now.
import type { Endpoint } from '../endpoint';
import type { ForumLeads } from '../bodies.gen';
import { compareStrings } from '../formulas';
import { forumPosts, isOpenLead, type ForumPost } from '../forum';

/** Most relevant first; then the newest; then by id, so the order is total. */
function byRelevance(a: ForumPost, b: ForumPost): number {
  return b.relevance - a.relevance || compareStrings(b.discovered_at, a.discovered_at) || compareStrings(a.id, b.id);
}

export const endpoint: Endpoint = {
  name: 'forum-leads',
  path: '/projects/:project_id/forum/leads',
  summary: 'Forum leads (high intent or relevance >= 0.7) still open, most relevant first',
  scope: 'project',
  query: {},
  schema: 'forum-leads',
  build(store, args): ForumLeads {
    return forumPosts(store, args.projectId).filter(isOpenLead).sort(byRelevance);
  },
};
