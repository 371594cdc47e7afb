// Isolation as a property (another account's data is a 404, whatever the request): in a seeded world of several accounts, every key
// (valid, revoked, unknown, none) against every id of every kind on every one of the 24 endpoints,
// over real HTTP, with ids mutated in case and format. The expectation of who sees what comes
// from test/helpers/isolation-world.ts's oracle (the events folded by the spec's rules), not from the
// service's SQL. Properties:
//  - a revoked, unknown or missing key gets the same 401 everywhere;
//  - an id the key's account may not see (another account's, deleted, never created, another kind
//    of id) answers exactly what an id that never existed answers: status, body bytes and headers
//    (a 400 for a malformed id differs only by the echoed id itself);
//  - a visible id answers 200, the same bytes whatever the case or %-encoding of the id, and no 200
//    body names a uuid or a text marker of a project the key's account may not see;
//  - /projects lists exactly the projects the oracle says, by name then id.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ENDPOINTS } from '../../src/readmodels';
import type { Projector } from '../../src/store';
import { asSource, sha256 } from '../helpers/events';
import { tmpDb } from '../helpers/db';
import { silentLogger } from '../../src/lib/log';
import { startApi, type Api } from '../helpers/http';
import { generateWorld, liveChanges, MARKER_IN_TEXT, oracle, rng, UUID_IN_TEXT, uuidOf, walkStrings, type Oracle, type World, type WorldKey } from '../helpers/isolation-world';

type Slot = 'account' | 'project' | 'run_group';
interface Ep {
  path: string;
  slot: Slot;
  /** Valid queries of the parameter kinds it takes (E0.. = engine ids), tried on every id. */
  good: string[];
  /** A malformed value of one of its parameters: must answer alike for a foreign and a missing id. */
  bad: string[];
}

