// Cursor pagination over real HTTP on loopback: walks that follow the Link header, with events ingested
// between pages, bad and foreign cursors, HEAD and 304 with the Link, on build threads and inline.
import t, { type Test } from 'tap';
import { createService } from '../../src/serve';
import { asSource, W } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { request, startApi, withKey, type Api, type Reply } from '../helpers/http';
import { arriving, identity, P2, pagedWorld } from '../helpers/paged-world';
import { runCli, startServe } from '../helpers/processes';

const LISTS: Array<{ name: string; path: string; query?: string }> = [
  { name: 'mentions', path: '/projects/:p/mentions', query: 'entity_type=brand&engine_ids=' + W.engineA },
  { name: 'mentions', path: '/projects/:p/mentions' },
  { name: 'citations', path: '/projects/:p/citations' },
  { name: 'runs', path: '/projects/:p/runs' },
  { name: 'forum-opportunities', path: '/projects/:p/forum/opportunities' },
  { name: 'forum-leads', path: '/projects/:p/forum/leads' },
];

type Item = Record<string, unknown>;
const NEXT = /^<(\/v1\/public\/[^>]+)>; rel="next"$/;

function listUrl(api: Api, path: string, query: string | undefined, project = W.project): string {
  return `${api.base}${path.replace(':p', project)}${query ? `?${query}` : ''}`;
}

/** The absolute URL a Link header names, or null when there is none (the last page). */
function nextUrl(api: Api, r: Reply): string | null {
  const link = r.headers.link;
  if (link === undefined) return null;
  const m = NEXT.exec(String(link));
  if (!m) throw new Error(`not a next link: ${String(link)}`);
  return new URL(m[1]!, api.base).toString();
}

/** Follows Link from `url` to the last page; `between` runs after each page. */
async function walk(api: Api, url: string, between: () => void = () => {}): Promise<{ items: Item[]; urls: string[] }> {
  const items: Item[] = [];
  const urls: string[] = [];
  for (let next: string | null = url; next !== null && urls.length < 500;) {
    const r = await request(next, withKey(W.key));
    if (r.status !== 200) throw new Error(`${next}: ${r.status} ${r.text}`);
    items.push(...(r.json as Item[]));
    urls.push(next);
    next = nextUrl(api, r);
    between();
  }
  return { items, urls };
}

async function world(t: Test, buildThreads: number): Promise<{ api: Api; ingest: (k: number) => void }> {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld()));
  const api = await startApi({ db, buildThreads });
  t.teardown(() => api.close());
  let position = 1_000_000;
  return {
    api,
    ingest: (k) => {
      const batch = arriving(k);
      projector.applyBatch(asSource(batch, 'arriving', position));
      position += batch.length;
    },
  };
}

/** The whole list as the data is now (no-cache: not a body within the staleness bound). */
async function whole(api: Api, l: (typeof LISTS)[number]): Promise<Item[]> {
  const r = await request(listUrl(api, l.path, [l.query, 'limit=1000'].filter(Boolean).join('&')), withKey(W.key, { 'cache-control': 'no-cache' }));
  t.equal(r.headers.link, undefined, `${l.name}: the whole list has no next page`);
  return r.json as Item[];
}

for (const buildThreads of [0, 2]) {
  t.test(`walks following Link (${buildThreads === 0 ? 'inline builds' : `${buildThreads} build threads`})`, async (t) => {
    const { api, ingest } = await world(t, buildThreads);

    t.test('with a small limit, the walk is the whole list, each item once; the Link keeps limit and filters', async (t) => {
      for (const l of LISTS) {
        const all = await whole(api, l);
        const { items, urls } = await walk(api, listUrl(api, l.path, [l.query, 'limit=7'].filter(Boolean).join('&')));
        const id = identity[l.name]!;
        t.same(items.map(id), all.map(id), `${l.name} ${l.query ?? ''}: ${urls.length} pages, the whole list in order`);
        t.equal(urls.length, Math.ceil(all.length / 7), `${l.name}: no empty last page`);
        for (const u of urls.slice(1)) {
          const q = new URL(u).searchParams;
          t.equal(q.get('limit'), '7', 'limit kept');
          if (l.query) {
            t.equal(q.get('entity_type'), 'brand', 'entity_type kept');
            t.same(q.getAll('engine_ids'), [W.engineA], 'engine_ids kept');
          }
        }
      }
    });

    t.test('while events are ingested between pages: every item of the list the walk began with, exactly once', async (t) => {
      let k = 0;
      for (const l of LISTS) {
        const before = (await whole(api, l)).map(identity[l.name]!);
        const { items } = await walk(api, listUrl(api, l.path, [l.query, 'limit=5'].filter(Boolean).join('&')), () => ingest((k += 1)));
        const seen = items.map(identity[l.name]!);
        t.equal(new Set(seen).size, seen.length, `${l.name}: no item twice`);
        t.same(seen.filter((i) => before.includes(i)), before, `${l.name}: every item that existed, in the first list's order`);
        const after = (await whole(api, l)).map(identity[l.name]!);
        t.not(after.join(), before.join(), `${l.name}: the list changed during the walk`);
      }
    });
  });
}

