// The public API over real HTTP on loopback, against the demo world.
import { serviceVersion } from '../../src/lib/version';
import t from 'tap';
import { ENDPOINTS, type Endpoint } from '../../src/readmodels';
import { apiAjv } from '../helpers/readmodels';
import { activeKeys, demoDb, revokedKey } from '../helpers/demo';
import { request, startApi, withKey, type Api } from '../helpers/http';
import { capturedLogger } from '../helpers/log';

const NOT_FOUND = { error: true, message: 'Not found' };
const INVALID_KEY = { error: true, message: 'Invalid API key' };

// An independent validator of the bodies, built from schemas/api like the server's but not shared with it.
function schemaErrors(e: Endpoint, body: unknown): string | null {
  const v = apiAjv.getSchema(`api/${e.schema}.json`)!;
  return v(body) ? null : JSON.stringify(v.errors);
}

function endpointUrl(api: Api, e: Endpoint, ids: { project: string; group: string }): string {
  return api.base + e.path.replace(':project_id', ids.project).replace(':run_group_id', ids.group);
}

t.test('public API over HTTP', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  const allProjects = db.prepare('SELECT id, company_id FROM projects WHERE deleted = 0 ORDER BY id').all() as Array<{ id: string; company_id: string }>;
  const shared = db.prepare('SELECT project_id, account_id FROM project_access WHERE granted = 1').all() as Array<{ project_id: string; account_id: string }>;
  const groupOf = (projectId: string): string => db.prepare('SELECT id FROM run_groups WHERE project_id = ? ORDER BY started_at DESC LIMIT 1').pluck().get(projectId) as string;
  const key = activeKeys[0]!.key;
  const myProject = allProjects.find((p) => p.company_id === activeKeys[0]!.account_id)!.id;

  t.test('openapi.json needs no key and is a valid OpenAPI 3.1 document', async (t) => {
    const r = await request(`${api.base}/openapi.json`);
    t.equal(r.status, 200);
    const doc = r.json as { openapi: string; info: { version: string }; paths: Record<string, unknown>; components: { securitySchemes: Record<string, unknown> } };
    t.equal(doc.openapi, '3.1.0');
    t.equal(doc.info.version, serviceVersion(), "package.json's version");
    // The validator is an ES module; this test file is CommonJS.
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(doc as unknown as Parameters<InstanceType<typeof Validator>['validate']>[0]);
    t.same(result.errors ?? [], [], 'the validator finds no errors');
    t.ok(result.valid);
    t.same(Object.keys(doc.components.securitySchemes).sort(), ['ApiKeyAuthorization', 'ApiKeyHeader']);
    for (const e of ENDPOINTS) t.ok(doc.paths[e.path.replace(/:(\w+)/g, '{$1}')], `documents ${e.path}`);
  });

  t.test('401 for a missing, unknown or revoked key; both header forms work', async (t) => {
    const attempts: Array<Record<string, string>> = [{}, { 'x-api-key': 'nope' }, { 'x-api-key': revokedKey.key }, { authorization: `Bearer ${key}` }];
    for (const headers of attempts) {
      const r = await request(`${api.base}/projects`, { headers });
      t.equal(r.status, 401);
      t.same(r.json, INVALID_KEY);
    }
    t.equal((await request(`${api.base}/projects`, withKey(key))).status, 200);
    t.equal((await request(`${api.base}/projects`, { headers: { authorization: `ApiKey ${key}` } })).status, 200);
  });

  t.test('every endpoint answers every account with a body that matches its schema, and only for what it may see', async (t) => {
    for (const k of activeKeys) {
      const visible = new Set(allProjects.filter((p) => p.company_id === k.account_id || shared.some((s) => s.project_id === p.id && s.account_id === k.account_id)).map((p) => p.id));
      const listed = await request(`${api.base}/projects`, withKey(k.key));
      t.same((listed.json as Array<{ id: string }>).map((p) => p.id).sort(), [...visible].sort(), `${k.account} lists exactly its own and shared projects`);
      for (const p of allProjects) {
        const ids = { project: p.id, group: groupOf(p.id) };
        for (const e of ENDPOINTS.filter((e) => e.scope !== 'account')) {
          const r = await request(endpointUrl(api, e, ids), withKey(k.key));
          if (visible.has(p.id)) {
            t.equal(r.status, 200, `${k.account} ${e.name} of its project`);
            t.equal(schemaErrors(e, r.json), null, `${e.name} body matches schemas/api/${e.schema}.json`);
          } else {
            t.equal(r.status, 404, `${k.account} cannot reach ${e.name} of another account's project`);
            t.same(r.json, NOT_FOUND);
          }
        }
      }
    }
  });

  t.test('400 names the parameter and what it accepts', async (t) => {
    const cases: Array<[string, RegExp]> = [
      ['/projects/not-a-uuid', /project_id must be a uuid/],
      ['/runs/123', /run_group_id must be a uuid/],
      ['/runs/123/results', /run_group_id must be a uuid/],
      [`/projects/${myProject}/visibility?engine_ids=chatgpt`, /engine_ids must be repeated uuids/],
      [`/projects/${myProject}/citations?limit=0`, /limit must be an integer from 1 to 1000/],
      [`/projects/${myProject}/citations?limit=1001`, /limit must be an integer from 1 to 1000/],
      [`/projects/${myProject}/mentions?limit=abc`, /limit must be an integer from 1 to 1000/],
      [`/projects/${myProject}/mentions?limit=1.5`, /limit must be an integer/],
      [`/projects/${myProject}/scores/daily?limit=366`, /limit must be an integer from 1 to 365/],
      [`/projects/${myProject}/mentions?entity_type=product`, /entity_type must be one of brand, competitor/],
    ];
    for (const [path, message] of cases) {
      const r = await request(api.base + path, withKey(key));
      t.equal(r.status, 400, path);
      t.equal((r.json as { error: boolean }).error, true);
      t.match((r.json as { message: string }).message, message, path);
    }
  });

  t.test('limits and filters shape the rows', async (t) => {
    const daily = await request(`${api.base}/projects/${myProject}/scores/daily`, withKey(key));
    t.equal((daily.json as unknown[]).length, 30, 'daily scores default to 30 rows');
    const three = await request(`${api.base}/projects/${myProject}/mentions?limit=3&entity_type=competitor`, withKey(key));
    const rows = three.json as Array<{ entity_type: string }>;
    t.equal(rows.length, 3);
    t.ok(rows.every((m) => m.entity_type === 'competitor'));
    const engines = (await request(`${api.base}/projects/${myProject}/engines`, withKey(key))).json as Array<{ id: string }>;
    const one = engines[0]!.id;
    const filtered = (await request(`${api.base}/projects/${myProject}/visibility?engine_ids=${one.toUpperCase()}&engine_ids=${one}`, withKey(key))).json as { engine_breakdown: Array<{ engine_id: string }> };
    t.same(filtered.engine_breakdown.map((e) => e.engine_id), [one], 'repeated, any-case engine_ids restrict to that engine');
    const none = (await request(`${api.base}/projects/${myProject}/visibility?engine_ids=00000000-0000-4000-8000-000000000000`, withKey(key))).json as { run_count: number };
    t.equal(none.run_count, 0, 'an engine id that tracks nothing matches no runs');
  });

  t.test('unknown routes are 404, other methods 405 with Allow, HEAD mirrors GET', async (t) => {
    for (const path of ['/nope', `/projects/${myProject}/nope`]) {
      const r = await request(api.base + path, withKey(key));
      t.equal(r.status, 404, path);
      t.same(r.json, NOT_FOUND);
    }
    const unknownProject = await request(`${api.base}/projects/00000000-0000-4000-8000-000000000000`, withKey(key));
    t.same([unknownProject.status, unknownProject.json], [404, NOT_FOUND], 'an unknown project looks like another account\'s');
    const post = await request(`${api.base}/projects`, { method: 'POST', ...withKey(key) });
    t.equal(post.status, 405);
    t.match(post.headers.allow, /GET/);
    t.same(post.json, { error: true, message: 'Method not allowed' });
    const get = await request(`${api.base}/projects/${myProject}/visibility`, withKey(key));
    const head = await request(`${api.base}/projects/${myProject}/visibility`, { method: 'HEAD', ...withKey(key) });
    t.equal(head.status, 200);
    t.equal(head.raw.length, 0, 'HEAD has no body');
    t.equal(head.headers.etag, get.headers.etag);
    t.equal(head.headers['content-length'], get.headers['content-length']);
  });

  t.test('ETag and If-None-Match give 304; bodies are compressed when accepted', async (t) => {
    const url = `${api.base}/projects/${myProject}/visibility`;
    const first = await request(url, withKey(key));
    t.match(first.headers.etag, /^"[^"]+"$/, 'a strong ETag');
    t.equal(first.headers['cache-control'], 'private, no-cache');
    t.ok(Number(first.headers['x-data-version']) > 0);
    const again = await request(url, withKey(key, { 'if-none-match': first.headers.etag! }));
    t.equal(again.status, 304);
    t.equal(again.raw.length, 0);
    const gz = await request(url, withKey(key, { 'accept-encoding': 'gzip' }));
    t.equal(gz.headers['content-encoding'], 'gzip');
    t.ok(gz.raw.length < first.raw.length, 'gzip is smaller');
    t.equal(gz.text, first.text, 'same JSON once decompressed');
    const br = await request(url, withKey(key, { 'accept-encoding': 'gzip, br' }));
    t.equal(br.headers['content-encoding'], 'br');
    t.equal(br.text, first.text);
    t.equal((await request(url, withKey(key, { 'if-none-match': gz.headers.etag! }))).status, 304, 'the gzip ETag also validates');
  });
});

