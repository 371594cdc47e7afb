// One admission step for every transport (src/serve/http/admission.ts): over real HTTP, a GET of an
// endpoint, the change feed and POST /mcp answer in the same order (ready, key, parameters and
// scope, rate) with the same status and code, and a failure that becomes a 500 reaches the service's
// failure hook (what marks a corrupt file on /readyz) whichever transport met it.
import t from 'tap';
import { ENDPOINTS, type Endpoint } from '../../src/readmodels';
import { toolName } from '../../src/serve/mcp/mcp';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey, type Api } from '../helpers/http';
import { postMcp, toolCall } from '../helpers/mcp';

interface Seen {
  status: number;
  code: string | undefined;
  rateLimited: boolean;
}

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

/** The three surfaces, each asked as `key` (null: no key) for the same project with `query`. */
async function surfaces(api: Api, key: string | null, project: string, query = ''): Promise<Record<string, Seen>> {
  const origin = api.base.replace(/\/v1\/public$/, '');
  const opts = key === null ? {} : withKey(key);
  const seen = (r: { status: number; headers: Record<string, unknown> }): Seen =>
    ({ status: r.status, code: r.headers['x-error-code'] as string | undefined, rateLimited: r.headers['ratelimit'] !== undefined });
  const get = await request(`${api.base}/projects/${project}/visibility${query}`, opts);
  // HEAD: the feed's answer without its endless stream.
  const feed = await request(`${api.base}/projects/${project}/changes${query}`, { ...opts, method: 'HEAD' });
  const mcp = await postMcp(origin, key ?? '', TOOLS_LIST, key === null ? { 'x-api-key': '' } : {});
  return { get: seen(get), feed: seen(feed), mcp: seen(mcp) };
}

t.test('not ready, then ready: the same answer on every surface, in the same order', async (t) => {
  const { db } = await demoDb();
  let ready = false;
  const api = await startApi({ db, isReady: () => ready, rateLimit: 1000, rateLimitClock: () => 0 });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!;
  const project = ((await (async () => {
    ready = true;
    const r = await request(`${api.base}/projects`, withKey(key.key));
    ready = false;
    return r.json;
  })()) as Array<{ id: string }>)[0]!.id;

  const notReady: Seen = { status: 503, code: 'not_ready', rateLimited: false };
  for (const [who, k] of [['a bad key', 'not-a-key'], ['no key', null], ['a good key', key.key]] as const) {
    t.same(await surfaces(api, k, project), { get: notReady, feed: notReady, mcp: notReady }, `not ready, ${who}: 503 everywhere, before the key is looked at`);
  }

  ready = true;
  const unknownKey: Seen = { status: 401, code: 'invalid_api_key', rateLimited: false };
  t.same(await surfaces(api, 'not-a-key', project), { get: unknownKey, feed: unknownKey, mcp: unknownKey }, 'ready, a bad key: 401 everywhere, not charged');
  // A parameter the endpoints do not take: a 400 of a known key, which counts against its rate.
  const unknownParam: Seen = { status: 400, code: 'unknown_parameter', rateLimited: true };
  const bad = await surfaces(api, key.key, project, '?nope=1');
  t.same({ get: bad.get, feed: bad.feed }, { get: unknownParam, feed: unknownParam }, 'ready, a good key, a bad parameter: 400, charged, on the GET and the feed alike');
  const ok = await surfaces(api, key.key, project);
  t.same(ok, {
    get: { status: 200, code: undefined, rateLimited: true },
    feed: { status: 200, code: undefined, rateLimited: true },
    mcp: { status: 200, code: undefined, rateLimited: true },
  }, 'ready, a good key: answered and charged on every surface');
});

t.test('past the rate: 429 on every surface', async (t) => {
  const { db } = await demoDb();
  // The clock stopped: 1 a second is a burst of 2, and nothing refills it.
  const api = await startApi({ db, rateLimit: 1, rateLimitClock: () => 0, chargeBuildTime: false });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[1]!;
  const project = ((await request(`${api.base}/projects`, withKey(key.key))).json as Array<{ id: string }>)[0]!.id;
  await request(`${api.base}/projects`, withKey(key.key)); // the burst's second
  const over = await surfaces(api, key.key, project);
  t.same([over.get.status, over.feed.status, over.mcp.status], [429, 429, 429], '429 on the GET, the feed and POST /mcp');
  t.same([over.get.code, over.feed.code, over.mcp.code], ['rate_limited', 'rate_limited', 'rate_limited']);
});

t.test('a failure that becomes a 500 reaches the failure hook over HTTP and over MCP', async (t) => {
  const { db } = await demoDb();
  const failures: string[] = [];
  const throws: Endpoint = { ...ENDPOINTS[0]!, name: 'throws', path: '/throws', build: () => { throw new Error('the file is damaged'); } };
  const api = await startApi({ db, endpoints: [throws], onFailure: (err) => failures.push((err as Error).message) });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const get = await request(`${api.base}/throws`, withKey(key));
  t.equal(get.status, 500);
  t.same(failures, ['the file is damaged'], 'the GET\'s failure');
  const origin = api.base.replace(/\/v1\/public$/, '');
  const mcp = await postMcp(origin, key, JSON.stringify(toolCall(1, toolName(throws), {})));
  t.equal(mcp.status, 200, 'a tool error is a JSON-RPC answer');
  const answer = JSON.parse(mcp.text) as { result: { isError: boolean; structuredContent: { status: number } } };
  t.same([answer.result.isError, answer.result.structuredContent.status], [true, 500], 'the tool call answers a 500 tool error');
  t.same(failures, ['the file is damaged', 'the file is damaged'], 'and its failure reaches the hook too');
});
