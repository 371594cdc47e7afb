// Evidence and forum read models (citations, mentions, referrers, warm leads, forum metrics/leads/opportunities)
// against a small fixture whose expected values are worked out by hand in the comments.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createAjv } from '../../src/events';
import { uuidFrom } from '../../src/lib/ids';
import { ReadStore, type ReadArgs, type Endpoint } from '../../src/readmodels';
import { endpoint as citations } from '../../src/readmodels/endpoints/citations';
import { endpoint as mentions } from '../../src/readmodels/endpoints/mentions';
import { endpoint as referrers } from '../../src/readmodels/endpoints/referrers';
import { endpoint as warmLeads } from '../../src/readmodels/endpoints/warm-leads';
import { endpoint as forumMetrics } from '../../src/readmodels/endpoints/forum-metrics';
import { endpoint as forumLeads } from '../../src/readmodels/endpoints/forum-leads';
import { endpoint as forumOpportunities } from '../../src/readmodels/endpoints/forum-opportunities';
import { communityPlatform, normalizeDomain } from '../../src/readmodels/domains';
import { asSource, ev, id, run, W, world, type Ev } from '../helpers/events';
import { tmpDb } from '../helpers/db';
import { ROOT } from '../helpers/paths';
import { readArgs } from '../helpers/readmodels';

const A = W.engineA;
const B = W.engineB;
const unknownEngine = id(9, 'cccccccc');      // never upserted
const prompt3 = id(3, 'ffffffff');            // deleted below
const [U1, U2, U3, U4, U5, U6, U7, U8] = [
  'https://www.reddit.com/r/anvils/1',        // reddit.com
  'https://acme.com/blog',                    // own: project domain
  'https://docs.acmedocs.io/start',           // own: subdomain of the 'https://www.AcmeDocs.io/' domain term
  'https://wile.com/anvils',                  // competitor Wile
  'https://forum.smiths.org/t/9',             // a forum; subdomain of competitor Roadrunner's www.smiths.org
  'https://quora.com/q',                      // quora, cited once only
  'https://old-acme.com/x',                   // its term and its competitor are deleted: neither own nor competitor
  'https://acme.com/pricing',                 // own, second URL of acme.com
];

function titled(e: Ev, titles: Record<string, string>): Ev {
  for (const c of (e.data as { citations: Array<{ url: string; title?: string }> }).citations) {
    if (titles[c.url]) c.title = titles[c.url];
  }
  return e;
}

/**
 * Window: latest succeeded run is r1 on 01-10, so 01-04..01-10. Counted in it: r1, r2, r3, r6.
 * r4 is before the window; r5 failed; r7's prompt is deleted; r8's engine is unknown.
 */
