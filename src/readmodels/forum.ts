// Forum posts of a project with their mutable fields, shared by the three forum endpoints.
import type { ReadStore } from './store';
import type { ForumOpportunityItem } from './bodies.gen';

export type ForumPost = ForumOpportunityItem;
export type ForumStatus = ForumPost['status'];

/** A post is a lead when its intent is high or it is relevant enough on its own. */
export const LEAD_RELEVANCE = 0.7;

interface PostRow extends Omit<ForumPost, 'is_lead' | 'matched_terms'> {
  matched_terms: string | null;
}

/**
 * Posts whose forum_post.discovered has arrived (an update alone leaves project_id null), newest first.
 * The mutable fields are pivoted from forum_post_fields, where each field is its own last-writer-wins
 * fact holding JSON; json_extract(value, '$') turns it back into an SQL value. A post whose status was
 * never set is open. relevance and intent are always set: forum_post.discovered carries them.
 */
const POSTS = `SELECT f.id, f.platform, f.url, f.title, f.community, f.author, f.posted_at, f.discovered_at, f.matched_terms,
    (SELECT json_extract(x.value, '$') FROM forum_post_fields x WHERE x.post_id = f.id AND x.field = 'relevance') AS relevance,
    (SELECT json_extract(x.value, '$') FROM forum_post_fields x WHERE x.post_id = f.id AND x.field = 'intent') AS intent,
    coalesce((SELECT json_extract(x.value, '$') FROM forum_post_fields x WHERE x.post_id = f.id AND x.field = 'status'), 'open') AS status,
    (SELECT json_extract(x.value, '$') FROM forum_post_fields x WHERE x.post_id = f.id AND x.field = 'comment_count') AS comment_count,
    (SELECT json_extract(x.value, '$') FROM forum_post_fields x WHERE x.post_id = f.id AND x.field = 'score') AS score
  FROM forum_posts f
  WHERE f.project_id = ?`;
const NEWEST_FIRST = ' ORDER BY f.discovered_at DESC, f.id';
/** Keyset (forum opportunities' pages): the posts after the previous page's last one, discovered_at then id being total. */
const AFTER = ' AND (f.discovered_at < ? OR (f.discovered_at = ? AND f.id > ?))';

export function isLead(intent: string, relevance: number): boolean {
  return intent === 'high' || relevance >= LEAD_RELEVANCE;
}

/** Leads nobody has engaged with or dismissed yet. */
export function isOpenLead(p: ForumPost): boolean {
  return p.is_lead && p.status === 'open';
}

function toPost(r: PostRow): ForumPost {
  return {
    id: r.id, platform: r.platform, url: r.url, title: r.title, community: r.community, author: r.author,
    posted_at: r.posted_at, discovered_at: r.discovered_at, relevance: r.relevance, intent: r.intent,
    is_lead: isLead(r.intent, r.relevance), status: r.status,
    matched_terms: r.matched_terms ? (JSON.parse(r.matched_terms) as string[]) : [],
    comment_count: r.comment_count, score: r.score,
  };
}

/** Every discovered post of the project, newest discovered first (then by id). */
export function forumPosts(store: ReadStore, projectId: string): ForumPost[] {
  return forumPostsAfter(store, projectId, null, -1);
}

/** The first `count` posts (-1: all) in that order, after a post's (discovered_at, id) when one is given. */
export function forumPostsAfter(store: ReadStore, projectId: string, after: readonly [string, string] | null, count: number): ForumPost[] {
  const rows = after
    ? store.all<PostRow>(`${POSTS}${AFTER}${NEWEST_FIRST} LIMIT ?`, projectId, after[0], after[0], after[1], count)
    : store.all<PostRow>(`${POSTS}${NEWEST_FIRST} LIMIT ?`, projectId, count);
  return rows.map(toPost);
}