// The 26 routes of the README, written out here (not taken from the service's table). {project} is the
// run group's own project (an id that is no group's: one that never existed).
const ENG = ['engine_ids=E0&engine_ids=E1', 'engine_ids=E3&engine_ids=E3'];
const EPS: Ep[] = [
  { path: '/projects', slot: 'account', good: [], bad: [] },
  { path: '/projects/{id}', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/visibility', slot: 'project', good: [...ENG, 'group_by=segment&group_by=engine&compare=previous_period'], bad: ['engine_ids=nope', 'group_by=day&group_by=week'] },
  { path: '/projects/{id}/visibility/timeseries', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/scores/daily', slot: 'project', good: ['limit=2'], bad: ['limit=0'] },
  { path: '/projects/{id}/prompts', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/segments', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/segments/analytics', slot: 'project', good: ENG, bad: ['engine_ids=E0&engine_ids=x'] },
  { path: '/projects/{id}/competitors', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/competitor-rankings', slot: 'project', good: ENG, bad: ['engine_ids='] },
  { path: '/projects/{id}/citations', slot: 'project', good: ['limit=3&engine_ids=E1', 'limit=1000'], bad: ['limit=1001'] },
  { path: '/projects/{id}/mentions', slot: 'project', good: ['entity_type=competitor&limit=5', 'entity_type=brand&engine_ids=E0'], bad: ['entity_type=rival', 'limit=2&limit=3'] },
  { path: '/projects/{id}/referrers', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/warm-leads', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/engines', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/terms', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/runs', slot: 'project', good: [], bad: [] },
  { path: '/runs/{id}', slot: 'run_group', good: [], bad: [] },
  { path: '/runs/{id}/results', slot: 'run_group', good: [], bad: [] },
  { path: '/projects/{project}/runs/{id}', slot: 'run_group', good: [], bad: [] },
  { path: '/projects/{project}/runs/{id}/results', slot: 'run_group', good: [], bad: [] },
  { path: '/projects/{id}/forum/metrics', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/forum/leads', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/forum/opportunities', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/dimensions', slot: 'project', good: [], bad: [] },
  { path: '/projects/{id}/signals', slot: 'project', good: ['compare=previous_period&engine_ids=E0', 'limit=3'], bad: ['limit=0', 'compare=previous_period&compare_start_date=2026-01-01&compare_end_date=2026-01-07'] },
];

/** How an id is written in the path. `same`: the service must treat it as the id itself. */
interface Mutation {
  name: string;
  apply(id: string): string;
  /** What the router hands the service (the decoded segment): it is echoed in a 400. */
  decoded(id: string): string;
  kind: 'same' | 'malformed' | 'either';
}
const mixedCase = (id: string): string => [...id].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
const pctAll = (s: string): string => [...Buffer.from(s)].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');
const MUTATIONS: Mutation[] = [
  { name: 'canonical', apply: (u) => u, decoded: (u) => u, kind: 'same' },
  { name: 'upper case', apply: (u) => u.toUpperCase(), decoded: (u) => u.toUpperCase(), kind: 'same' },
  { name: 'mixed case', apply: mixedCase, decoded: mixedCase, kind: 'same' },
  { name: '%-encoded dashes', apply: (u) => u.replace(/-/g, '%2D'), decoded: (u) => u, kind: 'same' },
  { name: 'all %-encoded', apply: pctAll, decoded: (u) => u, kind: 'same' },
  { name: 'no dashes', apply: (u) => u.replace(/-/g, ''), decoded: (u) => u.replace(/-/g, ''), kind: 'malformed' },
  { name: 'braces', apply: (u) => `%7B${u}%7D`, decoded: (u) => `{${u}}`, kind: 'malformed' },
  { name: 'trailing %20', apply: (u) => `${u}%20`, decoded: (u) => `${u} `, kind: 'malformed' },
  { name: 'leading %20', apply: (u) => `%20${u}`, decoded: (u) => ` ${u}`, kind: 'malformed' },
  { name: 'trailing newline', apply: (u) => `${u}%0A`, decoded: (u) => `${u}\n`, kind: 'malformed' },
  { name: 'urn prefix', apply: (u) => `urn:uuid:${u}`, decoded: (u) => `urn:uuid:${u}`, kind: 'malformed' },
  { name: 'one char short', apply: (u) => u.slice(0, -1), decoded: (u) => u.slice(0, -1), kind: 'malformed' },
  { name: 'extra char', apply: (u) => `${u}0`, decoded: (u) => `${u}0`, kind: 'malformed' },
  { name: 'NUL byte', apply: (u) => `${u}%00`, decoded: (u) => `${u}\u0000`, kind: 'malformed' },
  // Unspecified by the contract: either the id itself or what a missing id answers.
  { name: 'trailing slash', apply: (u) => `${u}/`, decoded: (u) => u, kind: 'either' },
];

interface Res {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Headers that may differ between two answers for reasons other than the data. */
// x-request-id: a random UUID per request, so it tells nothing about the data either.
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'x-request-id']);

class Client {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  requests = 0;
  constructor(private readonly api: Api) {}

  get(pathAndQuery: string, key: string | null): Promise<Res> {
    this.requests += 1;
    const headers: Record<string, string> = {};
    // Both ways of presenting a key, alternately.
    if (key !== null) {
      if (this.requests % 2) headers['x-api-key'] = key;
      else headers.authorization = `ApiKey ${key}`;
    }
    return new Promise((resolve, reject) => {
      const req = http.request(this.api.base + pathAndQuery, { agent: this.agent, headers, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (!VOLATILE.has(k)) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
          resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`timeout: ${pathAndQuery}`)));
      req.on('error', reject);
      req.end();
    });
  }
}

/** Runs tasks with at most `n` in flight. */
async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

const sameHeaders = (a: Res, b: Res): boolean => JSON.stringify(Object.entries(a.headers).sort()) === JSON.stringify(Object.entries(b.headers).sort());
const jsonInner = (s: string): string => JSON.stringify(s).slice(1, -1);

interface Tally {
  requests: number;
  checks: number;
  bodiesScanned: number;
  uuidsScanned: number;
  leaks: string[];
  bleeds: string[];
  failures: string[];
  nonEmpty: Set<string>;
}

interface SweepOptions {
  /** How many accounts' first keys go through every id on every endpoint. */
  fullAccounts: number;
  /** Only these projects (and their run groups); all ids when absent. */
  only?: Set<string>;
  /** Ids written other ways than the canonical one (default true). */
  mutations?: boolean;
}

/**
 * The sweep over one served world. The first key of `fullAccounts` accounts goes through every id
 * on every endpoint; the other keys (revoked, unknown, none, second keys) through every id on one
 * endpoint each, in rotation, so every endpoint still meets every kind of key.
 */
async function sweep(api: Api, world: World, o: Oracle, seed: number, opts: SweepOptions): Promise<Tally> {
  const { fullAccounts } = opts;
  const client = new Client(api);
  const tally: Tally = { requests: 0, checks: 0, bodiesScanned: 0, uuidsScanned: 0, leaks: [], bleeds: [], failures: [], nonEmpty: new Set() };
  const fail = (list: string[], msg: string): void => {
    if (list.length < 40) list.push(msg);
    else if (list.length === 40) list.push('... (more)');
  };
  const r = rng(seed);
  const allKnown = new Set<string>(Object.values(world.ids).flat());
  let nx = uuidOf(r);
  while (allKnown.has(nx)) nx = uuidOf(r);
  const withEngines = (q: string): string => q.replace(/E(\d)/g, (_, i: string) => world.engines[Number(i)]!);
  /** The id a written form stands for (a mixed-case or %-encoded uuid is the uuid itself), to find its group's project. */
  const canonical = (idText: string | null): string => {
    try {
      return decodeURIComponent(idText ?? '').toLowerCase();
    } catch {
      return '';
    }
  };
  const url = (ep: Ep, idText: string | null, q: string): string =>
    ep.path.replace('{project}', o.groupProject.get(canonical(idText)) ?? nx).replace('{id}', idText ?? '') + (q ? `?${withEngines(q)}` : '');

  // The ids tried in each slot: every project and run group, and a few ids of every other kind.
  const few = (kind: string, n: number): string[] => (world.ids[kind] ?? []).slice(0, n);
  const others = ['prompt_run', 'prompt', 'segment', 'competitor', 'term', 'forum_post', 'account', 'api_key', 'engine', 'mention'].flatMap((k) => few(k, 1));
  const slotIds: Record<Exclude<Slot, 'account'>, string[]> = {
    project: [...world.ids.project!, ...few('run_group', 1), ...others],
    run_group: [...world.ids.run_group!, ...world.ids.project!, ...others],
  };
  const projectOf = (slot: Slot, id: string): string | undefined => (slot === 'project' ? id : o.groupProject.get(id));
  const markerProject = new Map<string, string>();
  for (const [p, ms] of o.markersOf) for (const m of ms) if (!markerProject.has(m)) markerProject.set(m, p);

  interface KeyRun { k: WorldKey | null; account: string | null; full: boolean }
  const keyRuns: KeyRun[] = [];
  const firstOf = new Set<string>();
  for (const k of world.keys) {
    const account = k.status === 'valid' ? (o.accountOfKeyHash.get(sha256(k.key)) ?? null) : null;
    // The oracle must agree with the world's own label of the key: a check of the oracle itself.
    if ((account !== null) !== (k.status === 'valid')) fail(tally.failures, `oracle and world disagree about ${k.label}`);
    const full = account !== null && !firstOf.has(account) && firstOf.size < fullAccounts;
    if (account) firstOf.add(account);
    keyRuns.push({ k, account, full });
  }
  keyRuns.push({ k: null, account: null, full: false });

  for (const kr of keyRuns) {
    const key = kr.k?.key ?? null;
    const who = kr.k?.label ?? 'no key';
    const visible = kr.account ? (o.visible.get(kr.account) ?? new Set<string>()) : new Set<string>();
    const refs = new Map<string, Promise<Res>>();
    const canon = new Map<string, Res>();

    /** What an id that never existed answers on this endpoint, written this way, with this query (asked once). */
    const missing = (ep: Ep, m: Mutation, q: string): Promise<Res> => {
      const k = `${ep.path}|${m.name}|${q}`;
      let p = refs.get(k);
      if (!p) {
        refs.set(k, (p = client.get(url(ep, m.apply(nx), q), key).then((res) => {
          const want = kr.account === null ? 401 : m.kind === 'malformed' || ep.bad.includes(q) ? 400 : 404;
          tally.checks += 1;
          // A slash after an id inside a path ('/projects/<id>//visibility') is an unknown route: 404 before any key check.
          const unknownRoute = m.kind === 'either' && res.status === 404 && !ep.path.endsWith('{id}');
          if (res.status !== want && !unknownRoute) fail(tally.failures, `${who}: ${url(ep, m.apply('<missing>'), q)} answered ${res.status}, expected ${want}`);
          const wantBody = want === 401 ? '{"error":true,"message":"Invalid API key"}' : want === 404 ? '{"error":true,"message":"Not found"}' : null;
          if (wantBody !== null && !unknownRoute && res.body.toString() !== wantBody) fail(tally.failures, `${who}: ${want} body ${res.body.toString()}`);
          return res;
        })));
      }
      return p;
    };

    /** Checks a 200 body: every uuid and text marker in it must belong to a project in `scope`. */
    const scan = (res: Res, scope: Set<string>, what: string, ep: Ep): void => {
      let json: unknown;
      try {
        json = JSON.parse(res.body.toString());
      } catch {
        fail(tally.failures, `${who}: ${what}: 200 body is not JSON`);
        return;
      }
      tally.bodiesScanned += 1;
      if (Array.isArray(json) ? json.length > 0 : nonTrivial(json)) tally.nonEmpty.add(ep.path);
      const known = (u: string): boolean => world.engines.includes(u) || [...scope].some((p) => o.knownTo.get(p)?.has(u));
      const marked = (m: string): boolean => [...scope].some((p) => o.markersOf.get(p)?.has(m));
      const classify = (thing: string, owner: string | undefined): void => {
        const msg = `${who}: ${what} shows ${thing} of ${owner ?? 'nobody known'}`;
        if (owner && kr.account && visible.has(owner)) fail(tally.bleeds, msg);
        else fail(tally.leaks, msg);
      };
      walkStrings(json, (s) => {
        for (const raw of s.match(UUID_IN_TEXT) ?? []) {
          const u = raw.toLowerCase();
          tally.uuidsScanned += 1;
          if (!known(u)) classify(`uuid ${u}`, o.ownerOf.get(u));
        }
        for (const m of s.matchAll(MARKER_IN_TEXT)) if (!marked(m[1]!)) classify(`text "${s}"`, markerProject.get(m[1]!));
      });
    };

    const check = async (ep: Ep, id: string | null, m: Mutation, q: string): Promise<void> => {
      const path = url(ep, id === null ? null : m.apply(id), q);
      const res = await client.get(path, key);
      tally.checks += 1;
      const what = `GET ${path}`;
      if (ep.slot === 'account') {
        if (kr.account === null) {
          if (res.status !== 401 || res.body.toString() !== '{"error":true,"message":"Invalid API key"}') fail(tally.failures, `${who}: ${what} answered ${res.status}`);
          return;
        }
        if (res.status !== 200) return fail(tally.failures, `${who}: ${what} answered ${res.status}`);
        const want = [...visible].sort((a, b) => cmp(o.live.get(a)!.name, o.live.get(b)!.name) || cmp(a, b));
        const got = (JSON.parse(res.body.toString()) as Array<{ id: string }>).map((p) => p.id);
        if (JSON.stringify(got) !== JSON.stringify(want)) fail(tally.failures, `${who}: /projects listed ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
        scan(res, visible, what, ep);
        return;
      }
      const project = projectOf(ep.slot, id!);
      const sees = kr.account !== null && project !== undefined && visible.has(project);
      const ref = await missing(ep, m, q);
      // The answer for a missing id, byte for byte; a 400 may differ only by echoing this id in
      // place of the missing one (the message shows the input JSON-quoted, so as JSON inside JSON).
      const asMissing = (): boolean => {
        if (res.status !== ref.status || !sameHeaders(res, ref)) return false;
        if (res.body.equals(ref.body)) return true;
        if (res.status !== 400) return false;
        const e = JSON.parse(ref.body.toString()) as { error: boolean; message: string };
        const message = e.message.split(jsonInner(m.decoded(nx))).join(jsonInner(m.decoded(id!)));
        return JSON.stringify({ error: e.error, message }) === res.body.toString();
      };
      if (!sees || ep.bad.includes(q)) {
        if (!asMissing()) {
          const msg = `${who}: ${what} (${m.name}) answered ${res.status} ${res.body.toString().slice(0, 120)} ${JSON.stringify(res.headers)}; a missing id answers ${ref.status} ${ref.body.toString().slice(0, 120)} ${JSON.stringify(ref.headers)}`;
          // A visible body or a different answer for someone else's id: existence or data leaks.
          if (res.status === 200) fail(tally.leaks, msg);
          else fail(tally.failures, msg);
        }
        return;
      }
      if (m.kind === 'malformed') {
        if (!asMissing()) fail(tally.failures, `${who}: ${what} (${m.name}) answered ${res.status} ${res.body.toString().slice(0, 120)}, a missing id ${ref.status}`);
        return;
      }
      const canonKey = `${ep.path}|${id}|${q}`;
      if (m.name === 'canonical') {
        if (res.status !== 200) return fail(tally.failures, `${who}: ${what} answered ${res.status} ${res.body.toString().slice(0, 120)} for a visible id`);
        canon.set(canonKey, res);
        scan(res, new Set([project!]), what, ep);
        const body = JSON.parse(res.body.toString()) as Record<string, unknown>;
        if (ep.path === '/projects/{id}' && body.company_id !== o.live.get(id!)!.owner) fail(tally.failures, `${who}: ${what} company_id ${String(body.company_id)}`);
        if (ep.path.endsWith('/runs/{id}') && body.project_id !== project) fail(tally.failures, `${who}: ${what} project_id ${String(body.project_id)}`);
        return;
      }
      const c = canon.get(canonKey);
      if (!c) return fail(tally.failures, `${who}: no canonical answer for ${canonKey}`);
      const same = res.status === 200 && res.body.equals(c.body) && res.headers.etag === c.headers.etag;
      if (!same && !(m.kind === 'either' && asMissing())) {
        fail(tally.failures, `${who}: ${what} (${m.name}) answered ${res.status} ${res.body.toString().slice(0, 80)}, not the id's own body`);
      }
    };

    // Canonical ids first (their bodies are what the mutations must reproduce). A full key asks
    // every id on every endpoint (queries on projects and run groups only); the others one
    // endpoint per id, in rotation.
    const canonical: Array<[Ep, string | null, string]> = [];
    const mutated: Array<[Ep, string, Mutation]> = [];
    const rot = keyRuns.indexOf(kr);
    for (const ep of EPS) {
      if (ep.slot === 'account') {
        canonical.push([ep, null, '']);
        continue;
      }
      const ids = slotIds[ep.slot];
      ids.forEach((id, i) => {
        if (opts.only && !opts.only.has(projectOf(ep.slot, id) ?? '')) return;
        if (!kr.full && (i + rot + EPS.indexOf(ep)) % EPS.length !== 0) return;
        canonical.push([ep, id, '']);
        const ownKind = world.ids[ep.slot]!.includes(id);
        for (const q of [...ep.good, ...ep.bad]) if (ownKind && (kr.full || i % 3 === 0)) canonical.push([ep, id, q]);
      });
    }
    // Each id of the slot's own kind (other kinds are 404 in any form) written two ways per full
    // key, one way per other key, on one endpoint: over the keys, every way on every endpoint.
    let turn = rot * 5;
    const ways = MUTATIONS.length - 1;
    for (const slot of opts.mutations === false ? [] : (['project', 'run_group'] as const)) {
      const eps = EPS.filter((e) => e.slot === slot);
      for (const id of world.ids[slot]!) {
        turn += 1;
        const picks = kr.full ? [turn % ways, (turn + 7) % ways] : turn % 3 === 0 ? [turn % ways] : [];
        for (const w of picks) mutated.push([eps[(turn + w) % eps.length]!, id, MUTATIONS[1 + w]!]);
      }
    }
    // Mutated requests need the canonical body of their endpoint and id.
    for (const [ep, id] of mutated) if (!kr.full && !canonical.some(([e, i, q]) => e === ep && i === id && q === '')) canonical.push([ep, id, '']);
    await pool(canonical, 8, ([ep, id, q]) => check(ep, id, MUTATIONS[0]!, q));
    await pool(mutated, 8, ([ep, id, m]) => check(ep, id, m, ''));
    // Again, now that every body is cached: the hot path (node:http) must answer as Koa did.
    const again = canonical.filter(([ep, id, q]) => id !== null && !ep.bad.includes(q) && kr.account !== null && visible.has(projectOf(ep.slot, id) ?? ''));
    await pool(again, 8, async ([ep, id, q]) => {
      const res = await client.get(url(ep, id, q), key);
      tally.checks += 1;
      const c = canon.get(`${ep.path}|${id}|${q}`);
      if (!c || res.status !== 200 || !res.body.equals(c.body) || !sameHeaders(res, c)) fail(tally.failures, `${who}: ${url(ep, id, q)} answered differently the second time`);
    });
  }
  tally.requests = client.requests;
  client.agent.destroy();
  return tally;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function nonTrivial(v: unknown): boolean {
  if (!v || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  if ('run_count' in o) return (o.run_count as number) > 0;
  if ('total_opportunities' in o) return (o.total_opportunities as number) > 0;
  return true;
}

async function serveWorld(t: Test, world: World, seed: number, buildThreads: number): Promise<{ api: Api; projector: Projector }> {
  const { db, projector, file } = tmpDb();
  const r = rng(seed + 1);
  // Applied in batches of random sizes: batching must not matter either.
  let dead = 0;
  for (let i = 0; i < world.events.length;) {
    const n = 1 + Math.floor(r() * 200);
    dead += projector.applyBatch(asSource(world.events.slice(i, i + n), 'iso', i + 1)).deadLettered;
    i += n;
  }
  t.equal(dead, 0, `all ${world.events.length} events are valid`);
  const api = await startApi({ db, buildThreads, logger: silentLogger });
  t.teardown(async () => {
    await api.close();
    db.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
  return { api, projector };
}

function report(t: Test, label: string, tally: Tally, o: Oracle): void {
  const visibleCount = [...o.visible.values()].reduce((n, s) => n + s.size, 0);
  t.comment(`${label}: ${tally.requests} requests, ${tally.checks} checks, ${tally.bodiesScanned} bodies and ${tally.uuidsScanned} uuids scanned, ` +
    `${visibleCount} (account, project) grants of sight; ${tally.leaks.length} leaks, ${tally.bleeds.length} cross-project mix-ups, ${tally.failures.length} other failures`);
  t.same(tally.leaks, [], 'no answer reveals another account\'s data or existence');
  t.same(tally.bleeds, [], 'no body of one project shows data of another project of the same account');
  t.same(tally.failures, [], 'every answer is the one the oracle expects');
}

t.test('a consistent world: no key sees what it may not (build threads: 1)', async (t) => {
  const seed = 1010;
  const world = generateWorld({ seed });
  const o = oracle(world.events, world.engines);
  // The table above is the whole API: 26 routes, the same paths as the service's.
  const ours = EPS.map((e) => e.path.replace(/\{[a-z]+\}/, '<1>').replace(/\{[a-z]+\}/, '<2>')).sort();
  const theirs = ENDPOINTS.map((e) => e.path.replace(/:[a-z_]+/, '<1>').replace(/:[a-z_]+/, '<2>')).sort();
  t.same(ours, theirs, 'the 26 routes of the README');
  // The world has what the property needs: accounts that see nothing, several, and shared projects.
  const sizes = [...o.visible.values()].map((s) => s.size);
  t.ok(world.keys.length >= 10 && o.visible.size >= 5 && Math.max(...sizes) >= 4, `accounts see ${JSON.stringify(sizes)} projects`);
  const { api, projector } = await serveWorld(t, world, seed, 1);
  const tally = await sweep(api, world, o, seed, { fullAccounts: 7 });
  report(t, 'consistent world', tally, o);
  t.same(EPS.map((e) => e.path).filter((p) => !tally.nonEmpty.has(p)), [], 'every endpoint returned data for someone');

  // Changes while serving, after every answer above was cached and every key's sight remembered:
  // the next request already answers by the new state.
  const live = liveChanges(world);
  const batch = projector.applyBatch(asSource(live.events, 'live', 1));
  t.equal(batch.applied, live.events.length, 'the live changes applied');
  const after = oracle(live.world.events, world.engines);
  t.not(JSON.stringify([...after.visible].sort()), JSON.stringify([...o.visible].sort()), 'the changes change who sees what');
  const liveTally = await sweep(api, live.world, after, seed + 7, { fullAccounts: 7, only: live.touched, mutations: false });
  report(t, 'after live changes', liveTally, after);
});

t.test('a producer that mixes projects up: still nothing of another account shows (build threads: 0)', async (t) => {
  const seed = 2020;
  const world = generateWorld({ seed, crossRefs: true });
  const o = oracle(world.events, world.engines);
  const { api } = await serveWorld(t, world, seed, 0);
  const tally = await sweep(api, world, o, seed, { fullAccounts: 4 });
  report(t, 'mixed-up world', tally, o);
});