function evidenceEvents(): Ev[] {
  return [
    ...world(),
    ev('term.upserted', { id: id(2, '33333333'), project_id: W.project, value: 'https://www.AcmeDocs.io/', kind: 'domain' }),
    ev('term.upserted', { id: id(3, '33333333'), project_id: W.project, value: 'old-acme.com', kind: 'domain' }),
    ev('term.deleted', { id: id(3, '33333333'), project_id: W.project }, '2026-01-02T00:00:00Z'),
    ev('competitor.upserted', { id: id(2, '99999999'), project_id: W.project, name: 'Roadrunner', domain: 'https://www.Smiths.org/', aliases: [] }),
    ev('competitor.upserted', { id: id(3, '99999999'), project_id: W.project, name: 'Gone', domain: 'old-acme.com', aliases: [] }),
    ev('competitor.deleted', { id: id(3, '99999999'), project_id: W.project }, '2026-01-02T00:00:00Z'),
    ev('prompt.upserted', { id: prompt3, project_id: W.project, text: 'deleted anvil', segment_ids: [], active: true }),
    ev('prompt.deleted', { id: prompt3, project_id: W.project }, '2026-01-02T00:00:00Z'),
    titled(run({ n: 1, prompt: W.prompt1, engine: A, day: '2026-01-10', brand: 1, citations: [U1, U2, U4] }), { [U1]: 'Anvil thread (new)' }),
    titled(run({ n: 2, prompt: W.prompt2, engine: B, day: '2026-01-09', brand: 2, competitor: 1, citations: [U1, U2, U5] }),
      { [U2]: 'Acme blog', [U5]: 'Smiths forum' }),
    titled(run({ n: 3, prompt: W.prompt1, engine: B, day: '2026-01-08', citations: [U1, U5, U6, U3] }),
      { [U1]: 'Anvil thread', [U5]: 'Old smiths' }),
    run({ n: 4, prompt: W.prompt1, engine: A, day: '2026-01-02', brand: 4, sentiment: 0.5, citations: [U6, U7, U1] }),
    run({ n: 5, prompt: W.prompt2, engine: A, day: '2026-01-10', status: 'failed', brand: 1, citations: [U6, U5] }),
    run({ n: 6, prompt: W.prompt2, engine: A, day: '2026-01-07', competitor: 2, citations: [U7, U4, U4, U8] }),
    run({ n: 7, prompt: prompt3, engine: A, day: '2026-01-09', brand: 3, citations: [U6] }),
    run({ n: 8, prompt: W.prompt1, engine: unknownEngine, day: '2026-01-09', brand: 1, citations: [U6] }),
  ];
}

const args = readArgs;

const ajv = createAjv();
const apiDir = path.join(ROOT, 'schemas', 'api');
for (const f of fs.readdirSync(apiDir).filter((f) => f.endsWith('.json')).sort()) {
  ajv.addSchema(JSON.parse(fs.readFileSync(path.join(apiDir, f), 'utf8')) as object);
}

function setup(events: Ev[]): (e: Endpoint, over?: Partial<ReadArgs>) => unknown {
  const { db, projector } = tmpDb();
  projector.applyBatch(asSource(events));
  return setupFrom(new ReadStore(db));
}

/** Builds a body and validates it against its schema before the test looks at it. */
function setupFrom(store: ReadStore): (e: Endpoint, over?: Partial<ReadArgs>) => unknown {
  return (e, over) => {
    const body = e.build(store, args(over));
    const validate = ajv.getSchema(`api/${e.schema}.json`)!;
    if (!validate(body)) throw new Error(`${e.name}: ${JSON.stringify(validate.errors)}`);
    return body;
  };
}

const at = (day: string): string => `${day}T12:00:00.000Z`;

t.test('citations: sums over the window, most cited first, own domains, titles', async (t) => {
  const get = setup(evidenceEvents());
  const body = get(citations) as Array<Record<string, unknown>>;
  // U1: r1 (A,p1,01-10), r2 (B,p2,01-09), r3 (B,p1,01-08) = 3. U2: r1, r2 = 2. U5: r2, r3 = 2. U4: r1, r6 = 2
  // (r6 cites it twice: once per run). U8, U3, U7, U6: 1 each (U6's other citers are all excluded).
  // Ties by url: acme.com/blog < forum.smiths < wile; acme.com/pricing < docs.acmedocs < old-acme < quora.
  t.strictSame(body.map((c) => [c.url, c.citation_count]), [[U1, 3], [U2, 2], [U5, 2], [U4, 2], [U8, 1], [U3, 1], [U7, 1], [U6, 1]]);
  t.strictSame(body[0], {
    url: U1, domain: 'reddit.com', title: 'Anvil thread (new)', citation_count: 3, prompt_count: 2, engine_ids: [A, B],
    is_own_domain: false, first_cited_at: at('2026-01-08'), last_cited_at: at('2026-01-10'),
  });
  // U2: the latest citation (r1, 01-10) has no title; the latest titled one is r2's.
  t.strictSame(body[1], {
    url: U2, domain: 'acme.com', title: 'Acme blog', citation_count: 2, prompt_count: 2, engine_ids: [A, B],
    is_own_domain: true, first_cited_at: at('2026-01-09'), last_cited_at: at('2026-01-10'),
  });
  // U4: r1 and r6 both on engine A, prompts p1 and p2.
  t.strictSame(body[3], {
    url: U4, domain: 'wile.com', title: null, citation_count: 2, prompt_count: 2, engine_ids: [A],
    is_own_domain: false, first_cited_at: at('2026-01-07'), last_cited_at: at('2026-01-10'),
  });
  t.strictSame(body.map((c) => c.is_own_domain), [false, true, false, false, true, true, false, false], 'acme.com, docs.acmedocs.io own; old-acme.com term deleted');
  t.equal((body[2] as { title: string }).title, 'Smiths forum', 'U5: r2 (01-09) is newer than r3 (01-08)');
});

