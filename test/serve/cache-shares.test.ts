// The body cache shared fairly between accounts (cache.ts): when the cache is full, an account past
// its fair share evicts its own least recently used bodies first, so one account's stream of cache
// misses leaves another account's hot set cached. Real HTTP over loopback; whether a request was a
// hit is counted by the builds the service made (a hit builds nothing).
import t from 'tap';
import { freshDb } from '../helpers/db';
import { asSource, ev, run, W, world } from '../helpers/events';
import { request, startApi, withKey } from '../helpers/http';

/** Distinct keys: the project's visibility over ranges starting on day `i`, ending on one of two days. */
const keyPath = (project: string, i: number): string => {
  const start = `2026-01-${String(1 + (i % 28)).padStart(2, '0')}`;
  const end = i < 28 ? '2026-02-10' : '2026-02-20';
  return `/projects/${project}/visibility?start_date=${start}&end_date=${end}`;
};

function setupDb(tt: Parameters<typeof freshDb>[0]) {
  const { db, projector } = freshDb(tt);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 }), run({ n: 2, brand: 2, engine: W.engineB })]));
  return { db, projector };
}

t.test('one account\'s misses fill the cache: another account\'s hot set stays cached', async (t) => {
  const { db } = setupDb(t);
  // How much one body takes in the cache, from a service with room to spare.
  const probe = await startApi({ db, buildThreads: 0 });
  await request(probe.base + keyPath(W.otherProject, 0), withKey(W.otherKey));
  const entry = probe.service.cache.lru.calculatedSize;
  await probe.close();
  t.ok(entry > 0, `one body takes ${entry} bytes`);

  const api = await startApi({ db, buildThreads: 0, cacheMaxBytes: entry * 12 });
  t.teardown(() => api.close());
  const { cache, builder } = api.service;
  const hot = [0, 1, 2].map((i) => api.base + keyPath(W.otherProject, i));
  for (const url of hot) t.equal((await request(url, withKey(W.otherKey))).status, 200);
  const builtBefore = builder.built;
  for (let i = 0; i < 50; i++) t.equal((await request(api.base + keyPath(W.project, i), withKey(W.key))).status, 200);
  t.equal(builder.built - builtBefore, 50, 'every one of A\'s requests a miss');
  t.ok(cache.evictions >= 50 - 12, `the cache was full: ${cache.evictions} evictions`);
  const bytes = cache.accountBytes();
  t.ok((bytes.get(W.account) ?? 0) <= entry * 12 * 0.8, `A holds part of the cache (${bytes.get(W.account)} of ${entry * 12} bytes)`);
  const builtAfterFlood = builder.built;
  for (const url of hot) t.equal((await request(url, withKey(W.otherKey))).status, 200);
  t.equal(builder.built - builtAfterFlood, 0, 'B\'s hot set was all hits: nothing rebuilt');
  t.ok(cache.shareEvictions > 0, 'A\'s own entries were evicted to make room');
});

t.test('a body of a shared project is charged to the account that last read it', async (t) => {
  const { db, projector } = setupDb(t);
  projector.applyBatch(asSource([ev('project.access_granted', { project_id: W.otherProject, account_id: W.account }, '2026-01-02T00:00:00.000Z')], 'grant'));
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close());
  const url = api.base + keyPath(W.otherProject, 3);
  t.equal((await request(url, withKey(W.otherKey))).status, 200, 'built by its owner\'s request');
  const size = api.service.cache.accountBytes().get(W.otherAccount) ?? 0;
  t.ok(size > 0, 'charged to the owner');
  t.equal(api.service.cache.accountBytes().get(W.account), undefined, 'nothing to the other account yet');
  t.equal((await request(url, withKey(W.key))).status, 200, 'read by the account it is shared with');
  t.equal(api.service.cache.accountBytes().get(W.account), size, 'now charged to that account');
  t.equal(api.service.cache.accountBytes().get(W.otherAccount), undefined, 'and no longer to the owner');
});
