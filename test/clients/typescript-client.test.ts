// The typed client (clients/typescript) against a live `serve --demo` process: typed calls
// return the API's bodies, cursor iteration yields every item once, RateLimit fields are surfaced.
import t from 'tap';
import { ApiError, createClient, nextLink, rateLimitOf } from '../../clients/typescript/src';
import { activeKeys } from '../helpers/demo';
import { request, withKey } from '../helpers/http';
import { startServe, type ServeProcess } from '../helpers/processes';

const key = activeKeys[0]!.key;

async function stop(p: ServeProcess): Promise<void> {
  p.child.kill('SIGTERM');
  await p.exited;
}

t.test('typed client against serve --demo', async (t) => {
  const serve = await startServe(['--demo', '--rate-limit', '0']); // the limiter off: no RateLimit fields (the next test turns it on)
  t.teardown(() => stop(serve));
  const origin = serve.base.replace(/\/v1\/public$/, '');
  const api = createClient({ baseUrl: origin, apiKey: key });

  const { data: projects, response } = await api.GET('/projects');
  t.equal(response.status, 200);
  t.same(projects, (await request(`${serve.base}/projects`, withKey(key))).json, 'the body of GET /projects');
  const project = projects![0]!.id;
  t.equal(api.lastRateLimit(), null, 'no RateLimit fields when the limiter is off');

  const vis = await api.GET('/projects/{project_id}/visibility', { params: { path: { project_id: project } } });
  t.same(vis.data, (await request(`${serve.base}/projects/${project}/visibility`, withKey(key))).json, 'a typed path parameter');
  t.type(vis.data!.engine_breakdown, Array, 'the body is typed (engine_breakdown)');

  const missing = await api.GET('/projects/{project_id}', { params: { path: { project_id: '00000000-0000-4000-8000-000000000000' } } });
  t.equal(missing.response.status, 404);
  t.match(missing.error, { error: true, message: 'Not found' }, 'the error body, typed as the document says');

  t.test('cursor iteration: every item once, in order', async (t) => {
    const all = (await request(`${serve.base}/projects/${project}/runs`, withKey(key))).json as Array<{ id: string }>;
    t.ok(all.length > 10, `the demo project has runs (${all.length})`);
    const seen: string[] = [];
    let pageCount = 0;
    for await (const page of api.pages('/projects/{project_id}/runs', { path: { project_id: project }, query: { limit: 7 } })) {
      pageCount += 1;
      t.ok(page.items.length <= 7);
      for (const run of page.items) seen.push(run.id);
    }
    t.equal(pageCount, Math.ceil(all.length / 7), 'one page per 7 runs');
    t.same(seen, all.map((r) => r.id), 'the whole list, each item once, in order');
    const mentions: unknown[] = [];
    for await (const m of api.items('/projects/{project_id}/mentions', { path: { project_id: project }, query: { limit: 50 } })) mentions.push(m);
    const direct = (await request(`${serve.base}/projects/${project}/mentions?limit=1000`, withKey(key))).json as unknown[];
    if (direct.length < 1000) t.same(mentions, direct, 'items() flattens the pages of mentions');
    else t.ok(mentions.length >= 1000);
  });

  t.test('a bad key throws ApiError from an iteration', async (t) => {
    const bad = createClient({ baseUrl: serve.base, apiKey: 'nope' });
    let caught: unknown = null;
    try {
      for await (const _ of bad.pages('/projects')) void _;
    } catch (e) {
      caught = e;
    }
    t.ok(caught instanceof ApiError, 'an ApiError');
    t.match(caught, { status: 401, body: { error: true, message: 'Invalid API key' } });
  });
});

t.test('RateLimit fields surfaced with serve --rate-limit', async (t) => {
  const serve = await startServe(['--demo', '--rate-limit', '3']);
  t.teardown(() => stop(serve));
  const api = createClient({ baseUrl: serve.base, apiKey: key });
  const first = await api.GET('/projects');
  const info = rateLimitOf(first.response);
  t.ok(info, 'parsed from the answer');
  t.match(info, { policy: String, quota: Number, windowSeconds: Number, remaining: Number, resetSeconds: Number });
  t.same(api.lastRateLimit(), info, 'the last answer\'s fields, kept by the client');
  // Over the quota: a 429 whose fields say none remain.
  let last = first.response;
  for (let i = 0; i < 50 && last.status !== 429; i++) last = (await api.GET('/projects')).response;
  t.equal(last.status, 429, 'the limit bites');
  t.equal(rateLimitOf(last)!.remaining, 0);
  t.equal(api.lastRateLimit()!.remaining, 0);
});

t.test('nextLink and rateLimitOf parse what the API sends', async (t) => {
  const r = (headers: Record<string, string>): Response => new Response(null, { headers });
  t.equal(nextLink(r({ link: '</v1/public/projects/x/runs?limit=2&cursor=abc>; rel="next"' })), '/v1/public/projects/x/runs?limit=2&cursor=abc');
  t.equal(nextLink(r({ link: '<a>; rel="prev", <b>; rel="next"' })), 'b');
  t.equal(nextLink(r({ link: '<a>; rel="prev"' })), null);
  t.equal(nextLink(r({})), null);
  t.same(rateLimitOf(r({ ratelimit: '"per-key";r=19;t=1', 'ratelimit-policy': '"per-key";q=20;w=2' })),
    { policy: 'per-key', quota: 20, windowSeconds: 2, remaining: 19, resetSeconds: 1 });
  t.equal(rateLimitOf(r({})), null);
});