t.test('citations: engine filter, limit, unknown engine, empty project', async (t) => {
  const get = setup(evidenceEvents());
  // Engine B: r2 and r3. U1 = 2, U5 = 2 (forum < www), then U2, U3, U6 with 1.
  const onB = get(citations, { engineIds: [B] }) as Array<Record<string, unknown>>;
  t.strictSame(onB.map((c) => [c.url, c.citation_count]), [[U5, 2], [U1, 2], [U2, 1], [U3, 1], [U6, 1]]);
  t.strictSame(onB[1], {
    url: U1, domain: 'reddit.com', title: 'Anvil thread', citation_count: 2, prompt_count: 2, engine_ids: [B],
    is_own_domain: false, first_cited_at: at('2026-01-08'), last_cited_at: at('2026-01-09'),
  });
  t.strictSame((get(citations, { limit: 2 }) as Array<{ url: string }>).map((c) => c.url), [U1, U2]);
  t.strictSame(get(citations, { engineIds: [unknownEngine] }), [], 'runs of an unknown engine never count');
  t.strictSame(get(citations, { projectId: W.otherProject }), []);
});

t.test('mentions: succeeded runs of counted prompts and engines, newest first, not windowed', async (t) => {
  const get = setup(evidenceEvents());
  const m = (n: number, idx: number): string => uuidFrom(`${id(n, '55555555')}/mention/${idx}`);
  // r2's brand (idx 0) and competitor (idx 1) mentions share observed_at: ordered by id.
  const r2 = [m(2, 0), m(2, 1)].sort();
  // r1 (01-10), r2 x2 (01-09), r6 (01-07), r4 (01-02, outside the window but a log is not windowed).
  // r5 failed, r7 prompt deleted, r8 engine unknown: excluded.
  const all = get(mentions) as Array<Record<string, unknown>>;
  t.strictSame(all.map((x) => x.id), [m(1, 0), ...r2, m(6, 0), m(4, 0)]);
  t.strictSame(all[4], {
    id: m(4, 0), prompt_run_id: id(4, '55555555'), run_group_id: W.group, prompt_id: W.prompt1, engine_id: A,
    entity_type: 'brand', competitor_id: null, name: 'Acme', position: 4, sentiment: 0.5, snippet: null,
    observed_at: at('2026-01-02'),
  });
  t.strictSame(all[3], {
    id: m(6, 0), prompt_run_id: id(6, '55555555'), run_group_id: W.group, prompt_id: W.prompt2, engine_id: A,
    entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 2, sentiment: null, snippet: null,
    observed_at: at('2026-01-07'),
  });
  t.strictSame((get(mentions, { entityType: 'competitor' }) as Array<{ id: string }>).map((x) => x.id), [m(2, 1), m(6, 0)]);
  t.strictSame((get(mentions, { entityType: 'brand' }) as Array<{ id: string }>).map((x) => x.id), [m(1, 0), m(2, 0), m(4, 0)]);
  t.strictSame((get(mentions, { limit: 2 }) as Array<{ id: string }>).map((x) => x.id), [m(1, 0), r2[0]]);
  t.strictSame((get(mentions, { engineIds: [B] }) as Array<{ id: string }>).map((x) => x.id), r2);
  t.strictSame((get(mentions, { engineIds: [A], entityType: 'brand', limit: 1 }) as Array<{ id: string }>).map((x) => x.id), [m(1, 0)]);
  t.strictSame(get(mentions, { engineIds: [unknownEngine] }), []);
});

