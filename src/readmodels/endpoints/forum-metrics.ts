// GET /projects/:project_id/forum/metrics — the forum opportunity summary.
import type { Endpoint } from '../endpoint';
import type { ForumMetrics } from '../bodies.gen';
import type { ReadArgs } from '../args';
import { compareStrings, type ReadStore } from '../store';
import { requestedWindow } from '../windows';
import { forumPosts, isOpenLead, type ForumPost } from '../forum';

type PlatformCount = ForumMetrics['by_platform'][number];

/** lead_count and per-platform leads count open leads: the same posts /forum/leads lists. */
function byPlatform(posts: ForumPost[]): PlatformCount[] {
  const out = new Map<string, PlatformCount>();
  for (const p of posts) {
    let c = out.get(p.platform);
    if (!c) out.set(p.platform, (c = { platform: p.platform, opportunities: 0, leads: 0 }));
    c.opportunities += 1;
    if (isOpenLead(p)) c.leads += 1;
  }
  return [...out.values()].sort((a, b) => compareStrings(a.platform, b.platform));
}

/** With start_date / end_date: the posts discovered on those days (UTC); without, all of them, as in v1. */
function inRange(store: ReadStore, args: ReadArgs, posts: ForumPost[]): ForumPost[] {
  if (args.startDate === null && args.endDate === null) return posts;
  const w = requestedWindow(store, args, args.windowDays)!; // explicit: never null
  return posts.filter((p) => p.discovered_at.slice(0, 10) >= w.start && p.discovered_at.slice(0, 10) <= w.end);
}

export const endpoint: Endpoint = {
  name: 'forum-metrics',
  path: '/projects/:project_id/forum/metrics',
  summary: 'Forum opportunity summary: counts by status, open leads, average relevance, per platform',
  scope: 'project',
  params: ['start_date', 'end_date'],
  schema: 'forum-metrics',
  dependsOn: ['forum'],
  build(store, args): ForumMetrics {
    const posts = inRange(store, args, forumPosts(store, args.projectId));
    const count = (pred: (p: ForumPost) => boolean): number => posts.filter(pred).length;
    return {
      total_opportunities: posts.length,
      open_opportunities: count((p) => p.status === 'open'),
      lead_count: count(isOpenLead),
      engaged_count: count((p) => p.status === 'engaged'),
      dismissed_count: count((p) => p.status === 'dismissed'),
      average_relevance: posts.length === 0 ? null : posts.reduce((s, p) => s + p.relevance, 0) / posts.length,
      last_discovered_at: posts[0]?.discovered_at ?? null,   // posts come newest discovered first
      by_platform: byPlatform(posts),
    };
  },
};
