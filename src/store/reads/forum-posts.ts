// Forum posts of a project with their mutable fields, for the three forum endpoints. The row shape
// is the caller's (T): matched_terms comes as the JSON text of the event's array.
import type { ReadStore } from '../read-store';

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
const FIRST = `${POSTS}${NEWEST_FIRST} LIMIT ?`;
const NEXT = `${POSTS}${AFTER}${NEWEST_FIRST} LIMIT ?`;

/** The first `count` posts (-1: all), newest discovered first, after a post's (discovered_at, id) when one is given. */
export function forumPostRows<T>(store: ReadStore, projectId: string, after: readonly [string, string] | null, count: number): T[] {
  return after ? store.all<T>(NEXT, projectId, after[0], after[0], after[1], count) : store.all<T>(FIRST, projectId, count);
}
