// Forum posts of a project with their mutable fields, shared by the three forum endpoints.
import { forumPostRows, type ReadStore } from './store';
import type { ForumOpportunityItem } from './bodies.gen';

export type ForumPost = ForumOpportunityItem;
export type ForumStatus = ForumPost['status'];

/** A post is a lead when its intent is high or it is relevant enough on its own. */
export const LEAD_RELEVANCE = 0.7;

/** A post as stored (store/reads/forum-posts.ts): matched_terms as the JSON text of the event's array. */
interface PostRow extends Omit<ForumPost, 'is_lead' | 'matched_terms'> {
  matched_terms: string | null;
}

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
  return forumPostRows<PostRow>(store, projectId, after, count).map(toPost);
}
