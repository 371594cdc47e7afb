// Endpoints 1-11 over real HTTP: every body compared whole with what test/helpers/oracle-metrics.ts computes
// from the same event list (docs/metrics.md, the product spec), on a hand-built world made to break
// ties on every ordering key, with runs on the first and last instant of the window and just outside
// it, failed, corrected, duplicated and uncounted runs, and several engines to filter by.
import t, { type Test } from 'tap';
import { request, startApi, withKey, type Api } from '../helpers/http';
import { asSource, ev, id, sha256, type Ev } from '../helpers/events';
import { tmpDb } from '../helpers/db';
import { addDays, canonical, Oracle } from '../helpers/oracle-metrics';

// ---- The world. Ids are chosen so that id order differs from name order wherever a tie is broken.

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';
/** Explicit event ids for events that share an occurred_at: the higher id must win. */
const eid = (n: number): string => id(n, 'e1000000');

const ACC1 = id(1, 'aaaaaaaa');
const ACC2 = id(2, 'aaaaaaaa');
const ACC3 = id(3, 'aaaaaaaa');
const K1 = 'values-key-one';
const K2 = 'values-key-two';
const K3 = 'values-key-three';

const P = id(2, 'bbbbbbbb');          // 'Acme', the metrics project (acc1)
const PTWIN = id(1, 'bbbbbbbb');      // 'Acme' too (acc1): smaller id, listed first
const PBULK = id(3, 'bbbbbbbb');      // 'Bulk' (acc1): 40 days of runs, more than 100 cited URLs
const PSHARED = id(4, 'bbbbbbbb');    // 'Acme' (acc2), shared with acc1; its runs are later than P's
const PREVOKED = id(5, 'bbbbbbbb');   // 'Beta' (acc2): shared with acc1, then revoked
const PREGRANT = id(6, 'bbbbbbbb');   // 'Zed' (acc2): revoked, then granted again
const PTIE = id(7, 'bbbbbbbb');       // 'Tie' (acc2): granted and revoked at one instant; the revoke has the higher event id
const PDELETED = id(8, 'bbbbbbbb');   // 'Acme' (acc1): deleted
const PRENAMED = id(9, 'bbbbbbbb');   // acc1: two upserts at one instant; 'Delta' has the higher event id
const PTITLES = id(10, 'bbbbbbbb');   // 'Titles' (acc1): which title a cited URL shows

const E1 = id(3, 'cccccccc');         // 'ChatGPT'
const E2 = id(1, 'cccccccc');         // 'ChatGPT' as well: smaller id, so first among equals
const E3 = id(2, 'cccccccc');         // 'Perplexity': sorts after E1 by name, before it by id
const E4 = id(4, 'cccccccc');         // 'Gemini': known, never tracked by P; its runs count
const EUNK = id(9, 'cccccccc');       // never upserted: its runs never count

const S = {
  buyers1: id(3, 'dddddddd'), buyers2: id(1, 'dddddddd'), admins: id(2, 'dddddddd'),
  old: id(4, 'dddddddd'), gone: id(5, 'dddddddd'), empty: id(6, 'dddddddd'),
};
const PR = {
  a: id(5, 'ffffffff'),   // 'best anvil' (renamed from 'best anvils'), segments buyers2, buyers1
  b: id(2, 'ffffffff'),   // 'best anvil': ties with a, smaller id
  c: id(3, 'ffffffff'),   // 'anvil prices', inactive: its runs still count
  d: id(4, 'ffffffff'),   // 'zinc anvil', deleted: its runs stop counting
  e: id(6, 'ffffffff'),   // 'cheap anvil', upserted after its runs (a later batch)
  f: id(1, 'ffffffff'),   // 'anvil prices' after a same-instant tie of two upserts; ties with c
};
const C = {
  acme: id(5, '99999999'),    // 'Acme', the brand's name: the brand ranks before it on equal score
  wile1: id(2, '99999999'),   // 'Wile'
  wile2: id(1, '99999999'),   // 'Wile', smaller id
  road: id(3, '99999999'),    // 'Road Runner'
  gone: id(4, '99999999'),    // deleted: mentions ignored
  foreign: id(20, '99999999'), // PSHARED's 'Wile': mentions of it in P's runs are ignored
};
/** Tracked, never mentioned: with the four above, 12 competitors, so top_competitors cuts at 10 inside the Kappa tie. */
const ZEROS: Array<[number, string]> = [[16, 'Alpha'], [11, 'Alpha'], [12, 'Beta'], [13, 'Delta'], [14, 'Eta'], [17, 'Kappa'], [15, 'Kappa'], [18, 'Zeta']];

