// Bounded staleness over real HTTP (src/serve/bodies/cache.ts): a cached body older than the data is served
// only within --max-staleness, with Cache-Status saying so and its own ETag / X-Data-Version; past the
// bound, or with Cache-Control: no-cache, the request waits for a body as new as the data; one build
// per key however many ask; --max-staleness 0 serves only bodies of the current data.
import t, { type Test } from 'tap';
import { STALE_CACHE_STATUS } from '../../src/serve/http/send';
import type { Db, Projector } from '../../src/store';
import { asSource, ev, id, run, W, world } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { request, startApi, withKey, type Api, type Reply } from '../helpers/http';
import { sleep } from '../helpers/wait';

const VIS = `/projects/${W.project}/visibility`;

let runN = 1000;
/** One committed batch: a run of the project (its visibility changes: one more run). */
function commit(projector: Projector): void {
  projector.applyBatch(asSource([run({ n: (runN += 1), brand: 1 })], `batch-${runN}`));
}

/** The data_version the project's bodies have now (their scopes: the project and the engines). */
function versionNow(db: Db): number {
  return db.prepare("SELECT coalesce(sum(version), 0) FROM data_versions WHERE scope IN (?, 'engines')").pluck().get(`project:${W.project}`) as number;
}

async function serve(t: Test, maxStalenessMs: number, buildThreads = 1, rebuildCoalesceMs?: number): Promise<{ db: Db; projector: Projector; api: Api; get: (h?: Record<string, string>) => Promise<Reply> }> {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  const api = await startApi({ db, maxStalenessMs, buildThreads, ...(rebuildCoalesceMs === undefined ? {} : { rebuildCoalesceMs }) });
  t.teardown(() => api.close());
  return { db, projector, api, get: (h = {}) => request(api.base + VIS, withKey(W.key, h)) };
}

const runCount = (r: Reply): number => (r.json as { run_count: number }).run_count;

/** Until the key's body is current again (the background rebuild landed). */
async function settled(get: () => Promise<Reply>): Promise<Reply> {
  for (;;) {
    const r = await get();
    if (r.headers['cache-status'] === undefined) return r;
    await sleep(10);
  }
}

t.test('within the bound: the old body, saying so with Cache-Status, its own ETag and X-Data-Version; one rebuild however many ask', async (t) => {
  const { projector, api, get } = await serve(t, 60_000);
  const before = await get();
  t.equal(before.headers['cache-status'], undefined, 'a current body says nothing');
  const stats = api.service.cache.stats('visibility');
  const builds = stats.builds;
  commit(projector);
  const first = await get({ 'if-none-match': String(before.headers.etag) });
  t.same([first.status, first.headers['cache-status']], [304, STALE_CACHE_STATUS], 'the old ETag matches the body sent, which says it is stale');
  // A stale answer 250 ms after the commit starts the rebuild: each answer is the old body or the new one, never a mix.
  const replies = await Promise.all(Array.from({ length: 30 }, () => get()));
  let stale = 0;
  for (const r of replies) {
    if (r.headers['cache-status'] === STALE_CACHE_STATUS) {
      stale += 1;
      t.equal(r.text, before.text, 'the old body');
      t.equal(r.headers.etag, before.headers.etag, 'with its own ETag');
      t.equal(r.headers['x-data-version'], before.headers['x-data-version'], 'and its own data version');
    } else {
      t.equal(r.headers['cache-status'], undefined);
      t.equal(runCount(r), runCount(before) + 1, 'the new body');
      t.not(r.headers.etag, before.headers.etag, 'with its own ETag');
      t.ok(Number(r.headers['x-data-version']) > Number(before.headers['x-data-version']), 'and its own data version');
    }
  }
  t.comment(`${stale} of ${replies.length} concurrent answers stale`);
  const after = await settled(get);
  t.equal(runCount(after), runCount(before) + 1, 'then the new body');
  t.ok(Number(after.headers['x-data-version']) > Number(before.headers['x-data-version']));
  t.equal(stats.builds, builds + 1, 'one rebuild for all of them');
  t.ok(stats.stale >= 1 + stale, 'counted as stale hits');
  t.equal((await get({ 'if-none-match': String(before.headers.etag) })).status, 200, 'the old ETag no longer matches');
});

