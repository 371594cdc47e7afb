// A world with long lists for the cursor tests: runs with mentions and citations over days with ties,
// run groups started at equal times, forum posts with equal discovery times, leads of equal relevance.
import { ev, id, run, world, W, type Ev } from './events';

/** A second project of W.account: a cursor of one project must not be accepted on the other. */
export const P2 = id(3, 'bbbbbbbb');

const day = (n: number): string => `2026-01-${String(n).padStart(2, '0')}`;
const post = (n: number): string => id(n, '12121212');
const group = (n: number): string => id(100 + n, '77777777');
/** Few URLs cited by many runs: counts tie and move as runs arrive. */
const url = (n: number): string => `https://s${n % 7}.example/p${n % 13}`;

function forumPost(n: number, relevance: number, intent: string, d: string): Ev {
  return ev('forum_post.discovered', {
    id: post(n), project_id: W.project, platform: n % 2 ? 'reddit' : 'hackernews', url: `https://forum.example/post/${n}`,
    title: `Post ${n}`, discovered_at: `${d}T10:00:00.000Z`, relevance, intent, matched_terms: ['anvil'],
  }, `${d}T10:00:00.000Z`);
}

/** A run's country, persona and model: most runs name some, a few none (a filter must leave those out). */
function dims(n: number): { country?: string; persona?: string; model?: string } {
  return {
    ...(n % 5 === 0 ? {} : { country: n % 5 < 3 ? 'US' : 'DE' }),
    ...(n % 7 === 0 ? {} : { persona: n % 2 ? 'Founder' : 'Developer' }),
    ...(n % 4 === 0 ? {} : { model: n % 3 ? 'gpt-4o' : 'sonar' }),
  };
}

/** The world before any walk: 90 runs (two mentions each, three citations; most name a country, persona and model), 30 run groups, 45 posts. */
export function pagedWorld(): Ev[] {
  const events = world();
  events.push(ev('project.upserted', { id: P2, company_id: W.account, name: 'Second', status: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' }));
  for (let n = 1; n <= 90; n++) {
    events.push(run({
      n, day: day(1 + (n % 9)), prompt: n % 2 ? W.prompt1 : W.prompt2, engine: n % 3 ? W.engineA : W.engineB,
      brand: 1 + (n % 4), competitor: 1 + (n % 3), citations: [url(n), url(n * 5 + 1), url(n * 11 + 2)], ...dims(n),
    }));
  }
  for (let n = 1; n <= 30; n++) events.push(ev('run_group.started', { id: group(n), project_id: W.project, started_at: `${day(1 + (n % 6))}T00:00:00Z` }));
  for (let n = 1; n <= 45; n++) events.push(forumPost(n, ((n * 37) % 100) / 100, n % 3 === 0 ? 'high' : 'low', day(1 + (n % 8))));
  return events;
}

/**
 * Batch `k` of events arriving while a walk goes on: newer runs citing the existing URLs (counts move,
 * and the window too once a later day arrives), newer run groups, newer posts that rank first, and
 * updates that re-score and dismiss existing posts (ranks move both ways).
 */
export function arriving(k: number): Ev[] {
  const events: Ev[] = [];
  const d = new Date(Date.UTC(2026, 0, 10 + k)).toISOString().slice(0, 10); // a later day for every batch
  for (let i = 0; i < 3; i++) {
    const n = 1000 + k * 10 + i;
    events.push(run({ n, day: d, brand: 1, competitor: 2, citations: [url(k + i), url(k * 3 + i + 4)] }));
  }
  events.push(ev('run_group.started', { id: group(200 + k), project_id: W.project, started_at: `${d}T00:00:00Z` }));
  events.push(forumPost(500 + k, 0.99, 'high', d));
  events.push(ev('forum_post.updated', { id: post(1 + ((k * 7) % 45)), project_id: W.project, relevance: 0.95 }, `${d}T11:00:00.000Z`));
  events.push(ev('forum_post.updated', { id: post(1 + ((k * 11) % 45)), project_id: W.project, status: 'dismissed' }, `${d}T11:00:00.000Z`));
  return events;
}

/** An item's identity in each paged list. */
export const identity: Record<string, (item: Record<string, unknown>) => string> = {
  mentions: (m) => String(m.id),
  citations: (c) => String(c.url),
  runs: (g) => String(g.id),
  'forum-opportunities': (p) => String(p.id),
  'forum-leads': (p) => String(p.id),
};