t.test('referrers: per domain, share of all window citations, own and competitor flags', async (t) => {
  const get = setup(evidenceEvents());
  // acme.com = U2 (2) + U8 (1) = 3 over 2 URLs; reddit.com = 3; forum.smiths.org 2; wile.com 2;
  // docs.acmedocs.io, old-acme.com, quora.com 1 each. Total 3+3+2+2+1+1+1 = 13.
  const body = get(referrers);
  t.strictSame(body, [
    { domain: 'acme.com', citation_count: 3, url_count: 2, share: 3 / 13, engine_ids: [A, B], is_own_domain: true, is_competitor_domain: false },
    { domain: 'reddit.com', citation_count: 3, url_count: 1, share: 3 / 13, engine_ids: [A, B], is_own_domain: false, is_competitor_domain: false },
    { domain: 'forum.smiths.org', citation_count: 2, url_count: 1, share: 2 / 13, engine_ids: [B], is_own_domain: false, is_competitor_domain: true },
    { domain: 'wile.com', citation_count: 2, url_count: 1, share: 2 / 13, engine_ids: [A], is_own_domain: false, is_competitor_domain: true },
    { domain: 'docs.acmedocs.io', citation_count: 1, url_count: 1, share: 1 / 13, engine_ids: [B], is_own_domain: true, is_competitor_domain: false },
    { domain: 'old-acme.com', citation_count: 1, url_count: 1, share: 1 / 13, engine_ids: [A], is_own_domain: false, is_competitor_domain: false },
    { domain: 'quora.com', citation_count: 1, url_count: 1, share: 1 / 13, engine_ids: [B], is_own_domain: false, is_competitor_domain: false },
  ]);
  t.strictSame(get(referrers, { projectId: W.otherProject }), []);
});

t.test('warm leads: community pages cited at least twice in the window', async (t) => {
  const get = setup(evidenceEvents());
  // U1 reddit (3) and U5 forum (exactly 2) qualify; U6 quora has 1 in the window (its other citers do not
  // count); acme.com/blog has 2 but is no community.
  t.strictSame(get(warmLeads), [
    { url: U1, domain: 'reddit.com', platform: 'reddit', title: 'Anvil thread (new)', citation_count: 3, prompt_count: 2, engine_ids: [A, B], last_cited_at: at('2026-01-10') },
    { url: U5, domain: 'forum.smiths.org', platform: 'forum', title: 'Smiths forum', citation_count: 2, prompt_count: 2, engine_ids: [B], last_cited_at: at('2026-01-09') },
  ]);
  // A second quora citation inside the window lifts it to the threshold.
  const more = setup([...evidenceEvents(), run({ n: 9, prompt: W.prompt2, engine: B, day: '2026-01-06', citations: [U6] })]);
  // U1 3; then the 2s by url: forum.smiths.org < quora.com.
  t.strictSame((more(warmLeads) as Array<{ url: string; platform: string }>).map((w) => [w.url, w.platform]),
    [[U1, 'reddit'], [U5, 'forum'], [U6, 'quora']]);
  t.strictSame(get(warmLeads, { projectId: W.otherProject }), []);
});

