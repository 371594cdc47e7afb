// Hot serving: ready bytes from the cache, no serialization or validation on a hit, never a stale body.
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import t from 'tap';
import { ENDPOINTS } from '../../src/readmodels';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey } from '../helpers/http';
import { asSource, ev, id } from '../helpers/events';
import { ROOT } from '../helpers/paths';

t.test('a cache hit does no JSON.stringify and no schema validation', async (t) => {
  const { db } = await demoDb();
  // Builds on the event loop, so this thread's counters see the misses' work too.
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const projects = (await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>;
  const urls = projects.flatMap((p) => [`/projects/${p.id}/visibility`, `/projects/${p.id}/citations?limit=5`, `/projects/${p.id}/forum/leads`]);
  for (const u of urls) t.equal((await request(api.base + u, withKey(key))).status, 200, `warm ${u}`);
  const checksBefore = api.service.schemas.checks;
  t.ok(checksBefore >= urls.length, 'misses were validated (the counter sees validation)');
  const realStringify = JSON.stringify;
  let stringified = 0;
  JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
    stringified += 1;
    return realStringify(...args);
  }) as typeof JSON.stringify;
  try {
    for (let round = 0; round < 5; round++) {
      for (const u of urls) {
        const r = await request(api.base + u, withKey(key, { 'accept-encoding': 'gzip, br' }));
        t.equal(r.status, 200);
      }
    }
  } finally {
    JSON.stringify = realStringify;
  }
  t.equal(stringified, 0, 'no JSON.stringify on hits');
  t.equal(api.service.schemas.checks, checksBefore, 'no ajv validation on hits');
  const stats = api.service.cache.stats('visibility');
  t.equal(stats.builds, projects.length, 'each visibility body was built once');
  t.equal(stats.hits, 5 * projects.length);
});

t.test('concurrent misses for one key build the body once', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const replies = await Promise.all(Array.from({ length: 40 }, () => request(`${api.base}/projects/${project}/competitor-rankings`, withKey(key))));
  t.ok(replies.every((r) => r.status === 200 && r.text === replies[0]!.text), 'all 40 got the same body');
  t.equal(api.service.cache.stats('competitor-rankings').builds, 1, 'built once');
});

t.test('--max-staleness 0: a new event changes X-Data-Version and the body at once: a stale body is never served', async (t) => {
  const { db, projector } = await demoDb();
  const api = await startApi({ db, maxStalenessMs: 0 });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string; name: string }>)[0]!;
  const url = `${api.base}/projects/${project.id}`;
  const before = await request(url, withKey(key));
  const again = await request(url, withKey(key));
  t.equal(again.headers['x-data-version'], before.headers['x-data-version'], 'unchanged data, same version');
  const renamed = { ...(before.json as Record<string, unknown>), name: 'Renamed Project', updated_at: '2026-12-01T00:00:00Z' };
  projector.applyBatch(asSource([ev('project.upserted', renamed, '2026-12-01T00:00:00Z')], 'hot-test'));
  const after = await request(url, withKey(key, { 'if-none-match': before.headers.etag! }));
  t.equal(after.status, 200, 'the old ETag no longer matches');
  t.equal((after.json as { name: string }).name, 'Renamed Project');
  t.ok(Number(after.headers['x-data-version']) > Number(before.headers['x-data-version']));
  t.not(after.headers.etag, before.headers.etag);
  t.equal(after.headers['cache-status'], undefined, 'never said stale');
});

t.test('the current window moves when a later day arrives, through HTTP', async (t) => {
  const { db, projector } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  // no-cache: the data committed before the request, not a body within the staleness bound.
  const vis = async (): Promise<{ window_start: string; window_end: string; run_count: number }> =>
    (await request(`${api.base}/projects/${project}/visibility`, withKey(key, { 'cache-control': 'no-cache' }))).json as { window_start: string; window_end: string; run_count: number };
  const before = await vis();
  t.equal(before.window_end, '2026-11-15', 'the demo ends on 2026-11-15');
  t.equal(before.window_start, '2026-11-09');
  const prompt = db.prepare('SELECT id FROM prompts WHERE project_id = ? AND deleted = 0 ORDER BY id LIMIT 1').pluck().get(project) as string;
  const engine = db.prepare('SELECT engine_id FROM project_engines WHERE project_id = ? AND tracked = 1 ORDER BY engine_id LIMIT 1').pluck().get(project) as string;
  const group = id(9001, '66666666');
  projector.applyBatch(asSource([
    ev('run_group.started', { id: group, project_id: project, started_at: '2026-11-20T08:00:00Z' }, '2026-11-20T08:00:00Z'),
    ev('prompt_run.completed', {
      id: id(9002, '66666666'), run_group_id: group, project_id: project, prompt_id: prompt, engine_id: engine, status: 'succeeded',
      completed_at: '2026-11-20T08:05:00Z', mentions: [{ entity_type: 'brand', name: 'X', position: 1 }], citations: [],
    }, '2026-11-20T08:05:01Z'),
  ], 'window-test'));
  const after = await vis();
  t.equal(after.window_end, '2026-11-20');
  t.equal(after.window_start, '2026-11-14');
  t.ok(after.run_count < before.run_count, 'fewer days of the demo remain in the window');
});