t.test('commits within the coalescing time share one rebuild; the first request after it starts the rebuild', async (t) => {
  const coalesce = 3000; // long enough that a slow machine does the commits below within it
  const { projector, api, get } = await serve(t, 60_000, 1, coalesce);
  // The server knows a commit only as 'after its last check': it counts from then, at the earliest `asked`.
  const asked = performance.now();
  const before = await get();
  const stats = api.service.cache.stats('visibility');
  const builds = stats.builds;
  for (let i = 0; i < 3; i++) {
    commit(projector);
    const r = await get();
    t.equal(r.headers['cache-status'], STALE_CACHE_STATUS, `after commit ${i + 1}: the old body, stale`);
    t.equal(r.text, before.text);
  }
  if (performance.now() - asked < coalesce) t.equal(stats.builds, builds, 'no rebuild yet: the body is not coalesceMs behind');
  const after = await settled(get);
  t.ok(performance.now() - asked >= coalesce, 'the new body comes once the body was coalesceMs behind');
  t.equal(runCount(after), runCount(before) + 3, 'the new body has the three commits');
  t.equal(stats.builds, builds + 1, 'one rebuild for the three commits');
});

t.test('Cache-Control: no-cache waits for a body as new as the data committed when it arrived, sharing one build', async (t) => {
  const { projector, api, get } = await serve(t, 60_000);
  const before = await get();
  const stats = api.service.cache.stats('visibility');
  const builds = stats.builds;
  commit(projector);
  const fresh = await Promise.all(Array.from({ length: 20 }, () => get({ 'cache-control': 'no-cache' })));
  for (const r of fresh) {
    t.equal(runCount(r), runCount(before) + 1, 'the new data');
    t.equal(r.headers['cache-status'], undefined, 'not stale');
  }
  t.equal(stats.builds, builds + 1, 'one build for all of them');
  t.equal(runCount(await get()), runCount(before) + 1, 'and everyone else gets it from then on');
});

t.test('past the bound: never served; the request waits, and the waiting requests share one build', async (t) => {
  const { projector, api, get } = await serve(t, 300);
  const before = await get();
  const stats = api.service.cache.stats('visibility');
  const builds = stats.builds;
  commit(projector);
  await sleep(700); // nobody asked meanwhile: the server cannot tell the commit is younger than that
  const after = await Promise.all(Array.from({ length: 20 }, () => get()));
  for (const r of after) {
    t.equal(runCount(r), runCount(before) + 1, 'the new data');
    t.equal(r.headers['cache-status'], undefined);
  }
  t.equal(stats.builds, builds + 1, 'one build');
  const doc = (await request(`${api.base}/methodology`)).json as { freshness: { max_staleness_ms: number } };
  t.equal(doc.freshness.max_staleness_ms, 300, 'the methodology states the bound');
});

t.test('while commits stream in, no answer is further behind the data than the bound', async (t) => {
  const bound = 200;
  const { db, projector, get } = await serve(t, bound);
  // When each version stopped being the newest: the end of the commit that superseded it (a late
  // estimate of the commit, so the check below can only err in the server's favour).
  const supersededAt = new Map<number, number>();
  let writing = true;
  const writer = (async () => {
    while (writing) {
      const v = versionNow(db);
      commit(projector);
      supersededAt.set(v, performance.now());
      await sleep(30);
    }
  })();
  let answers = 0;
  let stale = 0;
  const worst: number[] = [];
  const until = performance.now() + 2000;
  while (performance.now() < until) {
    const sent = performance.now();
    const r = await get();
    if (r.status !== 200) t.fail(`${r.status} ${r.text}`);
    answers += 1;
    if (r.headers['cache-status'] !== undefined) stale += 1;
    const version = Number(r.headers['x-data-version']);
    // Versions between the body's and the newest: the first that superseded the body's is when it fell behind.
    const fell = Math.min(...[...supersededAt].filter(([v]) => v >= version).map(([, at]) => at));
    if (Number.isFinite(fell)) worst.push(sent - fell);
  }
  writing = false;
  await writer;
  const behind = Math.max(0, ...worst);
  t.ok(behind <= bound, `${answers} answers (${stale} stale) while ${supersededAt.size} batches committed: at most ${behind.toFixed(0)} ms behind when asked (bound ${bound} ms)`);
});

t.test('--max-staleness 0: only bodies of the current data, as before bounded staleness', async (t) => {
  const { projector, api, get } = await serve(t, 0);
  const stats = api.service.cache.stats('visibility');
  for (let i = 0; i < 5; i++) {
    const before = await get();
    const builds = stats.builds;
    commit(projector);
    const after = await Promise.all(Array.from({ length: 10 }, () => get()));
    for (const r of after) {
      t.equal(runCount(r), runCount(before) + 1, 'the new data at once');
      t.equal(r.headers['cache-status'], undefined, 'never stale');
    }
    t.equal(stats.builds, builds + 1, 'one build per commit');
  }
  t.equal(stats.stale, 0, 'no stale hit counted');
});