t.test('domain helpers: normalization and community platforms', async (t) => {
  t.equal(normalizeDomain('https://www.AcmeDocs.io/about'), 'acmedocs.io');
  t.equal(normalizeDomain(' WWW.acme.com '), 'acme.com');
  t.equal(normalizeDomain('acme.com/path'), 'acme.com');
  t.equal(normalizeDomain(''), null);
  t.equal(normalizeDomain(null), null);
  const cases: Array<[string, string | null]> = [
    ['reddit.com', 'reddit'], ['old.reddit.com', 'reddit'], ['quora.com', 'quora'], ['stackexchange.com', 'stackexchange'],
    ['math.stackexchange.com', 'stackexchange'], ['stackoverflow.com', 'stackexchange'], ['news.ycombinator.com', 'hackernews'],
    ['ycombinator.com', null], ['forum.acme.com', 'forum'], ['forums.acme.com', 'forum'], ['community.acme.com', 'forum'],
    ['discuss.python.org', 'forum'], ['meta.discourse.org', 'forum'], ['acme.com', null], ['notreddit.com', null],
    ['myforum.acme.com', null],
  ];
  for (const [domain, platform] of cases) t.equal(communityPlatform(domain), platform, domain);
});

// ---- Forum

const P = (n: number): string => id(n, '12121212');
const day = (d: string, h = '10'): string => `2026-01-${d}T${h}:00:00.000Z`;

function discovered(n: number, platform: string, relevance: number, intent: string, d: string, extra: Record<string, unknown> = {}, project = W.project): Ev {
  return ev('forum_post.discovered', {
    id: P(n), project_id: project, platform, url: `https://example.com/post/${n}`, title: `Post ${n}`,
    discovered_at: day(d), relevance, intent, matched_terms: ['anvil'], ...extra,
  }, day(d));
}

function updated(n: number, fields: Record<string, unknown>, occurredAt: string): Ev {
  return ev('forum_post.updated', { id: P(n), project_id: W.project, ...fields }, occurredAt);
}

/**
 * P1 reddit 0.9 low (lead by relevance); P2 reddit 0.3 high (lead by intent); P3 hackernews 0.7 medium (lead:
 * the boundary); P4 reddit 0.5 medium, raised to 0.7 by an update that arrives BEFORE its discovery; P5 forum
 * 0.95 high, engaged on 01-08, then an older update (01-06: dismissed, score 50) arrives late: status stays
 * engaged, but its score (newer than the 01-03 discovery) becomes 50; P6 hackernews 0.8 low, dismissed; P9 forum 0.2 low (no lead).
 * P7 was only ever updated (never discovered); P8 belongs to the other project.
 */
function forumBatches(): Ev[][] {
  return [[
    ...world(),
    updated(4, { relevance: 0.7 }, day('08')),
    discovered(1, 'reddit', 0.9, 'low', '05', { community: 'r/anvils', author: 'coyote', posted_at: '2026-01-04T08:00:00Z', comment_count: 12, score: 40, matched_terms: ['anvil', 'acme'] }),
    discovered(2, 'reddit', 0.3, 'high', '06'),
    discovered(3, 'hackernews', 0.7, 'medium', '04'),
    discovered(4, 'reddit', 0.5, 'medium', '07'),
    discovered(5, 'forum', 0.95, 'high', '03', { score: 7 }),
    discovered(6, 'hackernews', 0.8, 'low', '02'),
    discovered(9, 'forum', 0.2, 'low', '01'),
    discovered(8, 'reddit', 0.9, 'high', '05', {}, W.otherProject),
    updated(5, { status: 'engaged' }, day('08')),
    updated(6, { status: 'dismissed' }, day('03')),
    updated(7, { status: 'engaged' }, day('03')),
  ], [
    updated(5, { status: 'dismissed', score: 50 }, day('06')),
  ]];
}

function forumSetup(): (e: Endpoint, over?: Partial<ReadArgs>) => unknown {
  const [first, late] = forumBatches();
  const { db, projector } = tmpDb();
  projector.applyBatch(asSource(first!));
  projector.applyBatch(asSource(late!, 'test', first!.length + 1));
  return setupFrom(new ReadStore(db));
}