t.test('v1 requests: the same body as before, and a Link only where there is more', async (t) => {
  const { api } = await world(t, 0);
  for (const [path, total, v1Size] of [['/projects/:p/mentions', 180, 100], ['/projects/:p/citations', 90, 90]] as const) {
    const r = await request(listUrl(api, path, undefined), withKey(W.key));
    const all = await request(listUrl(api, path, 'limit=1000'), withKey(W.key));
    t.equal((all.json as Item[]).length, total);
    t.same(r.json, (all.json as Item[]).slice(0, v1Size), `${path}: the first ${v1Size} (limit default 100)`);
    t.equal(r.headers.link !== undefined, total > v1Size, `${path}: Link when more than the default limit`);
  }
  for (const path of ['/projects/:p/runs', '/projects/:p/forum/opportunities', '/projects/:p/forum/leads']) {
    const r = await request(listUrl(api, path, undefined), withKey(W.key));
    t.equal(r.headers.link, undefined, `${path}: no limit in v1, so the whole list and no Link`);
    t.ok((r.json as Item[]).length > 20);
  }
});

t.test('bad and foreign cursors: 400 naming cursor, nothing of another project', async (t) => {
  const { api } = await world(t, 0);
  const first = await request(listUrl(api, '/projects/:p/mentions', 'limit=3'), withKey(W.key));
  const next = nextUrl(api, first)!;
  const cursor = new URL(next).searchParams.get('cursor')!;
  const runsCursor = new URL(nextUrl(api, await request(listUrl(api, '/projects/:p/runs', 'limit=3'), withKey(W.key)))!).searchParams.get('cursor')!;
  // A cursor is base64url of its JSON and 16 bytes of HMAC: forgeries keep the signature of the real one.
  const bytes = Buffer.from(cursor, 'base64url');
  const [payload, signature] = [bytes.subarray(0, -16), bytes.subarray(-16)];
  const wire = JSON.parse(payload.toString()) as Record<string, unknown>;
  const forged = (over: Record<string, unknown>): string => Buffer.concat([Buffer.from(JSON.stringify({ ...wire, ...over })), signature]).toString('base64url');
  const unsigned = (over: Record<string, unknown>): string => Buffer.from(JSON.stringify({ ...wire, ...over })).toString('base64url');
  const bad: Array<[string, string]> = [
    ['not base64url', 'cursor=abc$def'],
    ['base64url of no JSON', `cursor=${Buffer.from('hello').toString('base64url')}`],
    ['another format version', `cursor=${forged({ f: 1 })}`],
    ['a sort key of objects', `cursor=${forged({ a: [{}] })}`],
    ['a version without an offset', `cursor=${forged({ v: 3 })}`],
    ['the JSON alone, unsigned', `cursor=${unsigned({})}`],
    ['another position with the real signature', `cursor=${forged({ a: ['2099-01-01T00:00:00.000Z', 'x'] })}`],
    ['a position made up, unsigned', `cursor=${unsigned({ a: ['2099-01-01T00:00:00.000Z', 'x'] })}`],
    ['a cursor of the old format (unkeyed binding)', `cursor=${Buffer.from(JSON.stringify({ f: 1, b: 'AAAAAAAAAAAAAAAA', a: wire.a })).toString('base64url')}`],
    ['repeated', `cursor=${cursor}&cursor=${cursor}`],
    ['empty', 'cursor='],
    ['too long', `cursor=${'A'.repeat(9000)}`],
    ['of another list (runs)', `cursor=${runsCursor}`],
    ['of another filter', `cursor=${cursor}&entity_type=brand`],
  ];
  for (const [why, query] of bad) {
    const r = await request(listUrl(api, '/projects/:p/mentions', `limit=3&${query}`), withKey(W.key));
    t.equal(r.status, 400, why);
    t.match(r.json, { error: true, message: /^cursor / }, `${why}: the message names cursor`);
  }
  // Another project of the same account: refused, not read.
  const other = await request(listUrl(api, '/projects/:p/mentions', `limit=3&cursor=${cursor}`, P2), withKey(W.key));
  t.equal(other.status, 400, "a cursor of project 1 on project 2 of the same key's account");
  t.match(other.json, { error: true, message: /^cursor / });
  // A project the key cannot see: the same 404 as without a cursor, so a cursor reveals nothing.
  const foreign = await request(listUrl(api, '/projects/:p/mentions', `limit=3&cursor=${cursor}`, W.otherProject), withKey(W.key));
  t.equal(foreign.status, 404);
  t.same(foreign.json, { error: true, message: 'Not found' });
  const stolen = await request(next, withKey(W.otherKey));
  t.equal(stolen.status, 404, "another account's key following the Link: 404, the project is not its own");
  t.equal((await request(next, withKey(W.key))).status, 200, 'the cursor itself is good');
  // Endpoints that do not page refuse cursor, like any parameter they do not take.
  const notPaged = await request(`${api.base}/projects/${W.project}/visibility?cursor=zzz`, withKey(W.key));
  t.same([notPaged.status, notPaged.headers['x-error-code']], [400, 'unknown_parameter'], 'visibility does not page: cursor is an unknown parameter');
});