const project = (pid: string, account: string, name: string, extra: Record<string, unknown> = {}, at = T0, eventId?: string): Ev =>
  ev('project.upserted', { id: pid, company_id: account, name, status: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', ...extra }, at, eventId);

function catalog(): Ev[] {
  return [
    ev('account.upserted', { account_id: ACC1, name: 'One' }),
    ev('account.upserted', { account_id: ACC2, name: 'Two' }),
    ev('account.upserted', { account_id: ACC3, name: 'Three' }),
    ...[[1, ACC1, K1], [2, ACC2, K2], [3, ACC3, K3]].map(([n, account, key]) =>
      ev('api_key.issued', { key_id: id(n as number, '11111111'), account_id: account, key_sha256: sha256(key as string), issued_at: '2026-01-01T00:00:00Z' })),
    project(P, ACC1, 'Acme', { domain: 'acme.com', description: 'Anvils for everyone', category_summary: 'tools', updated_at: '2026-01-03T08:30:00+02:00' }),
    project(PTWIN, ACC1, 'Acme', { status: 'paused' }),
    project(PBULK, ACC1, 'Bulk', { domain: 'bulk.example' }),
    project(PSHARED, ACC2, 'Acme'),
    project(PREVOKED, ACC2, 'Beta'),
    project(PREGRANT, ACC2, 'Zed'),
    project(PTIE, ACC2, 'Tie'),
    project(PDELETED, ACC1, 'Acme'),
    ev('project.deleted', { id: PDELETED }, T1),
    project(PRENAMED, ACC1, 'Aardvark', {}, T1, eid(1)),
    project(PRENAMED, ACC1, 'Delta', {}, T1, eid(2)),
    project(PTITLES, ACC1, 'Titles'),
    ev('project.access_granted', { project_id: PSHARED, account_id: ACC1 }),
    ev('project.access_granted', { project_id: PREVOKED, account_id: ACC1 }),
    ev('project.access_revoked', { project_id: PREVOKED, account_id: ACC1 }, T1),
    ev('project.access_revoked', { project_id: PREGRANT, account_id: ACC1 }),
    ev('project.access_granted', { project_id: PREGRANT, account_id: ACC1 }, T1),
    ev('project.access_granted', { project_id: PTIE, account_id: ACC1 }, T1, eid(3)),
    ev('project.access_revoked', { project_id: PTIE, account_id: ACC1 }, T1, eid(4)),

    ev('engine.upserted', { id: E1, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o' }),
    ev('engine.upserted', { id: E2, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o-mini' }),
    ev('engine.upserted', { id: E3, name: 'Perplexity', provider: 'perplexity' }),
    ev('engine.upserted', { id: E4, name: 'Gemini', provider: 'google' }),
    ...[E1, E2, E3].flatMap((e) => [P, PBULK, PSHARED, PTITLES].map((p) => ev('project.engine_tracked', { project_id: p, engine_id: e, at: T0 }))),

    ev('segment.upserted', { id: S.buyers1, project_id: P, name: 'Buyers', active: true }),
    ev('segment.upserted', { id: S.buyers2, project_id: P, name: 'Buyers', description: 'people who buy', active: true }),
    ev('segment.upserted', { id: S.admins, project_id: P, name: 'Admins', active: true }),
    ev('segment.upserted', { id: S.old, project_id: P, name: 'Old', active: false }),
    ev('segment.upserted', { id: S.gone, project_id: P, name: 'Gone', active: true }),
    ev('segment.deleted', { id: S.gone, project_id: P }, T1),
    ev('segment.upserted', { id: S.empty, project_id: P, name: 'Empty', description: 'no prompts yet', active: true }, T1),

    ev('prompt.upserted', { id: PR.a, project_id: P, text: 'best anvils', segment_ids: [S.buyers2], active: true }),
    ev('prompt.upserted', { id: PR.a, project_id: P, text: 'best anvil', segment_ids: [S.buyers2, S.buyers1], active: true }, T1),
    ev('prompt.upserted', { id: PR.b, project_id: P, text: 'best anvil', segment_ids: [S.buyers1], active: true }),
    ev('prompt.upserted', { id: PR.c, project_id: P, text: 'anvil prices', segment_ids: [S.admins, S.old], active: false }),
    ev('prompt.upserted', { id: PR.d, project_id: P, text: 'zinc anvil', segment_ids: [S.buyers1], active: true }),
    ev('prompt.upserted', { id: PR.f, project_id: P, text: 'zzz losing upsert', segment_ids: [], active: true }, T1, eid(5)),
    ev('prompt.upserted', { id: PR.f, project_id: P, text: 'anvil prices', segment_ids: [S.admins], active: true }, T1, eid(6)),

    ev('competitor.upserted', { id: C.acme, project_id: P, name: 'Acme', domain: 'acme-rival.com', aliases: [] }),
    ev('competitor.upserted', { id: C.wile1, project_id: P, name: 'Wile', aliases: ['Wile E.'] }),
    ev('competitor.upserted', { id: C.wile2, project_id: P, name: 'Wile', domain: 'wile.com', aliases: [] }),
    ev('competitor.upserted', { id: C.road, project_id: P, name: 'Road Runner', domain: 'roadrunner.com', aliases: ['RR', 'Beep Beep'] }, T1),
    ev('competitor.upserted', { id: C.gone, project_id: P, name: 'Gone', aliases: [] }),
    ev('competitor.deleted', { id: C.gone, project_id: P }, T1),
    ev('competitor.upserted', { id: C.foreign, project_id: PSHARED, name: 'Wile', aliases: [] }),
    ...ZEROS.map(([n, name]) => ev('competitor.upserted', { id: id(n, '99999999'), project_id: P, name, aliases: [] })),

    ev('term.upserted', { id: id(1, '33333333'), project_id: P, value: 'Acme', kind: 'brand' }),
    ev('term.upserted', { id: id(2, '33333333'), project_id: P, value: 'WWW.Acme.io', kind: 'domain' }),
    ev('term.upserted', { id: id(3, '33333333'), project_id: P, value: 'acme.net', kind: 'domain' }),
    ev('term.deleted', { id: id(3, '33333333'), project_id: P }, T1),
    ...[P, PBULK, PSHARED, PTITLES].map((p, i) => ev('run_group.started', { id: id(i + 1, '77777777'), project_id: p, started_at: T0 })),
  ];
}

interface M { who: string; pos: number; s?: number; name?: string }
const B = (pos: number, s?: number): M => ({ who: 'brand', pos, s });
const Cm = (who: string, pos: number, s?: number): M => ({ who, pos, s });
interface Cite { url: string; title?: string }

interface RunSpec { project?: string; prompt: string; engine: string; at: string; status?: string; m?: M[]; c?: Array<string | Cite> }

/** A prompt_run.completed event; occurred_at is a second after completion unless given. */
function runEv(n: number, r: RunSpec, occurredAt?: string, eventId?: string): Ev {
  const project = r.project ?? P;
  const group = id([P, PBULK, PSHARED, PTITLES].indexOf(project) + 1, '77777777');
  return ev('prompt_run.completed', {
    id: id(n, '55555555'), run_group_id: group, project_id: project, prompt_id: r.prompt, engine_id: r.engine,
    status: r.status ?? 'succeeded', completed_at: r.at,
    mentions: (r.m ?? []).map((m) => m.who === 'brand'
      ? { entity_type: 'brand', name: 'Acme', position: m.pos, ...(m.s === undefined ? {} : { sentiment: m.s }) }
      : { entity_type: 'competitor', ...(m.who === '' ? {} : { competitor_id: m.who }), name: m.name ?? 'someone', position: m.pos, ...(m.s === undefined ? {} : { sentiment: m.s }) }),
    citations: (r.c ?? []).map((c) => (typeof c === 'string' ? { url: c } : c)),
  }, occurredAt ?? new Date(Date.parse(r.at) + 1000).toISOString(), eventId);
}

/** P's current window: 2026-03-14 .. 2026-03-20 (the day of its latest succeeded run). */
const D = '2026-03-20';
const U = {
  a: 'https://www.acme.com/a', blog: 'https://blog.acme.com/x', io: 'https://acme.io/p', notOwn: 'https://notacme.com/',
  caps: 'https://Acme.COM/Caps', net: 'https://acme.net/n', reddit: 'https://www.reddit.com/r/anvils',
};

const r1: RunSpec = { prompt: PR.a, engine: E1, at: '2026-03-20T23:59:59.999Z', m: [B(1, 0.5), Cm(C.wile1, 2), Cm(C.wile2, 4)],
  c: [{ url: U.a, title: 'Acme A' }, U.blog, U.blog] }; // the last instant of the window; U.blog twice in one answer counts once

/** P's runs that count (in and out of the window), then those that must not. */
function pRuns(): Ev[] {
  return [
    runEv(1, r1),
    // The first instant of the window. The brand twice: it counts once, at 2 with that mention's sentiment.
    runEv(2, { prompt: PR.b, engine: E2, at: '2026-03-14T00:00:00.000Z', m: [B(4, 1), B(2, -0.25), Cm(C.road, 2, 0.5)], c: [U.a, U.io, U.notOwn] }),
    // No brand; ignored: a deleted competitor, another project's competitor, a competitor without an id.
    runEv(3, { prompt: PR.a, engine: E3, at: '2026-03-17T12:00:00.000Z',
      m: [Cm(C.wile1, 4, -0.5), Cm(C.wile2, 2), Cm(C.acme, 2), Cm(C.gone, 1), Cm(C.foreign, 1), { who: '', pos: 1, name: 'Nobody Inc' }], c: [U.notOwn, U.caps] }),
    // The inactive prompt counts; same instant as run 3.
    runEv(4, { prompt: PR.c, engine: E1, at: '2026-03-17T12:00:00.000Z', m: [B(4), Cm(C.road, 4)], c: [U.notOwn, U.net] }),
    // Gemini: known, not tracked by P. Runs 5 and 21 give the brand and the competitor 'Acme' equal scores for engine_ids=E4.
    runEv(5, { prompt: PR.b, engine: E4, at: '2026-03-18T08:00:00.000Z', m: [B(1, 1), Cm(C.acme, 2)], c: [U.io, U.net] }),
    runEv(21, { prompt: PR.b, engine: E4, at: '2026-03-18T09:00:00.000Z', m: [Cm(C.acme, 1), B(2, 0.75), Cm(C.acme, 4, -1)] }), // 'Acme' twice: once, at 1
    runEv(6, { prompt: PR.f, engine: E2, at: '2026-03-20T00:00:00.000Z', m: [B(2, 0.5), Cm(C.acme, 1)], c: [{ url: U.reddit, title: 'Thread' }] }),
    runEv(20, { prompt: PR.a, engine: E2, at: '2026-03-20T00:00:00.000Z', m: [B(1)] }),
    // The prompt of run 7 arrives in a later batch.
    runEv(7, { prompt: PR.e, engine: E3, at: '2026-03-19T06:00:00.000Z', m: [B(8, -1)], c: [{ url: U.reddit, title: 'Thread v2' }] }),
    // No mentions. Its citation is the later one of 03-19 but its bucket (E2 < E3) is read first: first_cited_at is r7's.
    runEv(22, { prompt: PR.a, engine: E2, at: '2026-03-19T18:00:00.000Z', c: [U.reddit] }),
    // One millisecond before the window: daily and trend only. Its older title and time must not show in citations.
    runEv(15, { prompt: PR.a, engine: E1, at: '2026-03-13T23:59:59.999Z', m: [B(1, 1), Cm(C.wile1, 1)], c: [{ url: U.a, title: 'Old Acme A' }] }),
    // The first day of the 365-day trend, and the day before it (daily scores only).
    runEv(16, { prompt: PR.b, engine: E3, at: '2025-03-21T00:00:00.000Z', m: [B(2)] }),
    runEv(17, { prompt: PR.b, engine: E3, at: '2025-03-20T23:59:59.999Z', m: [B(4), Cm(C.road, 1)] }),
    // Two runs at one instant on an older day.
    runEv(18, { prompt: PR.a, engine: E2, at: '2026-02-01T12:00:00.000Z', m: [Cm(C.wile2, 1)] }),
    runEv(19, { prompt: PR.a, engine: E1, at: '2026-02-01T12:00:00.000Z', m: [B(2, 0.25)] }),
  ];
}

/** Runs that must never count, each for its own reason. */
function pUncounted(): Ev[] {
  return [
    runEv(8, { prompt: PR.d, engine: E1, at: '2026-03-19T10:00:00.000Z', m: [B(1), Cm(C.wile1, 1)], c: ['https://deleted-prompt.example/'] }),
    runEv(9, { prompt: PR.a, engine: EUNK, at: '2026-03-19T11:00:00.000Z', m: [B(1)], c: ['https://unknown-engine.example/'] }),
    runEv(10, { prompt: PR.a, engine: E1, at: '2026-03-18T10:00:00.000Z', status: 'failed', m: [B(1)], c: ['https://failed.example/'] }),
    // A failed run the day after: it does not move the window.
    runEv(14, { prompt: PR.a, engine: E1, at: '2026-03-21T10:00:00.000Z', status: 'failed', m: [B(1)] }),
    runEv(11, { prompt: PR.b, engine: E3, at: '2026-03-16T10:00:00.000Z', m: [B(1)], c: ['https://corrected.example/'] }),
    // A run of P naming another project's prompt (an upstream mix-up): it belongs to neither dashboard.
    runEv(23, { prompt: SP, engine: E1, at: '2026-03-18T12:00:00.000Z', m: [B(1)], c: ['https://cross-project.example/'] }),
  ];
}

/** The second batch: corrections, duplicates, the late prompt and a prompt deletion. */
function laterBatch(): Ev[] {
  return [
    runEv(11, { prompt: PR.b, engine: E3, at: '2026-03-16T10:00:00.000Z', status: 'failed', m: [B(1)], c: ['https://corrected.example/'] }, '2026-03-22T00:00:00.000Z'),
    runEv(1, r1, '2026-03-22T00:00:00.000Z'), // the same fact again under a new event id
    ev('prompt.upserted', { id: PR.e, project_id: P, text: 'cheap anvil', segment_ids: [], active: true }, '2026-03-19T00:00:00.000Z'),
    ev('prompt.deleted', { id: PR.d, project_id: P }, '2026-03-21T00:00:00.000Z'),
  ];
}

/** PSHARED: runs five days after P's, so a window not kept per project would move P's. */
const SP = id(20, 'ffffffff'); // PSHARED's prompt
function sharedRuns(): Ev[] {
  const sp = SP;
  return [
    ev('prompt.upserted', { id: sp, project_id: PSHARED, text: 'best anvil', segment_ids: [], active: true }),
    runEv(30, { project: PSHARED, prompt: sp, engine: E1, at: '2026-03-25T12:00:00.000Z', m: [B(1), Cm(C.foreign, 2)], c: [U.a] }),
    runEv(31, { project: PSHARED, prompt: sp, engine: E1, at: '2026-03-20T12:00:00.000Z', m: [B(2)], c: [U.a] }),
  ];
}

/**
 * PTITLES: one URL cited on one day in two buckets. Engine E1 titles it at 10:00 and cites it
 * untitled at 14:00; engine E3 titles it at 12:00. Its latest titled citation is E3's.
 */
const TITLED_URL = 'https://docs.example.org/guide';
function titleRuns(): Ev[] {
  const [tp1, tp2] = [id(30, 'ffffffff'), id(31, 'ffffffff')];
  return [
    ev('prompt.upserted', { id: tp1, project_id: PTITLES, text: 'anvil guide', segment_ids: [], active: true }),
    ev('prompt.upserted', { id: tp2, project_id: PTITLES, text: 'anvil manual', segment_ids: [], active: true }),
    runEv(40, { project: PTITLES, prompt: tp1, engine: E1, at: '2026-03-05T10:00:00.000Z', c: [{ url: TITLED_URL, title: 'Old title' }] }),
    runEv(41, { project: PTITLES, prompt: tp1, engine: E1, at: '2026-03-05T14:00:00.000Z', c: [TITLED_URL] }),
    runEv(42, { project: PTITLES, prompt: tp2, engine: E3, at: '2026-03-05T12:00:00.000Z', c: [{ url: TITLED_URL, title: 'New title' }] }),
  ];
}

/** PBULK: 40 days of runs ending 2026-03-10 (more than the 30 default daily rows), over 100 URLs cited in its window. */
function bulkRuns(): Ev[] {
  const prompts = [id(50, 'ffffffff'), id(51, 'ffffffff')];
  const out: Ev[] = [
    ...prompts.map((p, i) => ev('prompt.upserted', { id: p, project_id: PBULK, text: `bulk prompt ${i}`, segment_ids: [], active: true })),
    ev('competitor.upserted', { id: id(50, '99999999'), project_id: PBULK, name: 'Rival', aliases: [] }),
  ];
  let n = 100;
  for (let i = 0; i < 40; i++) {
    const day = addDays('2026-01-30', i);
    for (let k = 0; k < 1 + (i % 3); k++) {
      const pos = (i + k) % 5;
      const cites = day >= '2026-03-04' ? Array.from({ length: 25 }, (_, j) => `https://site${(i * 17 + k * 31 + j * 7) % 140}.example/p`) : [];
      out.push(runEv(n++, {
        project: PBULK, prompt: prompts[k % 2]!, engine: k % 2 ? E3 : E1, at: `${day}T0${k}:00:00.000Z`,
        m: [...(pos ? [B(pos, (pos - 3) / 4)] : []), ...(k === 1 ? [Cm(id(50, '99999999'), 3)] : [])], c: cites,
      }));
    }
  }
  return out;
}

// ---- Setup: three batches, so corrections, duplicates and late parents cross batch boundaries.

const batches: Ev[][] = [[...catalog(), ...pRuns(), ...pUncounted(), ...sharedRuns(), ...titleRuns(), ...bulkRuns()], laterBatch()];
const oracle = new Oracle(batches.flat());

let api: Api;
t.before(async () => {
  const { db, projector } = tmpDb();
  batches.forEach((b, i) => projector.applyBatch(asSource(b, `values-${i}`)));
  api = await startApi({ db });
  t.teardown(async () => {
    await api.close();
    db.close();
  });
});

async function get(path: string, key = K1): Promise<{ status: number; body: unknown }> {
  const r = await request(api.base + path, withKey(key));
  return { status: r.status, body: r.json };
}

/** GETs a path and compares the whole body with the oracle's (floats to 12 significant digits). */
async function same(tt: Test, path: string, expected: unknown, what = path, key = K1): Promise<unknown> {
  const r = await get(path, key);
  tt.equal(r.status, 200, `${what}: 200`);
  tt.strictSame(canonical(r.body), canonical(expected), what);
  return r.body;
}

const q = (engines: string[] | null, extra = ''): string => {
  const parts = [...(engines ?? []).map((e) => `engine_ids=${e}`), ...(extra ? [extra] : [])];
  return parts.length ? `?${parts.join('&')}` : '';
};
/** Engine filters: one engine, two (one in upper case, one repeated), the untracked one, and an engine no run may count for. */
const FILTERS: Array<{ label: string; ids: string[] | null; query: string }> = [
  { label: 'all engines', ids: null, query: '' },
  { label: 'E1', ids: [E1], query: q([E1]) },
  { label: 'E2+E3', ids: [E2, E3], query: q([E3.toUpperCase(), E2, E3]) },
  { label: 'E4 (untracked)', ids: [E4], query: q([E4]) },
  { label: 'unknown engine', ids: [EUNK], query: q([EUNK]) },
];

// ---- The fixture has what it claims: the oracle's own figures show each tie and edge.

t.test('the fixture exercises ties and window edges', async (tt) => {
  tt.same(oracle.window(P), { start: '2026-03-14', end: D }, 'P: the failed run of 03-21 does not move the window');
  tt.same(oracle.window(PSHARED), { start: '2026-03-19', end: '2026-03-25' });
  const v = oracle.visibility(P) as { top_competitors: Array<{ name: string; mention_rate: number }>; engine_breakdown: Array<{ name: string }> };
  const rates = new Map(v.top_competitors.map((c) => [c.name, c.mention_rate]));
  tt.equal(v.top_competitors.length, 10, 'top_competitors cut at 10 of 12');
  tt.equal(v.top_competitors[9]!.name, 'Kappa', 'the cut falls inside the Kappa tie');
  tt.equal(rates.get('Road Runner'), rates.get('Wile'), 'Road Runner and both Wiles tie on mention_rate');
  const ranks = oracle.competitorRankings(P) as Array<{ name: string; score: number }>;
  const wiles = ranks.filter((r) => r.name === 'Wile');
  tt.equal(wiles[0]!.score, wiles[1]!.score, 'the two Wiles tie on score');
  tt.equal(ranks.find((r) => r.name === 'Road Runner')!.score, wiles[0]!.score, 'Road Runner ties with them');
  const gemini = oracle.competitorRankings(P, [E4]) as Array<{ entity_type: string; name: string; score: number }>;
  tt.same(gemini.slice(0, 2).map((r) => [r.entity_type, r.name, r.score]), [['brand', 'Acme', 75], ['competitor', 'Acme', 75]], 'brand and competitor Acme tie for E4');
  const cites = oracle.citations(P) as Array<{ citation_count: number }>;
  tt.ok(cites.filter((c) => c.citation_count === 2).length >= 3, 'several URLs tie on citation_count');
  tt.ok(oracle.citations(PBULK, null, 1000).length > 100, 'PBULK cites more than 100 URLs in its window');
  tt.ok(oracle.dailyScores(PBULK, 365).length > 30, 'PBULK has more than 30 days');
});

// ---- Hand-computed anchors: the oracle itself checked against figures worked out on paper.

t.test('hand-computed figures for P agree with the oracle', async (tt) => {
  // Window runs 1, 2, 3, 4, 5, 21, 6, 20, 7, 22 (10 runs). Brand best positions: 1, 2, -, 4, 1, 2, 2, 1, 8, -.
  // rr = 1 + 1/2 + 0 + 1/4 + 1 + 1/2 + 1/2 + 1 + 1/8 = 4.875; sentiments 0.5, -0.25, 1, 0.75, 0.5, -1 (runs 4, 20 have none).
  // Competitor runs: Wile 2 + Wile 2 + Road Runner 2 + Acme 4 = 10; brand 8.
  // Wilson 95 % (z = 1.959964) bounds (2k + z^2 -/+ z sqrt(z^2 + 4k(n-k)/n)) / (2(n + z^2)), worked out with bc (40 digits), written to 15.
  const ci = (low: number, high: number) => ({ low, high });
  const v = oracle.visibility(P) as Record<string, unknown>;
  const { top_competitors: _top, prompt_breakdown: _prompts, engine_breakdown: _engines, ...totals } = v;
  tt.strictSame(canonical(totals), canonical({
    project_id: P, window_start: '2026-03-14', window_end: D, current_score: (100 * 4.875) / 10, mention_rate: 8 / 10,
    mention_rate_ci: ci(0.490162469122132, 0.943317849062233),   // 8 of 10 runs
    average_rank: 21 / 8, sentiment: 1.5 / 6, share_of_voice: 8 / 18,
    share_of_voice_ci: ci(0.245595180037967, 0.662835845065731), // 8 of 18 mentions
    prompt_count: 5, run_count: 10,
  }));
  const [of4in10, of4in18] = [ci(0.168180328526407, 0.687326232078805), ci(0.0900092804584554, 0.452145845060036)];
  const [of2in10, of2in18] = [ci(0.0566821509377669, 0.509837530877868), ci(0.0310195223647911, 0.327997653361097)];
  tt.strictSame(canonical((v.top_competitors as unknown[]).slice(0, 4)), canonical([
    { competitor_id: C.acme, name: 'Acme', mention_rate: 4 / 10, mention_rate_ci: of4in10, average_rank: 1.5, share_of_voice: 4 / 18, share_of_voice_ci: of4in18 },
    { competitor_id: C.road, name: 'Road Runner', mention_rate: 2 / 10, mention_rate_ci: of2in10, average_rank: 3, share_of_voice: 2 / 18, share_of_voice_ci: of2in18 },
    { competitor_id: C.wile2, name: 'Wile', mention_rate: 2 / 10, mention_rate_ci: of2in10, average_rank: 3, share_of_voice: 2 / 18, share_of_voice_ci: of2in18 },
    { competitor_id: C.wile1, name: 'Wile', mention_rate: 2 / 10, mention_rate_ci: of2in10, average_rank: 3, share_of_voice: 2 / 18, share_of_voice_ci: of2in18 },
  ]));
  tt.strictSame(oracle.projects(ACC1).map((p) => p.id), [PTWIN, P, PSHARED, PBULK, PRENAMED, PTITLES, PREGRANT]);
  tt.strictSame(oracle.projects(ACC2).map((p) => p.id), [PSHARED, PREVOKED, PTIE, PREGRANT]);
});

// ---- Over HTTP, endpoint by endpoint.

t.test('1 /projects: owned and shared, by name then id, for every account', async (tt) => {
  for (const [key, account] of [[K1, ACC1], [K2, ACC2], [K3, ACC3]] as const) {
    await same(tt, '/projects', oracle.projects(account), `projects of ${account}`, key);
  }
});

t.test('2 /projects/{id}: every field; 404 for deleted, revoked, tied-revoked and foreign projects', async (tt) => {
  for (const pid of [P, PTWIN, PBULK, PSHARED, PREVOKED, PREGRANT, PTIE, PDELETED, PRENAMED, PTITLES]) {
    const expected = oracle.project(ACC1, pid);
    if (expected) await same(tt, `/projects/${pid}`, expected);
    else {
      const r = await get(`/projects/${pid}`);
      tt.same([r.status, r.body], [404, { error: true, message: 'Not found' }], `${pid} is not visible to acc1`);
      // Its data is not reachable through the other endpoints either.
      tt.equal((await get(`/projects/${pid}/visibility`)).status, 404);
    }
  }
  tt.strictSame(oracle.project(ACC1, P)!.updated_at, '2026-01-03T06:30:00.000Z', 'times come back in UTC');
});

t.test('3 /visibility: whole report for each engine filter', async (tt) => {
  for (const f of FILTERS) await same(tt, `/projects/${P}/visibility${f.query}`, oracle.visibility(P, f.ids), `visibility, ${f.label}`);
  for (const pid of [PSHARED, PBULK, PTITLES]) await same(tt, `/projects/${pid}/visibility`, oracle.visibility(pid), `visibility of ${pid}`);
});

t.test('4 /visibility/timeseries: one point per day, 365 days, engines by name then id', async (tt) => {
  const points = await same(tt, `/projects/${P}/visibility/timeseries`, oracle.timeseries(P)) as Array<{ date: string }>;
  tt.equal(points[0]?.date, addDays(D, -364), 'the first day of the trend is D-364; D-365 is left out');
  for (const pid of [PSHARED, PBULK]) await same(tt, `/projects/${pid}/visibility/timeseries`, oracle.timeseries(pid));
});

t.test('5 /scores/daily: newest first, default 30, limit', async (tt) => {
  await same(tt, `/projects/${P}/scores/daily`, oracle.dailyScores(P));
  for (const limit of [1, 3, 365]) await same(tt, `/projects/${P}/scores/daily?limit=${limit}`, oracle.dailyScores(P, limit));
  await same(tt, `/projects/${PBULK}/scores/daily`, oracle.dailyScores(PBULK, 30), 'PBULK: the default is 30 rows');
  await same(tt, `/projects/${PBULK}/scores/daily?limit=365`, oracle.dailyScores(PBULK, 365));
  await same(tt, `/projects/${PBULK}/scores/daily?limit=31`, oracle.dailyScores(PBULK, 31));
});

t.test('6 /prompts: not deleted, by text then id', async (tt) => {
  for (const pid of [P, PSHARED, PBULK]) await same(tt, `/projects/${pid}/prompts`, oracle.prompts(pid));
});

t.test('7 /segments: active, by name then id, with prompt counts', async (tt) => {
  await same(tt, `/projects/${P}/segments`, oracle.segments(P));
  await same(tt, `/projects/${PBULK}/segments`, []);
});

t.test('8 /segments/analytics: each engine filter', async (tt) => {
  for (const f of FILTERS) await same(tt, `/projects/${P}/segments/analytics${f.query}`, oracle.segmentAnalytics(P, f.ids), `segment analytics, ${f.label}`);
});

t.test('9 /competitors: tracked, by name then id', async (tt) => {
  for (const pid of [P, PSHARED, PBULK]) await same(tt, `/projects/${pid}/competitors`, oracle.competitors(pid));
});

t.test('10 /competitor-rankings: each engine filter', async (tt) => {
  for (const f of FILTERS) await same(tt, `/projects/${P}/competitor-rankings${f.query}`, oracle.competitorRankings(P, f.ids), `rankings, ${f.label}`);
  await same(tt, `/projects/${PBULK}/competitor-rankings`, oracle.competitorRankings(PBULK));
});

/** engine_ids of a citation is a set: compared sorted. */
const sortedEngines = (rows: unknown): unknown =>
  (rows as Array<{ engine_ids: string[] }>).map((r) => ({ ...r, engine_ids: [...r.engine_ids].sort() }));

t.test('11 /citations: each engine filter, limit, default 100', async (tt) => {
  const check = async (path: string, expected: unknown[], what = path) => {
    const r = await get(path);
    tt.equal(r.status, 200, what);
    tt.strictSame(canonical(sortedEngines(r.body)), canonical(expected), what);
  };
  for (const f of FILTERS) await check(`/projects/${P}/citations${f.query}`, oracle.citations(P, f.ids), `citations, ${f.label}`);
  await check(`/projects/${P}/citations?limit=2`, oracle.citations(P, null, 2));
  await check(`/projects/${P}/citations${q([E1, E3], 'limit=3')}`, oracle.citations(P, [E1, E3], 3));
  await check(`/projects/${PBULK}/citations`, oracle.citations(PBULK), 'PBULK: the default is 100 rows');
  await check(`/projects/${PBULK}/citations?limit=1000`, oracle.citations(PBULK, null, 1000));
  await check(`/projects/${PSHARED}/citations`, oracle.citations(PSHARED));
});

t.test('11 /citations: title of the latest titled citation across buckets', async (tt) => {
  const expected = oracle.citations(PTITLES);
  tt.equal((expected[0] as { title: string }).title, 'New title', 'oracle: E3\'s citation at 12:00 is the latest titled one');
  const r = await get(`/projects/${PTITLES}/citations`);
  tt.strictSame(canonical(sortedEngines(r.body)), canonical(expected), 'title, counts and times of the one URL');
});

t.test('a shorter window (windowDays 3) moves every window-bound body', async (tt) => {
  const { db, projector } = tmpDb();
  batches.forEach((b, i) => projector.applyBatch(asSource(b, `values-${i}`)));
  const short = await startApi({ db, windowDays: 3 });
  tt.teardown(async () => {
    await short.close();
    db.close();
  });
  const o3 = new Oracle(batches.flat(), 3);
  const check = async (path: string, expected: unknown) => {
    const r = await request(short.base + path, withKey(K1));
    tt.strictSame(canonical(path.includes('/citations') ? sortedEngines(r.json) : r.json), canonical(expected), path);
  };
  await check(`/projects/${P}/visibility`, o3.visibility(P));
  await check(`/projects/${P}/segments/analytics`, o3.segmentAnalytics(P));
  await check(`/projects/${P}/competitor-rankings`, o3.competitorRankings(P));
  await check(`/projects/${P}/citations`, o3.citations(P));
  await check(`/projects/${P}/visibility/timeseries`, oracle.timeseries(P));
});