t.test('500 never shows internals and a body that fails its schema is never served', async (t) => {
  const { db } = await demoDb();
  const { logger, lines } = capturedLogger();
  const broken: Endpoint[] = [
    { ...ENDPOINTS[0]!, name: 'bad-body', path: '/bad-body', build: () => [{ id: 'not a project' }] },
    { ...ENDPOINTS[0]!, name: 'throws', path: '/throws', build: () => { throw new Error('secret table layout'); } },
  ];
  const api = await startApi({ db, endpoints: broken, logger });
  t.teardown(() => api.close().then(() => db.close()));
  for (const path of ['/bad-body', '/throws']) {
    const r = await request(api.base + path, withKey(activeKeys[0]!.key));
    t.equal(r.status, 500);
    t.same(r.json, { error: true, message: 'Internal server error' });
    t.notMatch(r.text, /secret|schema|not a project/);
  }
  const logged = lines.map((l) => JSON.stringify(l.err));
  t.match(logged[0], /bad-body body fails schemas\/api\/projects.json/, 'the schema failure is logged');
  t.match(logged[1], /secret table layout/);
  t.same(lines.map((l) => l.level), [50, 50], 'as errors');
});

t.test('503 while no read model is loaded; 429 past the per-key rate', async (t) => {
  const { db } = await demoDb();
  const loading = await startApi({ db, isReady: () => false });
  const r = await request(`${loading.base}/projects`, withKey(activeKeys[0]!.key));
  t.equal(r.status, 503);
  t.equal(r.headers['retry-after'], '1');
  await loading.close();
  const limited = await startApi({ db, rateLimit: 1, chargeBuildTime: false }); // one per request, whatever a build took
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await request(`${limited.base}/projects`, withKey(activeKeys[0]!.key))).status);
  t.same(statuses.slice(0, 2), [200, 200], 'a burst of 2 x rate passes');
  t.equal(statuses[3], 429);
  const other = await request(`${limited.base}/projects`, withKey(activeKeys[1]!.key));
  t.equal(other.status, 200, 'another key has its own budget');
  await limited.close();
  db.close();
});