t.test('across a stream of runs the hot path keeps how requests resolve, yet a share revoked or a key revoked holds at the next request', async (t) => {
  const { projector, api, get } = await serve(t, 60_000);
  const other = `${api.base}/projects/${W.otherProject}`;
  projector.applyBatch(asSource([ev('project.access_granted', { project_id: W.otherProject, account_id: W.account }, '2026-02-01T00:00:00Z')], 'share'));
  t.equal((await request(other, withKey(W.key))).status, 200, 'the shared project');
  for (let i = 0; i < 5; i++) {
    commit(projector);
    t.equal((await get()).status, 200);
    t.equal((await request(other, withKey(W.key))).status, 200, 'still shared while runs arrive');
  }
  projector.applyBatch(asSource([ev('project.access_revoked', { project_id: W.otherProject, account_id: W.account }, '2026-02-02T00:00:00Z')], 'unshare'));
  t.equal((await request(other, withKey(W.key))).status, 404, 'unshared: 404 at once, the stale body is not served');
  commit(projector);
  t.equal((await get()).status, 200);
  projector.applyBatch(asSource([ev('api_key.revoked', { key_id: id(1, '11111111'), revoked_at: '2026-02-03T00:00:00Z' }, '2026-02-03T00:00:00Z')], 'revoke'));
  t.equal((await get()).status, 401, 'a revoked key: 401 at once');
});

let postN = 0;
/** One committed batch: a forum post of the project (its forum endpoints change, /visibility does not). */
function post(projector: Projector): string {
  const at = new Date(Date.UTC(2026, 2, 1, 0, 0, (postN += 1))).toISOString();
  projector.applyBatch(asSource([ev('forum_post.discovered', {
    id: id(postN, '44444444'), project_id: W.project, platform: 'reddit', url: `https://www.reddit.com/r/anvils/${postN}`, title: 'Anvils?',
    discovered_at: at, relevance: 0.9, intent: 'high', matched_terms: ['anvil'],
  }, at)], `forum-${postN}`));
  return at;
}

for (const bound of [60_000, 0]) {
  t.test(`--max-staleness ${bound}: a commit of what a body does not read leaves it current: no build, the same bytes and ETag, as of the new data version`, async (t) => {
    const { db, projector, api, get } = await serve(t, bound);
    const before = await get();
    const stats = api.service.cache.stats('visibility');
    const builds = stats.builds;
    for (let i = 0; i < 3; i++) {
      const asOf = post(projector);
      const version = versionNow(db);
      t.ok(version > Number(before.headers['x-data-version']), 'the project\'s data version moved');
      // What a client following the change feed asks after the event; then a conditional request, then a plain one.
      for (const r of [await get({ 'cache-control': 'no-cache' }), await get({ 'if-none-match': String(before.headers.etag) }), await get()]) {
        t.equal(Number(r.headers['x-data-version']), version, 'X-Data-Version: the data version after the post');
        t.equal(r.headers['x-data-as-of'], asOf, 'X-Data-As-Of: the post\'s time');
        t.equal(r.headers['last-modified'], new Date(db.prepare('SELECT updated_at FROM data_versions WHERE scope = ?').pluck().get(`project:${W.project}`) as string).toUTCString(), 'Last-Modified: the commit\'s');
        t.equal(r.headers.etag, before.headers.etag, 'the same ETag: the same bytes');
        t.equal(r.headers['cache-status'], undefined, 'current, not stale');
        if (r.status === 200) t.equal(r.text, before.text, 'the same body');
        else t.equal(r.status, 304, 'the old ETag still names the body');
      }
    }
    t.equal(stats.builds, builds, 'never rebuilt');
    t.equal(stats.kept, 3, 'kept current once per post');
    t.equal(stats.stale, 0, 'never served stale');
    const forum = await request(`${api.base}/projects/${W.project}/forum/metrics`, withKey(W.key, { 'cache-control': 'no-cache' }));
    t.equal((forum.json as { total_opportunities: number }).total_opportunities, 3, 'the forum endpoints do see the posts');
    // A run is what /visibility reads: rebuilt at once for a client that asks for the current data.
    commit(projector);
    const after = await get({ 'cache-control': 'no-cache' });
    t.equal(runCount(after), runCount(before) + 1, 'a run changes it');
    t.not(after.headers.etag, before.headers.etag);
    t.equal(Number(after.headers['x-data-version']), versionNow(db));
    t.equal(stats.builds, builds + 1, 'one build for the run');
  });
}