t.test('an engine rename reaches every cached project body that shows it', async (t) => {
  const { db, projector } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const url = `${api.base}/projects/${project}/engines`;
  const before = (await request(url, withKey(key))).json as Array<{ id: string; name: string; provider: string; model: string | null }>;
  const engine = before[0]!;
  projector.applyBatch(asSource([ev('engine.upserted', { id: engine.id, name: 'Renamed Engine', provider: engine.provider, model: engine.model }, '2026-12-01T00:00:00Z')], 'engine-test'));
  const after = (await request(url, withKey(key, { 'cache-control': 'no-cache' }))).json as Array<{ id: string; name: string }>;
  t.equal(after.find((e) => e.id === engine.id)!.name, 'Renamed Engine');
});

t.test('build threads give the same bytes as building on the event loop', async (t) => {
  const { db } = await demoDb();
  const inline = await startApi({ db, buildThreads: 0 });
  const threaded = await startApi({ db, buildThreads: 2 });
  t.teardown(async () => {
    await inline.close();
    await threaded.close();
    db.close();
  });
  const key = activeKeys[0]!.key;
  const project = ((await request(`${inline.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const group = db.prepare('SELECT id FROM run_groups WHERE project_id = ? ORDER BY started_at DESC LIMIT 1').pluck().get(project) as string;
  const paths = [
    '/projects', `/runs/${group}`, `/runs/${group}/results`,
    ...['', '/visibility', '/visibility/timeseries', '/scores/daily', '/prompts', '/segments', '/segments/analytics', '/competitors',
      '/competitor-rankings', '/citations', '/mentions', '/referrers', '/warm-leads', '/engines', '/terms', '/runs', '/forum/metrics',
      '/forum/leads', '/forum/opportunities', '/dimensions', '/signals', `/runs/${group}`, `/runs/${group}/results`].map((s) => `/projects/${project}${s}`),
  ];
  t.equal(paths.length, ENDPOINTS.length, 'every endpoint');
  for (const p of paths) {
    const [a, b] = await Promise.all([request(inline.base + p, withKey(key, { 'accept-encoding': 'br' })), request(threaded.base + p, withKey(key, { 'accept-encoding': 'br' }))]);
    t.equal(b.status, 200, p);
    t.equal(b.text, a.text, `${p}: same JSON`);
    t.equal(b.headers.etag, a.headers.etag, `${p}: same ETag`);
    t.equal(b.headers['x-data-version'], a.headers['x-data-version'], `${p}: same data version`);
  }
  t.equal(threaded.service.builder.built, paths.length, 'the threaded service built every body in its threads');
  t.equal(threaded.service.schemas.checks, 0, '... and validated none on the event loop');
});

t.test('a commit by another process is served on the next request', async (t) => {
  const { db, file } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const before = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string; name: string }>)[0]!;
  const full = (await request(`${api.base}/projects/${before.id}`, withKey(key))).json as Record<string, unknown>;
  const renamed = JSON.stringify(ev('project.upserted', { ...full, name: 'Renamed Elsewhere', updated_at: '2026-12-02T00:00:00Z' }, '2026-12-02T00:00:00Z'));
  // The writer is another process: this one's commit counter does not move, only SQLite's data_version.
  const code = `const { openDb, Projector } = require('./src/store');
    const db = openDb(${JSON.stringify(file)}); new Projector(db).applyBatch([{ raw: ${JSON.stringify(renamed)}, source: 'other-process', position: 1 }]); db.close();`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  // no-cache: SQLite is asked at once (not within the millisecond), and no body older than the commit serves.
  const after = (await request(`${api.base}/projects/${before.id}`, withKey(key, { 'cache-control': 'no-cache' }))).json as { name: string };
  t.equal(after.name, 'Renamed Elsewhere');
  const list = (await request(`${api.base}/projects`, withKey(key, { 'cache-control': 'no-cache' }))).json as Array<{ id: string; name: string }>;
  t.equal(list.find((p) => p.id === before.id)!.name, 'Renamed Elsewhere', 'the list too');
});

t.test('hits: the key from either header in any letter case; a repeated header gets what the Koa path says', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const url = `${api.base}/projects/${project}/terms`;
  const first = await request(url, withKey(key));
  t.equal(first.status, 200);
  const stats = api.service.cache.stats('terms');
  const variants: Array<Record<string, string>> = [{ 'X-Api-Key': key }, { AUTHORIZATION: `apikey ${key}` }, { 'x-api-key': ` ${key} `, 'Accept-Encoding': 'gzip' }];
  for (const headers of variants) {
    const hitsBefore = stats.hits;
    const r = await request(url, { headers });
    t.equal(r.status, 200, JSON.stringify(Object.keys(headers)));
    t.equal(r.text, first.text, 'the same body');
    t.equal(stats.hits, hitsBefore + 1, 'answered from the cache');
  }
  // node:http joins a repeated X-API-Key into "K, K": no such key, on either path. Sent over a raw
  // socket: http.request would not send the header twice.
  const { hostname, port, pathname } = new URL(url);
  const repeated = await new Promise<number>((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${key}\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`));
    let reply = '';
    socket.on('data', (c: Buffer) => (reply += c.toString('latin1')));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0)));
    socket.on('error', reject);
  });
  t.equal(repeated, 401, 'a repeated X-API-Key is not a key');
});
