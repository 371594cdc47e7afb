// GET /projects/:project_id/forum/opportunities — every forum post the crawler found for the project.
import type { Endpoint } from '../endpoint';
import type { ReadArgs } from '../args';
import type { ReadStore } from '../store';
import type { ForumOpportunities } from '../bodies.gen';
import { forumPostsAfter, type ForumPost } from '../forum';
import { fetchCount, keysetPage, type Page } from '../paging';

/** The page after the cursor, newest discovered first; `limit` 0 (v1: no limit sent) is the whole list. */
function readPage(store: ReadStore, args: ReadArgs): Page<ForumPost> {
  const after = args.cursor?.after;
  const posts = forumPostsAfter(store, args.projectId, after ? [String(after[0]), String(after[1])] : null, fetchCount(args.limit));
  return keysetPage(posts, args.limit, (p) => [p.discovered_at, p.id]);
}

export const endpoint: Endpoint = {
  name: 'forum-opportunities',
  path: '/projects/:project_id/forum/opportunities',
  summary: 'All forum opportunities, newest discovered first',
  scope: 'project',
  // No limit in v1: without one the list is whole (the v1 bytes); with one it pages.
  params: ['limit', 'cursor'],
  schema: 'forum-opportunities',
  dependsOn: ['forum'],
  build(store, args): ForumOpportunities {
    return readPage(store, args).items;
  },
  page: readPage,
};
