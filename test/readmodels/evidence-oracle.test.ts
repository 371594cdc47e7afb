// Endpoints 12-22 over real HTTP, whole bodies compared with what an independent model of the same
// events expects (test/helpers/oracle-evidence.ts), plus hand-worked orders in the comments as a check on that
// model. The world has ties on every ordering key, runs on both sides of the window's first day,
// redelivered and superseded events, a URL cited twice in one answer, and a share granted, revoked
// and granted again.
import t from 'tap';
import { mentionId, Oracle, type Query } from '../helpers/oracle-evidence';
import { asSource, ev, id, sha256, type Ev } from '../helpers/events';
import { tmpDb } from '../helpers/db';
import { request, startApi, withKey, type Api } from '../helpers/http';

// ---- Ids (readable uuids: the last group is the number)

const ACC1 = id(1, 'aaaaaaaa');
const ACC2 = id(2, 'aaaaaaaa');
const K1 = 'values-key-one';
const K2 = 'values-key-two';
const P = id(1, 'bbbbbbbb');        // ACC1's: the main world
const Q = id(2, 'bbbbbbbb');        // ACC2's: never visible to ACC1; 120 mentions for the default limit
const S = id(3, 'bbbbbbbb');        // ACC2's, shared with ACC1, the share revoked, then granted again
const X = id(4, 'bbbbbbbb');        // ACC1's, deleted
const T = id(5, 'bbbbbbbb');        // ACC1's: documented values the service gets wrong (kept failing, see the report)
const [E1, E2, E3, E4, E5] = [1, 2, 3, 4, 5].map((n) => id(n, 'cccccccc')) as [string, string, string, string, string];
const [PR1, PR2, PR3, PR4] = [1, 2, 3, 4].map((n) => id(n, 'ffffffff')) as [string, string, string, string];
const PQ = id(9, 'ffffffff');
const PS = id(10, 'ffffffff');
const PT = id(11, 'ffffffff');
const C1 = id(1, '99999999');
const C2 = id(2, '99999999');
const [G1, G2, G3, G4, G5] = [1, 2, 3, 4, 5].map((n) => id(n, '77777777')) as [string, string, string, string, string];
const GQ = id(9, '77777777');
const GS = id(10, '77777777');
const GT = id(11, '77777777');
const R = (n: number): string => id(n, '55555555');
const F = (n: number): string => id(n, '12121212');
const TERM = (n: number): string => id(n, '33333333');

const U = {
  hn: 'https://news.ycombinator.com/item?id=1',
  acmeA: 'https://acme.com/a',
  acmeB: 'https://www.acme.com/b',
  blog: 'https://blog.acme.com/c',
  q: 'https://www.quora.com/q1',
  r1: 'https://www.reddit.com/r/anvils/1',
  r2: 'https://old.reddit.com/r/anvils/2',
  wile: 'https://wile.com/x',
  gone: 'https://gone.com/p',
  forum: 'https://forum.tools.org/t/1',
  se: 'https://math.stackexchange.com/q/1',
  disc: 'https://discourse.example.com/t/1',
  old: 'https://old.example.com/',
};

const at = (s: string): string => `2026-${s}.000Z`;        // at('03-10T12:00:00')

// ---- Events

interface M { b?: number; c?: string; n?: string; p?: number; s?: number; snip?: string }
interface PromptRun {
  n: number; group: string; prompt: string; engine: string; when: string; status?: 'succeeded' | 'failed';
  mentions?: M[]; cites?: Array<string | [string, string]>; excerpt?: string; project?: string; occurred?: string; eventId?: string;
}

/** A prompt_run.completed: mentions {b: brand position} or {c: competitor id, n: name}; cites url or [url, title]. */
function promptRun(r: PromptRun): Ev {
  const mentions = (r.mentions ?? []).map((m, i) => ({
    entity_type: m.b !== undefined ? 'brand' : 'competitor', ...(m.c ? { competitor_id: m.c } : {}),
    name: m.n ?? (m.b !== undefined ? 'Acme' : 'Wile'), position: m.b ?? m.p ?? i + 1,
    ...(m.s !== undefined ? { sentiment: m.s } : {}), ...(m.snip ? { snippet: m.snip } : {}),
  }));
  const citations = (r.cites ?? []).map((c, i) => (typeof c === 'string' ? { url: c } : { url: c[0], title: c[1], position: i + 1 }));
  return ev('prompt_run.completed', {
    id: R(r.n), run_group_id: r.group, project_id: r.project ?? P, prompt_id: r.prompt, engine_id: r.engine,
    status: r.status ?? 'succeeded', completed_at: at(r.when), mentions, citations, ...(r.excerpt ? { response_excerpt: r.excerpt } : {}),
  }, r.occurred ?? at(r.when).replace(/\.000Z$/, '.500Z'), r.eventId);
}