t.test('HEAD and 304 carry the Link; a page is cached under its cursor', async (t) => {
  const { api } = await world(t, 0);
  const url = listUrl(api, '/projects/:p/citations', 'limit=10');
  const get = await request(url, withKey(W.key));
  const link = get.headers.link;
  t.match(link, NEXT);
  const head = await request(url, { ...withKey(W.key), method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.link, link, 'HEAD: the same Link');
  t.equal(head.raw.length, 0);
  const notModified = await request(url, withKey(W.key, { 'if-none-match': String(get.headers.etag) }));
  t.equal(notModified.status, 304);
  t.equal(notModified.headers.link, link, '304: the same Link');
  const page2 = nextUrl(api, get)!;
  const a = await request(page2, withKey(W.key));
  const hits = api.service.cache.stats('citations').hits;
  const b = await request(page2, withKey(W.key));
  t.equal(api.service.cache.stats('citations').hits, hits + 1, 'page 2 again: a cache hit');
  t.same(b.json, a.json);
  t.not(JSON.stringify(a.json), JSON.stringify(get.json), 'page 2 is not page 1: the cursor is in the cache key');
  const p2head = await request(page2, withKey(W.key, { 'if-none-match': String(a.headers.etag) }));
  t.equal(p2head.status, 304);
  t.equal(p2head.headers.link, a.headers.link, 'the hot path sends page 2 its own Link');
});

t.test('the OpenAPI document: cursor and the Link header on the five lists, and only there', async (t) => {
  const { api } = await world(t, 0);
  type Op = { parameters?: Array<{ name: string; schema: Record<string, unknown> }>; responses: Record<string, { headers?: Record<string, unknown> }> };
  const doc = (await request(`${api.base}/openapi.json`)).json as { paths: Record<string, { get: Op }> };
  const paged = new Set(['mentions', 'citations', 'runs', 'forum-leads', 'forum-opportunities']);
  for (const [path, { get: op }] of Object.entries(doc.paths)) {
    const name = (op as unknown as { operationId: string }).operationId;
    const pages = paged.has(name);
    t.equal((op.parameters ?? []).some((p) => p.name === 'cursor'), pages, `${path}: cursor ${pages ? '' : 'not '}documented`);
    for (const status of ['200', '304']) t.equal(op.responses[status]?.headers?.Link !== undefined, pages, `${path} ${status}: Link ${pages ? '' : 'not '}documented`);
    const limit = (op.parameters ?? []).find((p) => p.name === 'limit');
    if (['runs', 'forum-leads', 'forum-opportunities'].includes(name)) t.equal(limit?.schema.default, undefined, `${path}: limit without a default (none: the whole list)`);
  }
});

t.test('signing keys: each database its own; a configured secret shared by services of different databases', async (t) => {
  const a = await world(t, 0);
  const b = await world(t, 0);
  const path = '/projects/:p/mentions';
  const pageTwo = (api: Api): Promise<string> => request(listUrl(api, path, 'limit=3'), withKey(W.key)).then((r) => new URL(nextUrl(api, r)!).search);
  const fromA = await pageTwo(a.api);
  t.equal((await request(`${listUrl(a.api, path, undefined)}${fromA}`, withKey(W.key))).status, 200, "A's cursor on A");
  const onB = await request(`${listUrl(b.api, path, undefined)}${fromA}`, withKey(W.key));
  t.equal(onB.status, 400, "A's cursor on B, a database of the same events with a key of its own: refused");
  t.match(onB.json, { error: true, message: /^cursor is not a cursor of this list/ });

  // Replicas that each build their own database share a configured secret: cursors of one are good on
  // the other, on build threads too (the threads sign with the configured key, not the database's).
  const secret = 'x'.repeat(16) + 'configured-secret-for-tests';
  const shared = async (buildThreads: number): Promise<Api> => {
    const { db, projector } = freshDb(t);
    projector.applyBatch(asSource(pagedWorld()));
    const api = await startApi({ db, buildThreads, cursorSecret: secret });
    t.teardown(() => api.close());
    return api;
  };
  const [c, d] = [await shared(2), await shared(0)];
  for (const [from, to] of [[c, d], [d, c]] as const) {
    const { items } = await walk(to, listUrl(to, path, 'limit=7'));
    t.equal(items.length, 180, 'a walk on a service with the secret');
    const q = await pageTwo(from);
    t.equal((await request(`${listUrl(to, path, undefined)}${q}`, withKey(W.key))).status, 200, "one's cursor on the other");
  }
  const onA = await request(`${listUrl(a.api, path, undefined)}${await pageTwo(c)}`, withKey(W.key));
  t.equal(onA.status, 400, 'and refused by a service with another key');

  const { db } = freshDb(t);
  t.throws(() => createService({ db, cursorSecret: 'short' }), /cursor secret must be at least 32 characters/, 'a secret too short to be one is refused');
});

t.test('serve --cursor-secret / CURSOR_SECRET: two processes over databases of their own accept each other\'s cursors', async (t) => {
  const secret = 'f'.repeat(64);
  const short = await runCli(['serve', '--db', 'nowhere.db', '--cursor-secret', 'too-short']);
  t.equal(short.code, 2, 'a secret too short: a usage error');
  t.match(short.stderr, /^visibility-api serve: --cursor-secret must be at least 32 characters \(e\.g\. openssl rand -hex 32\), got 9\n$/);
  t.notMatch(short.stderr + short.stdout, /too-short/, 'the secret is never shown');
  const files = [freshDb(t), freshDb(t)].map(({ db, projector, file }) => {
    projector.applyBatch(asSource(pagedWorld()));
    db.close(); // the service opens the file itself
    return file;
  });
  const procs = [
    await startServe(['--db', files[0]!, '--cursor-secret', secret]),
    await startServe(['--db', files[1]!], { CURSOR_SECRET: secret }),
  ];
  t.teardown(async () => {
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
  });
  for (const [from, to] of [[procs[0]!, procs[1]!], [procs[1]!, procs[0]!]]) {
    const first = await request(`${from.base}/projects/${W.project}/mentions?limit=4&start_date=2026-01-02`, withKey(W.key));
    const next = /^<\/v1\/public([^>]+)>; rel="next"$/.exec(String(first.headers.link))![1]!;
    const there = await request(`${to.base}${next}`, withKey(W.key));
    t.equal(there.status, 200, 'the Link of one, followed on the other');
    t.same(there.json, (await request(`${from.base}${next}`, withKey(W.key))).json, 'the same page');
  }
});
