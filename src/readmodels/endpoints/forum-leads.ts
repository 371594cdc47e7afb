// GET /projects/:project_id/forum/leads — forum posts worth answering now.
import type { Endpoint } from '../endpoint';
import type { ForumLeads } from '../bodies.gen';
import type { SortKey } from '../args';
import { compareStrings } from '../store';
import { forumPosts, isOpenLead, type ForumPost } from '../forum';
import { rankedPage, type Ranked } from '../paging';

/** A lead's place in the list: relevance (highest first), discovered_at (newest first), id: a total order. */
function keyOf(p: ForumPost): SortKey {
  return [p.relevance, p.discovered_at, p.id];
}

/** Most relevant first; then the newest; then by id, so the order is total. */
function compareKeys(a: SortKey, b: SortKey): number {
  return Number(b[0]) - Number(a[0]) || compareStrings(String(b[1]), String(a[1])) || compareStrings(String(a[2]), String(b[2]));
}

/** Relevance and status change as posts are re-scored and handled: pages come from one pinned list (paging.ts Ranked). */
const leads: Ranked<ForumPost> = {
  all: (store, args) => forumPosts(store, args.projectId).filter(isOpenLead).sort((a, b) => compareKeys(keyOf(a), keyOf(b))),
  keyOf,
  compare: compareKeys,
};

export const endpoint: Endpoint = {
  name: 'forum-leads',
  path: '/projects/:project_id/forum/leads',
  summary: 'Forum leads (high intent or relevance >= 0.7) still open, most relevant first',
  scope: 'project',
  // No limit in v1: without one the list is whole (the v1 bytes); with one it pages.
  params: ['limit', 'cursor'],
  schema: 'forum-leads',
  dependsOn: ['forum'],
  build(store, args): ForumLeads {
    const all = leads.all(store, args);
    return args.limit > 0 ? all.slice(0, args.limit) : all;
  },
  page: (store, args, ctx) => rankedPage(leads, endpoint, store, args, ctx),
};