t.test('forum opportunities: every discovered post, newest first, fields last-writer-wins', async (t) => {
  const get = forumSetup();
  const body = get(forumOpportunities) as Array<Record<string, unknown>>;
  // Discovered 01-07 P4, 01-06 P2, 01-05 P1, 01-04 P3, 01-03 P5, 01-02 P6, 01-01 P9; P7 and P8 absent.
  t.strictSame(body.map((p) => p.id), [P(4), P(2), P(1), P(3), P(5), P(6), P(9)]);
  t.strictSame(body.map((p) => p.is_lead), [true, true, true, true, true, true, false]);
  t.strictSame(body.map((p) => p.status), ['open', 'open', 'open', 'open', 'engaged', 'dismissed', 'open']);
  t.strictSame(body[2], {
    id: P(1), platform: 'reddit', url: 'https://example.com/post/1', title: 'Post 1', community: 'r/anvils', author: 'coyote',
    posted_at: '2026-01-04T08:00:00.000Z', discovered_at: day('05'), relevance: 0.9, intent: 'low', is_lead: true,
    status: 'open', matched_terms: ['anvil', 'acme'], comment_count: 12, score: 40,
  });
  t.strictSame(body[1], {
    id: P(2), platform: 'reddit', url: 'https://example.com/post/2', title: 'Post 2', community: null, author: null,
    posted_at: null, discovered_at: day('06'), relevance: 0.3, intent: 'high', is_lead: true,
    status: 'open', matched_terms: ['anvil'], comment_count: null, score: null,
  });
  t.equal(body[0]!.relevance, 0.7, 'P4: the update (01-08) is newer than the discovery (01-07) though it arrived first');
  t.equal(body[4]!.status, 'engaged', 'P5: the late 01-06 dismissal does not overwrite the 01-08 engagement');
  t.equal(body[4]!.score, 50, 'P5: the same late update carries the newest score (discovery was 01-03)');
  t.strictSame((get(forumOpportunities, { projectId: W.otherProject }) as Array<{ id: string }>).map((p) => p.id), [P(8)]);
});

t.test('forum leads: open leads by relevance, then newest, then id', async (t) => {
  const get = forumSetup();
  // Open leads: P1 0.9, P4 0.7 (01-07), P3 0.7 (01-04), P2 0.3. P5 engaged and P6 dismissed are out; P9 is no lead.
  t.strictSame((get(forumLeads) as Array<{ id: string }>).map((p) => p.id), [P(1), P(4), P(3), P(2)]);
});

t.test('forum metrics: counts, open leads, average relevance, per platform', async (t) => {
  const get = forumSetup();
  const m = get(forumMetrics) as { average_relevance: number } & Record<string, unknown>;
  // Relevances 0.7 + 0.3 + 0.9 + 0.7 + 0.95 + 0.8 + 0.2 = 4.55 over 7 posts = 0.65.
  t.ok(Math.abs(m.average_relevance - 0.65) < 1e-12, `average_relevance ${m.average_relevance}`);
  t.strictSame({ ...m, average_relevance: 0.65 }, {
    total_opportunities: 7, open_opportunities: 5, lead_count: 4, engaged_count: 1, dismissed_count: 1,
    average_relevance: 0.65, last_discovered_at: day('07'),
    by_platform: [
      { platform: 'forum', opportunities: 2, leads: 0 },        // P5 engaged, P9 no lead
      { platform: 'hackernews', opportunities: 2, leads: 1 },   // P3 (P6 dismissed)
      { platform: 'reddit', opportunities: 3, leads: 3 },       // P1, P2, P4
    ],
  });
  t.strictSame(get(forumMetrics, { projectId: id(3, 'bbbbbbbb') }), {
    total_opportunities: 0, open_opportunities: 0, lead_count: 0, engaged_count: 0, dismissed_count: 0,
    average_relevance: null, last_discovered_at: null, by_platform: [],
  });
  t.strictSame(get(forumLeads, { projectId: id(3, 'bbbbbbbb') }), []);
});