function discovered(n: number, platform: string, relevance: number, intent: string, when: string, extra: Record<string, unknown> = {}, project = P): Ev {
  return ev('forum_post.discovered', {
    id: F(n), project_id: project, platform, url: `https://example.com/post/${n}`, title: `Post ${n}`,
    discovered_at: at(when), relevance, intent, matched_terms: ['anvil'], ...extra,
  }, at(when));
}

const updated = (n: number, fields: Record<string, unknown>, when: string, eventId?: string): Ev =>
  ev('forum_post.updated', { id: F(n), project_id: P, ...fields }, at(when), eventId);

const D0 = at('01-01T00:00:00');
// Event ids sent more than once.
const R3_EVENT = 'eeeeeeee-0000-4000-8000-00000000f003';
const G2_PARTIAL = 'eeeeeeee-0000-4000-8000-00000000f102';
const F8_DISMISS = 'eeeeeeee-0000-4000-8000-00000000f208';


/** Accounts, projects, engines, terms, prompts, competitors, run groups. */
function catalog(): Ev[] {
  return [
    ev('account.upserted', { account_id: ACC1, name: 'Acme Co' }, D0),
    ev('account.upserted', { account_id: ACC2, name: 'Other Co' }, D0),
    ev('api_key.issued', { key_id: id(1, '11111111'), account_id: ACC1, key_sha256: sha256(K1), issued_at: D0 }, D0),
    ev('api_key.issued', { key_id: id(2, '11111111'), account_id: ACC2, key_sha256: sha256(K2), issued_at: D0 }, D0),
    ...[[P, ACC1, 'acme.com'], [Q, ACC2, 'other.com'], [S, ACC2, 'shared.com'], [X, ACC1, null], [T, ACC1, null]].map(([p, acc, domain], i) =>
      ev('project.upserted', { id: p, company_id: acc, name: `Project ${i}`, ...(domain ? { domain } : {}), status: 'active', created_at: D0, updated_at: D0 }, D0)),
    ev('project.deleted', { id: X }, at('01-02T00:00:00')),
    // E2 arrives before E1 and both are named ChatGPT: the engines list breaks the name tie by id.
    ev('engine.upserted', { id: E2, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o-mini' }, D0),
    ev('engine.upserted', { id: E1, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o' }, D0),
    ev('engine.upserted', { id: E3, name: 'Perplexity Beta', provider: 'perplexity' }, at('01-01T00:00:01')),
    ev('engine.upserted', { id: E3, name: 'Perplexity', provider: 'perplexity' }, at('01-03T00:00:00')),
    ev('engine.upserted', { id: E4, name: 'Gemini', provider: 'google' }, D0),
    // E5 is tracked but never upserted: not listed, and its runs never count.
    ...[[E1, '01-01'], [E2, '01-02'], [E4, '01-01'], [E5, '01-01']].map(([e, d]) =>
      ev('project.engine_tracked', { project_id: P, engine_id: e, at: at(`${d}T00:00:00`) }, at(`${d}T00:00:00`))),
    ev('project.engine_tracked', { project_id: P, engine_id: E3, at: at('01-01T00:00:00') }, at('01-01T00:00:00')),
    ev('project.engine_untracked', { project_id: P, engine_id: E3, at: at('01-15T00:00:00') }, at('01-15T00:00:00')),
    ev('project.engine_tracked', { project_id: P, engine_id: E3, at: at('02-01T00:00:00') }, at('02-01T00:00:00')),
    ev('project.engine_untracked', { project_id: P, engine_id: E4, at: at('02-01T00:00:00') }, at('02-01T00:00:00')),
    ev('project.engine_tracked', { project_id: Q, engine_id: E1, at: D0 }, D0),
    ev('project.engine_tracked', { project_id: S, engine_id: E3, at: D0 }, D0),
    // Terms: two with the value acme.com (ties by id: TERM(2) < TERM(3), upserted in the other order), a
    // deleted domain term (tools.org is then nobody's own domain), one whose older version arrives late.
    ev('term.upserted', { id: TERM(3), project_id: P, value: 'acme.com', kind: 'brand' }, at('01-04T00:00:00')),
    ev('term.upserted', { id: TERM(2), project_id: P, value: 'acme.com', kind: 'domain' }, at('01-05T00:00:00')),
    ev('term.upserted', { id: TERM(1), project_id: P, value: 'Acme', kind: 'brand' }, at('01-06T00:00:00')),
    ev('term.upserted', { id: TERM(4), project_id: P, value: 'tools.org', kind: 'domain' }, D0),
    ev('term.deleted', { id: TERM(4), project_id: P }, at('01-02T00:00:00')),
    ev('term.upserted', { id: TERM(5), project_id: P, value: 'acme.io', kind: 'domain' }, at('01-07T00:00:00')),
    ev('term.upserted', { id: TERM(9), project_id: Q, value: 'Other', kind: 'brand' }, D0),
    ev('term.upserted', { id: TERM(10), project_id: S, value: 'Shared', kind: 'brand' }, D0),
    ev('prompt.upserted', { id: PR1, project_id: P, text: 'best anvil', segment_ids: [], active: true }, D0),
    ev('prompt.upserted', { id: PR2, project_id: P, text: 'cheap anvil', segment_ids: [], active: true }, D0),
    ev('prompt.upserted', { id: PR3, project_id: P, text: 'deleted anvil', segment_ids: [], active: true }, D0),
    ev('prompt.deleted', { id: PR3, project_id: P }, at('01-02T00:00:00')),
    ev('prompt.upserted', { id: PQ, project_id: Q, text: 'other prompt', segment_ids: [], active: true }, D0),
    ev('prompt.upserted', { id: PS, project_id: S, text: 'shared prompt', segment_ids: [], active: true }, D0),
    ev('prompt.upserted', { id: PT, project_id: T, text: 'tie prompt', segment_ids: [], active: true }, D0),
    ev('competitor.upserted', { id: C1, project_id: P, name: 'Wile', domain: 'https://www.Wile.com/', aliases: [] }, D0),
    ev('competitor.upserted', { id: C2, project_id: P, name: 'Gone', domain: 'gone.com', aliases: [] }, D0),
    ev('competitor.deleted', { id: C2, project_id: P }, at('01-02T00:00:00')),
    // G1 and G2 start at the same instant (G2 arrives first); G3 is newest and never completes; G4 only completes.
    ev('run_group.started', { id: G2, project_id: P, started_at: at('03-01T08:00:00') }, at('03-01T08:00:00')),
    ev('run_group.started', { id: G1, project_id: P, trigger: 'schedule', started_at: at('03-01T08:00:00') }, at('03-01T08:00:00')),
    ev('run_group.started', { id: G5, project_id: P, started_at: at('03-10T11:00:00') }, at('03-10T11:00:00')),
    ev('run_group.started', { id: G3, project_id: P, trigger: 'manual', started_at: at('03-11T00:00:00') }, at('03-11T00:00:00')),
    ev('run_group.completed', { id: G4, project_id: P, completed_at: at('03-11T00:00:00'), status: 'completed' }, at('03-11T00:00:00')),
    ev('run_group.completed', { id: G1, completed_at: at('03-11T01:00:00'), status: 'completed' }, at('03-11T01:00:00')),
    // G2: partial, then failed (newer); the partial is redelivered later and changes nothing.
    ev('run_group.completed', { id: G2, completed_at: at('03-11T02:00:00'), status: 'partial' }, at('03-11T02:00:00'), G2_PARTIAL),
    ev('run_group.completed', { id: G2, completed_at: at('03-11T03:00:00'), status: 'failed' }, at('03-11T03:00:00')),
    ev('run_group.started', { id: GQ, project_id: Q, started_at: at('02-01T00:00:00') }, at('02-01T00:00:00')),
    ev('run_group.started', { id: GS, project_id: S, started_at: at('02-01T00:00:00') }, at('02-01T00:00:00')),
    ev('run_group.started', { id: GT, project_id: T, started_at: at('02-01T00:00:00') }, at('02-01T00:00:00')),
    // S is shared with ACC1, then the share is revoked.
    ev('project.access_granted', { project_id: S, account_id: ACC1 }, at('02-01T00:00:00')),
    ev('project.access_revoked', { project_id: S, account_id: ACC1 }, at('02-02T00:00:00')),
  ];
}

// The window of P ends on 03-10 (R1, the latest succeeded run; R8 on 03-11 failed): 03-04 .. 03-10.

function runs(): Ev[] {
  return [
    // R2 (a prompt never known) arrives before R1 and completes at the same instant, in the same group:
    // G1 lists R1 first (by id).
    promptRun({ n: 2, group: G1, prompt: PR4, engine: E1, when: '03-10T12:00:00', mentions: [{ b: 1 }], cites: [U.disc, U.hn] }),
    // R12: a deleted prompt's run, alone in G5 (its results are checked with T's).
    promptRun({ n: 12, group: G5, prompt: PR3, engine: E1, when: '03-10T11:00:00', mentions: [{ b: 1 }], cites: [U.disc, U.hn] }),
    promptRun({ n: 1, group: G1, prompt: PR1, engine: E1, when: '03-10T12:00:00', excerpt: 'Wile first, then Acme',
      mentions: [{ b: 2, s: 0.5, snip: 'named second' }, { c: C1, p: 1, s: -0.25 }, { b: 4 }],
      cites: [[U.hn, 'HN'], U.acmeA, U.q, [U.q, 'Quora title']] }),                 // U.q twice in one answer: one citation
    promptRun({ n: 3, group: G1, prompt: PR2, engine: E2, when: '03-09T09:30:00', eventId: R3_EVENT,
      mentions: [{ c: C2, n: 'Gone' }, { b: 3, s: 1 }], cites: [U.hn, [U.r1, 'Thread'], U.wile, U.acmeB] }),
    // The first day of the window, at its first millisecond; R5 a millisecond before it.
    promptRun({ n: 4, group: G1, prompt: PR1, engine: E3, when: '03-04T00:00:00', mentions: [{ c: C1 }],
      cites: [[U.r1, 'Old thread'], U.forum, U.se, U.blog] }),
    ev('prompt_run.completed', {
      id: R(5), run_group_id: G1, project_id: P, prompt_id: PR2, engine_id: E1, status: 'succeeded', completed_at: '2026-03-03T23:59:59.999Z',
      mentions: [{ entity_type: 'brand', name: 'Acme', position: 1, sentiment: 0 }], citations: [U.r2, U.se, U.forum, U.hn].map((url) => ({ url })),
    }, '2026-03-04T00:00:00.000Z'),
    promptRun({ n: 6, group: G2, prompt: PR2, engine: E4, when: '03-07T10:00:00', mentions: [{ b: 2, snip: 's6' }],
      cites: [U.r2, U.r2, [U.forum, 'Forum T']] }),
    promptRun({ n: 7, group: G2, prompt: PR1, engine: E2, when: '03-08T10:00:00', cites: [[U.r2, 'Old reddit'], U.acmeA, U.gone] }),
    promptRun({ n: 8, group: G2, prompt: PR1, engine: E1, when: '03-11T10:00:00', status: 'failed', mentions: [{ b: 1 }], cites: [U.q, U.se] }),
    promptRun({ n: 9, group: G2, prompt: PR4, engine: E1, when: '03-06T10:00:00', mentions: [{ b: 1 }], cites: [U.q] }),        // prompt never known
    promptRun({ n: 10, group: G2, prompt: PR1, engine: E5, when: '03-06T10:00:00', mentions: [{ b: 1 }], cites: [U.q, U.se] }), // engine never known
    // R11, newest version: in G2 on 03-06. Its older version (G1, 03-05) arrives later and loses.
    promptRun({ n: 11, group: G2, prompt: PR2, engine: E1, when: '03-06T11:00:00', occurred: at('03-06T12:00:00'),
      mentions: [{ c: C1 }, { b: 2, s: -1 }], cites: [U.forum, U.hn] }),
    // Q: 40 runs of 3 mentions each, for the default limit of 100.
    ...Array.from({ length: 40 }, (_, i) => promptRun({
      n: 200 + i, group: GQ, project: Q, prompt: PQ, engine: E1, when: `02-${String(2 + Math.floor(i / 24)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:00:00`,
      mentions: [{ b: 1 + (i % 3) }, { c: id(9, '99999999'), n: 'Rival' }, { b: 5 }], cites: [`https://other.com/${i % 4}`],
    })),
    promptRun({ n: 300, group: GS, project: S, prompt: PS, engine: E3, when: '02-05T10:00:00', mentions: [{ b: 1, s: 0.25 }],
      cites: [['https://www.reddit.com/r/shared', 'Shared thread'], 'https://shared.com/'] }),
    promptRun({ n: 301, group: GS, project: S, prompt: PS, engine: E3, when: '02-06T10:00:00', cites: ['https://www.reddit.com/r/shared'] }),
  ];
}

/** Events that arrive in a later batch: redeliveries, retries and older versions. */
function late(): Ev[] {
  const r3 = runs().find((e) => e.event_id === R3_EVENT)!;
  const r7 = runs().find((e) => e.data.id === R(7))!;
  return [
    r3,                                                                                   // the same event again
    { ...r7, event_id: id(77, 'eeeeeeee'), occurred_at: at('03-09T00:00:00') },           // the same fact under a new event id
    promptRun({ n: 11, group: G1, prompt: PR2, engine: E1, when: '03-05T10:00:00', occurred: at('03-05T10:00:01'), mentions: [{ b: 5 }], cites: [U.old] }),
    ev('term.upserted', { id: TERM(5), project_id: P, value: 'acme.dev', kind: 'domain' }, at('01-03T00:00:00')),  // older: only moves created_at
    ev('engine.upserted', { id: E3, name: 'Perplexity Stale', provider: 'perplexity' }, at('01-02T00:00:00')),
    ev('run_group.completed', { id: G2, completed_at: at('03-11T02:00:00'), status: 'partial' }, at('03-11T02:00:00'), G2_PARTIAL),
  ];
}

function forum(): Ev[] {
  return [
    // F2 arrives before F1: same relevance, same discovery instant, so leads order them by id.
    discovered(2, 'reddit', 0.8, 'medium', '03-05T10:00:00'),
    discovered(1, 'reddit', 0.8, 'low', '03-05T10:00:00', { community: 'r/anvils', author: 'coyote', posted_at: at('03-04T08:00:00'), comment_count: 12, score: 40, matched_terms: ['anvil', 'acme'] }),
    discovered(3, 'hackernews', 0.8, 'low', '03-06T10:00:00'),
    discovered(4, 'forum', 0.25, 'high', '03-05T10:00:00'),
    discovered(5, 'reddit', 0.7, 'medium', '03-02T10:00:00'),
    discovered(6, 'reddit', 0.69, 'medium', '03-01T10:00:00'),
    discovered(8, 'reddit', 0.95, 'low', '03-03T10:00:00'),
    discovered(7, 'quora', 0.9, 'high', '03-03T10:00:00'),
    updated(7, { status: 'engaged' }, '03-04T00:00:00'),
    updated(8, { status: 'dismissed' }, '03-04T00:00:00', F8_DISMISS),
    discovered(9, 'stackexchange', 0.5, 'low', '03-02T12:00:00'),
    updated(9, { relevance: 0.75 }, '03-06T00:00:00'),
    discovered(10, 'forum', 0.6, 'medium', '03-01T12:00:00', { score: 3 }),
    updated(10, { status: 'engaged', score: 4 }, '03-04T00:00:00'),
    updated(10, { status: 'open' }, '03-05T00:00:00'),
    discovered(11, 'reddit', 0.99, 'high', '03-07T00:00:00', {}, Q),
    updated(12, { status: 'engaged' }, '03-04T00:00:00'),                                  // never discovered
    discovered(13, 'reddit', 0.9, 'high', '02-07T00:00:00', {}, S),
  ];
}

function forumLate(): Ev[] {
  return [
    updated(8, { status: 'dismissed' }, '03-04T00:00:00', F8_DISMISS),                    // redelivered
    updated(9, { relevance: 0.2 }, '03-05T00:00:00'),                                      // older than the 0.75
  ];
}

/** T: a mentions tie across runs and a rediscovered forum post (see the last test). */
function documented(): Ev[] {
  return [
    promptRun({ n: 402, group: GT, project: T, prompt: PT, engine: E1, when: '02-10T10:00:00', mentions: [{ b: 2 }] }),
    promptRun({ n: 401, group: GT, project: T, prompt: PT, engine: E1, when: '02-10T10:00:00', mentions: [{ b: 1 }] }),
    // One reddit page in two buckets (engine x day x prompt): E1's bucket has a titled citation at 01:00 and an
    // untitled one at 20:00; E2's bucket a titled one at 12:00, the latest titled citation of the window.
    promptRun({ n: 403, group: GT, project: T, prompt: PT, engine: E1, when: '02-10T01:00:00', cites: [[U.r1, 'Early title']] }),
    promptRun({ n: 404, group: GT, project: T, prompt: PT, engine: E1, when: '02-10T20:00:00', cites: [U.r1] }),
    promptRun({ n: 405, group: GT, project: T, prompt: PT, engine: E2, when: '02-10T12:00:00', cites: [[U.r1, 'Latest title']] }),
    discovered(20, 'reddit', 0.9, 'high', '02-01T00:00:00', { comment_count: 3 }, T),
    ev('forum_post.updated', { id: F(20), project_id: T, comment_count: 9 }, at('02-02T00:00:00')),
    discovered(20, 'reddit', 0.9, 'high', '02-03T00:00:00', {}, T),
  ];
}

const regrant = (): Ev => ev('project.access_granted', { project_id: S, account_id: ACC1 }, at('02-03T00:00:00'));
const staleRevoke = (): Ev => ev('project.access_revoked', { project_id: S, account_id: ACC1 }, at('02-01T12:00:00'));

// ---- HTTP

const NOT_FOUND = { error: true, message: 'Not found' };

async function get(api: Api, key: string, path: string): Promise<{ status: number; json: unknown }> {
  const r = await request(api.base + path, withKey(key));
  return { status: r.status, json: r.json };
}

function qs(q: Query): string {
  const parts: string[] = [];
  if (q.limit !== undefined) parts.push(`limit=${q.limit}`);
  if (q.entityType) parts.push(`entity_type=${q.entityType}`);
  for (const e of q.engineIds ?? []) parts.push(`engine_ids=${e}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** Every path of endpoints 12-22 for a project, with what the oracle expects. */
function projectPaths(o: Oracle, p: string): Array<[string, unknown]> {
  return [
    [`/projects/${p}/mentions`, o.mentions(p)],
    [`/projects/${p}/referrers`, o.referrers(p)],
    [`/projects/${p}/warm-leads`, o.warmLeads(p)],
    [`/projects/${p}/engines`, o.trackedEngines(p)],
    [`/projects/${p}/terms`, o.liveTerms(p)],
    [`/projects/${p}/runs`, o.runGroups(p)],
    [`/projects/${p}/forum/metrics`, o.forumMetrics(p)],
    [`/projects/${p}/forum/leads`, o.forumLeads(p)],
    [`/projects/${p}/forum/opportunities`, o.forumOpportunities(p)],
  ];
}

function groupPaths(o: Oracle, g: string): Array<[string, unknown]> {
  return [[`/runs/${g}`, o.runGroupWithRuns(g)], [`/runs/${g}/results`, o.runResults(g)]];
}

/** The paths alone, for ids the key must not reach (some have no body at all). */
const pathsOf = (p: string, g: string): string[] => [
  ...projectPaths(new Oracle([]), p).map(([path]) => path), `/runs/${g}`, `/runs/${g}/results`,
];

const ids = (body: unknown, field = 'id'): unknown[] => (body as Array<Record<string, unknown>>).map((x) => x[field]);

t.test('endpoints 12-22 over HTTP equal the independent model, ties and window edges included', async (t) => {
  const { db, projector } = tmpDb();
  const first = [...catalog(), ...runs(), ...forum(), ...documented()];
  projector.applyBatch(asSource(first));
  projector.applyBatch(asSource([...late(), ...forumLate()], 'late'));
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  let events = [...first, ...late(), ...forumLate()];
  let o = new Oracle(events);

  t.test('the model agrees with orders worked out by hand', async (t) => {
    // Window 03-04..03-10 counts R1, R3, R4, R6, R7, R11 (R2 and R9 unknown prompt, R12 deleted prompt,
    // R5 a millisecond early, R8 failed, R10 unknown engine).
    t.strictSame(o.window(P), { start: '2026-03-04', end: '2026-03-10' });
    // U.forum: R4, R6, R11 = 3; U.hn: R1, R3, R11 = 3; U.r2: R6 (twice, once) + R7 = 2; U.r1: R3, R4 = 2.
    // U.se (R4 only in the window: 1) and U.q (twice in R1: 1) stay out.
    t.strictSame(o.warmLeads(P).map((w) => [w.url, w.citation_count, w.title]),
      [[U.forum, 3, 'Forum T'], [U.hn, 3, 'HN'], [U.r2, 2, 'Old reddit'], [U.r1, 2, 'Thread']]);
    // acme.com 2+1, forum.tools.org 3, news.ycombinator.com 3; old.reddit.com 2, reddit.com 2; then 1s by name.
    t.strictSame(o.referrers(P).map((d) => [d.domain, d.citation_count, d.is_own_domain, d.is_competitor_domain]), [
      ['acme.com', 3, true, false], ['forum.tools.org', 3, false, false], ['news.ycombinator.com', 3, false, false],
      ['old.reddit.com', 2, false, false], ['reddit.com', 2, false, false], ['blog.acme.com', 1, true, false],
      ['gone.com', 1, false, false], ['math.stackexchange.com', 1, false, false], ['quora.com', 1, false, false],
      ['wile.com', 1, false, true]]);
    t.strictSame(o.referrers(P).reduce((n, d) => n + (d.citation_count as number), 0), 18);
    // Feed: R1 (3 mentions), R3 (2), R7 (none), R6 (1), R11 (2, newest version), R4 (1), R5 (1: the feed is not windowed).
    t.strictSame(o.mentions(P).map((m) => `${m.prompt_run_id === R(1) ? 'R1' : m.prompt_run_id === R(3) ? 'R3' : m.prompt_run_id === R(6) ? 'R6' : m.prompt_run_id === R(11) ? 'R11' : m.prompt_run_id === R(4) ? 'R4' : 'R5'}:${m.position}`),
      ['R1:2', 'R1:1', 'R1:4', 'R3:1', 'R3:3', 'R6:2', 'R11:1', 'R11:2', 'R4:1', 'R5:1']);
    t.strictSame(ids(o.trackedEngines(P)), [E1, E2, E3]);
    t.strictSame(o.trackedEngines(P).map((e) => e.tracked_since), [at('01-01T00:00:00'), at('01-02T00:00:00'), at('02-01T00:00:00')]);
    t.strictSame(ids(o.liveTerms(P)), [TERM(1), TERM(2), TERM(3), TERM(5)]);                    // Acme < acme.com (x2, by id) < acme.io
    t.strictSame(ids(o.runGroups(P)), [G3, G5, G1, G2]);
    t.strictSame(ids((o.runGroupWithRuns(G1) as { prompt_runs: unknown[] }).prompt_runs), [R(5), R(4), R(3), R(1), R(2)]);
    t.strictSame(ids((o.runGroupWithRuns(G2) as { prompt_runs: unknown[] }).prompt_runs), [R(9), R(10), R(11), R(6), R(7), R(8)]);
    t.strictSame(ids(o.forumLeads(P)), [F(3), F(1), F(2), F(9), F(5), F(4)]);
    t.strictSame(ids(o.forumOpportunities(P)), [F(3), F(1), F(2), F(4), F(7), F(8), F(9), F(5), F(10), F(6)]);
  });

  t.test('ACC1 on its project: every body equals the model', async (t) => {
    for (const [path, expected] of [...projectPaths(o, P), ...groupPaths(o, G1), ...groupPaths(o, G2), ...groupPaths(o, G3), [`/runs/${G5}`, o.runGroupWithRuns(G5)] as [string, unknown]]) {
      const r = await get(api, K1, path);
      t.equal(r.status, 200, path);
      t.strictSame(r.json, expected, path);
    }
  });

  t.test('mentions: limit, entity_type and engine_ids', async (t) => {
    const queries: Query[] = [
      { limit: 4 }, { limit: 1 }, { entityType: 'competitor' }, { entityType: 'brand', limit: 2 },
      { engineIds: [E3, E2] }, { engineIds: [E4] }, { engineIds: [E5] }, { engineIds: [E2], entityType: 'brand' },
    ];
    for (const q of queries) {
      const path = `/projects/${P}/mentions${qs(q)}`;
      const r = await get(api, K1, path);
      t.equal(r.status, 200, path);
      t.strictSame(r.json, o.mentions(P, { ...q, engineIds: q.engineIds && [...q.engineIds].sort() }), path);
    }
    // By hand: engine E2 ran R3 (Gone, brand 3) and R7 (no mentions); E3 ran R4 (Wile).
    t.strictSame(ids((await get(api, K1, `/projects/${P}/mentions?engine_ids=${E3.toUpperCase()}&engine_ids=${E2}`)).json),
      [mentionId(R(3), 0), mentionId(R(3), 1), mentionId(R(4), 0)]);
    t.strictSame((await get(api, K1, `/projects/${P}/mentions?engine_ids=${E5}`)).json, [], 'runs of an unknown engine never count');
    // Q has 120 mentions: 100 by default, all of them up to 1000.
    const q = (await get(api, K2, `/projects/${Q}/mentions`)).json as unknown[];
    t.equal(q.length, 100);
    t.strictSame(q, o.mentions(Q));
    t.strictSame((await get(api, K2, `/projects/${Q}/mentions?limit=1000`)).json, o.mentions(Q, { limit: 1000 }));
    for (const [path, expected] of [...projectPaths(o, Q), ...groupPaths(o, GQ)]) t.strictSame(await get(api, K2, path), { status: 200, json: expected }, `ACC2 ${path}`);
    t.equal(o.mentions(Q, { limit: 1000 }).length, 120);
  });

  t.test('scoping: another account\'s project, a deleted one, a revoked share, a share granted again', async (t) => {
    const foreign = [...pathsOf(Q, GQ), ...pathsOf(X, G4), ...pathsOf(S, GS)];
    t.notOk(o.canSee(ACC1, S), 'the model: a revoked share gives no access');
    for (const path of foreign) t.strictSame(await get(api, K1, path), { status: 404, json: NOT_FOUND }, `ACC1 ${path}`);
    for (const path of pathsOf(P, G1)) t.strictSame(await get(api, K2, path), { status: 404, json: NOT_FOUND }, `ACC2 ${path}`);
    for (const [path, expected] of [...projectPaths(o, S), ...groupPaths(o, GS)]) t.strictSame(await get(api, K2, path), { status: 200, json: expected }, `owner ${path}`);
    t.strictSame(ids((await get(api, K1, '/projects')).json), [P, T].sort(), 'ACC1 lists its own live projects only');

    projector.applyBatch(asSource([regrant()], 'regrant'));
    events = [...events, regrant()];
    o = new Oracle(events);
    t.ok(o.canSee(ACC1, S));
    for (const [path, expected] of [...projectPaths(o, S), ...groupPaths(o, GS)]) t.strictSame(await get(api, K1, path), { status: 200, json: expected }, `granted again: ${path}`);
    t.strictSame((o.warmLeads(S) as Array<{ url: string }>).map((w) => w.url), ['https://www.reddit.com/r/shared']);

    // A revoke older than the new grant arrives late: the grant stands.
    projector.applyBatch(asSource([staleRevoke()], 'stale'));
    events = [...events, staleRevoke()];
    o = new Oracle(events);
    t.ok(o.canSee(ACC1, S));
    t.strictSame(await get(api, K1, `/projects/${S}/forum/leads`), { status: 200, json: o.forumLeads(S) });
    t.strictSame(await get(api, K1, `/runs/${GS}`), { status: 200, json: o.runGroupWithRuns(GS) });
    for (const path of pathsOf(Q, GQ)) t.strictSame(await get(api, K1, path), { status: 404, json: NOT_FOUND }, `still ACC1 ${path}`);
  });

  t.test('documented values on T (a failure: the service departs from docs/metrics.md or its own stated contract)', async (t) => {
    // Two runs complete at the same instant: docs/metrics.md "ties are broken by ... id" orders them R401 then R402.
    const m = await get(api, K1, `/projects/${T}/mentions`);
    t.strictSame(ids(m.json), [mentionId(R(401), 0), mentionId(R(402), 0)], 'mentions of runs completed at the same instant: by run id');
    // "Each field of a post is the latest value reported for it": the rediscovery reports no comment count.
    const opp = await get(api, K1, `/projects/${T}/forum/opportunities`);
    t.strictSame((opp.json as Array<{ comment_count: unknown }>).map((p) => p.comment_count), [9], 'a rediscovery without comment_count keeps the reported 9');
    t.strictSame(opp.json, o.forumOpportunities(T), 'T forum opportunities, whole body');
    // docs/metrics.md: a deleted prompt keeps no text (tombstones keep no data); its runs keep their prompt_id.
    const results = await get(api, K1, `/runs/${G5}/results`);
    t.strictSame((results.json as Array<{ prompt_text: unknown }>).map((r) => r.prompt_text), [null], 'a deleted prompt\'s run shows no text');
    t.strictSame(results.json, o.runResults(G5), 'G5 results, whole body');
    // docs/metrics.md: title = "the title of its latest titled citation" (also how /citations names it).
    const warm = await get(api, K1, `/projects/${T}/warm-leads`);
    t.strictSame((warm.json as Array<{ title: unknown }>).map((w) => w.title), ['Latest title'], 'warm lead title: the latest titled citation across buckets');
    t.strictSame(warm.json, o.warmLeads(T), 'T warm leads, whole body');
  });
});
