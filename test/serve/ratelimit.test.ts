// Rate-limit headers: the IETF RateLimit-Policy and RateLimit fields on every
// answer to a rate-limited key, on the hot path and the Koa path, and Retry-After on 429. The
// limiter's clock is stopped (and moved by hand), so nothing here depends on timing.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { accountFigures, createMetrics, createOpsServer, Throttled } from '../../src/ops';
import { RateLimiter } from '../../src/serve/http/ratelimit';
import type { Served } from '../../src/serve/http/served';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey, type Reply } from '../helpers/http';

const RATE_LIMIT = /^"per-key";r=(\d+);t=(\d+)$/;

/** r and t of a RateLimit field; fails the test when the field is missing or malformed. */
function field(t: Test, value: string | string[] | null | undefined, what: string): { r: number; t: number } {
  const m = typeof value === 'string' ? RATE_LIMIT.exec(value) : null;
  t.ok(m, `${what}: RateLimit is "per-key";r=<n>;t=<n> (got ${String(value)})`);
  return { r: Number(m?.[1] ?? -1), t: Number(m?.[2] ?? -1) };
}

/**
 * A GET over a raw socket with the header lines as given. A repeated Accept-Encoding makes the hot
 * path hand the request to the Koa app (see hotHeaders in src/serve/http/hot.ts): a cache hit answered by Koa.
 */
function rawGet(url: string, lines: string[]): Promise<{ status: number; headers: Record<string, string> }> {
  const { hostname, port, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(`GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}\r\n${lines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n`));
    let reply = '';
    socket.on('data', (c: Buffer) => (reply += c.toString('latin1')));
    socket.on('end', () => {
      const [head = ''] = reply.split('\r\n\r\n');
      const [statusLine = '', ...rest] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of rest) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers });
    });
    socket.on('error', reject);
  });
}

/** POSTs `body` to /mcp on `agent` (one keep-alive connection); the reply and whether the connection was reused. */
function postMcp(agent: http.Agent, url: string, headers: Record<string, string | string[]>, body: string): Promise<Reply & { reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, raw, text, json, reused: req.reusedSocket });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('the limiter: policy from the rate, r counts down to 0, t until the bucket is full, then 429', (t) => {
  let now = 1_000;
  const limiter = new RateLimiter(5, () => now);
  t.equal(limiter.on, true);
  t.equal(limiter.policy, '"per-key";q=10;w=2', 'q = the burst (2 x rate), w = the seconds it takes to refill');
  const seen = Array.from({ length: 10 }, () => limiter.take('k'));
  t.same(seen.map((v) => (v === null ? null : field(t, v, 'take').r)), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0], 'r: the requests left after this one');
  t.equal(field(t, seen[0]!, 'first').t, 1, '1 request short of full: a fifth of a second, rounded up');
  t.equal(field(t, seen[9]!, 'last').t, 2, 'empty: 2 s to full');
  t.equal(limiter.take('k'), null, 'over the rate');
  const e = limiter.exceeded('k');
  t.equal(e.status, 429);
  t.same(e.headers, { 'Retry-After': '2', 'RateLimit-Policy': '"per-key";q=10;w=2', RateLimit: '"per-key";r=0;t=2' },
    'Retry-After is not earlier than the end of the effective window t');
  t.equal(field(t, limiter.take('other'), 'another key').r, 9, 'another key has its own bucket');
  now += 1_000; // 5 tokens back
  t.same(field(t, limiter.take('k'), 'a second later'), { r: 4, t: 2 });
  now += 60_000;
  t.same(field(t, limiter.take('k'), 'long idle'), { r: 9, t: 1 }, 'never more than the burst');
  const off = new RateLimiter(0);
  t.equal(off.on, false);
  t.equal(off.policy, '');
  t.end();
});

t.test('rate-limited key: the fields on hot hits, Koa answers, 304, 400, 404, and 429 with Retry-After', async (t) => {
  const { db } = await demoDb();
  let now = 0;
  // Every request counts one here: a build is not charged its time (ratelimit-cost.test.ts tests that).
  // The ops port's /metrics fed as the service's is (start/service-parts.ts): the per-account 429s.
  const served: Served[] = [];
  const throttled = new Throttled();
  const api = await startApi({ db, rateLimit: 5, rateLimitClock: () => now, chargeBuildTime: false, onResponse: (s) => {
    served.push(s);
    throttled.observe(s.status, s.accountId);
  } });
  const accounts = accountFigures(api.service.builder, api.service.cache, throttled);
  const ops = createOpsServer({ cache: api.service.cache, readiness: () => ({ ready: true, reasons: [] }), metrics: createMetrics(api.service.cache, undefined, undefined, undefined, accounts).render, accounts });
  await new Promise<void>((resolve) => ops.listen(0, '127.0.0.1', resolve));
  const opsUrl = `http://127.0.0.1:${(ops.address() as AddressInfo).port}`;
  t.teardown(() => {
    ops.close();
    return api.close().then(() => db.close());
  });
  const [a, b] = [activeKeys[0]!.key, activeKeys[1]!.key];
  const policy = '"per-key";q=10;w=2';
  const remaining: number[] = [];
  const check = (reply: { status: number; headers: Record<string, string | string[] | undefined> }, status: number, what: string): void => {
    t.equal(reply.status, status, what);
    t.equal(reply.headers['ratelimit-policy'], policy, `${what}: RateLimit-Policy`);
    const f = field(t, reply.headers.ratelimit, what);
    t.ok(f.t >= 1 && f.t <= 2, `${what}: t within the 2 s window`);
    remaining.push(f.r);
  };

  const projects = await request(`${api.base}/projects`, withKey(a));
  check(projects, 200, 'Koa path, a miss');
  const project = (projects.json as Array<{ id: string }>)[0]!.id;
  const url = `${api.base}/projects/${project}/visibility`;
  check(await request(url, withKey(a)), 200, 'Koa path, a miss');
  const hit = await request(url, withKey(a));
  check(hit, 200, 'hot path, a hit');
  const account = served.at(-1)!.accountId!;
  check(await request(url, withKey(a, { 'if-none-match': hit.headers.etag! })), 304, 'hot path, 304');
  check(await request(url, { ...withKey(a), method: 'HEAD' }), 200, 'hot path, HEAD');
  check(await rawGet(url, [`X-API-Key: ${a}`, 'Accept-Encoding: gzip', 'Accept-Encoding: br']), 200, 'Koa path, a hit');
  check(await request(`${api.base}/projects/00000000-0000-4000-8000-000000000000/visibility`, withKey(a)), 404, 'a project the key cannot see');
  check(await request(`${api.base}/projects/${project}/mentions?limit=0`, withKey(a)), 400, 'a bad parameter');
  check(await request(url, withKey(a)), 200, 'hot path');
  check(await request(url, withKey(a)), 200, 'hot path, the last request of the burst');
  t.same(remaining, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0], 'r counts every request of the key down by one, to 0 and no further');

  const hitsBefore = served.length;
  const limited: Array<[string, Reply]> = [
    ['429 for a hit (hot path)', await request(url, withKey(a))],
    // A repeated header makes the hot path hand the same request to Koa (hotHeaders in hot.ts).
    ['429 for a hit (Koa path)', await request(url, { headers: { 'x-api-key': a, 'x-request-id': ['one', 'two'] } })],
    ['429 for a miss (the hot path resolves it, has no body)', await request(`${api.base}/projects/${project}/terms`, withKey(a))],
  ];
  for (const [what, r] of limited) {
    t.equal(r.status, 429, what);
    t.same(r.json, { error: true, message: 'Rate limit of 5 requests per second per API key exceeded' });
    t.equal(r.headers['ratelimit-policy'], policy);
    const f = field(t, r.headers.ratelimit, what);
    t.equal(f.r, 0, `${what}: r=0`);
    t.ok(Number(r.headers['retry-after']) >= f.t && f.t >= 1, `${what}: Retry-After (${String(r.headers['retry-after'])}) >= t (${f.t})`);
  }
  // The hot path writes its 429 itself: the same status, header lines (names, case, order, values)
  // and body bytes as the Koa path's for the same key and clock; only the request id and Date differ.
  const lines = (r: Reply): string[] => r.rawHeaders.map((v, i) => (i % 2 === 1 && /^(x-request-id|date)$/i.test(r.rawHeaders[i - 1]!) ? '*' : v));
  const [hot, koa, miss] = limited.map(([, r]) => r) as [Reply, Reply, Reply];
  t.same(lines(hot), lines(koa), 'the hot path\'s 429 has the Koa path\'s header lines');
  t.same(lines(miss), lines(koa), 'a miss\'s 429 has them too');
  t.ok(hot.raw.equals(koa.raw) && miss.raw.equals(koa.raw), 'the same body bytes');
  t.match(hot.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'the hot path\'s 429 has its request id');
  t.equal((await request(url, withKey(a, { 'x-request-id': 'flood-1' }))).headers['x-request-id'], 'flood-1', 'a caller\'s id is echoed');
  // Reported as the Koa path reports its 429s: the account, the route, not a hit (its access line is written).
  const reports = served.slice(hitsBefore).map(({ seconds: _seconds, requestId: _id, ...rest }) => rest);
  const hitReport = { method: 'GET', route: 'visibility', template: '/v1/public/projects/:project_id/visibility', status: 429, bytes: hot.raw.length, accountId: account, hit: false };
  t.same(reports, [hitReport, hitReport, { ...hitReport, route: 'terms', template: '/v1/public/projects/:project_id/terms' }, hitReport], 'reported as the Koa path reports them');
  const metrics = await (await fetch(`${opsUrl}/metrics`)).text();
  t.match(metrics, new RegExp(`^visibility_account_throttled\\{account="${account}"\\} 4$`, 'm'), '/metrics counts the four 429s for the account');

  const other = await request(`${api.base}/projects`, withKey(b));
  t.equal(other.status, 200);
  t.equal(field(t, other.headers.ratelimit, 'another key').r, 9, 'another key has its own budget');

  now += 1_000; // half the burst back
  const later = await request(url, withKey(a));
  t.equal(later.status, 200, 'a second later');
  t.equal(field(t, later.headers.ratelimit, 'a second later').r, 4);

  for (const [what, r] of [
    ['no key (401)', await request(url)],
    ['an unknown key (401)', await request(url, withKey('no-such-key'))],
    ['the OpenAPI document', await request(`${api.base}/openapi.json`)],
  ] as const) {
    t.equal(r.headers.ratelimit, undefined, `${what}: no RateLimit (no key to count against)`);
    t.equal(r.headers['ratelimit-policy'], undefined, `${what}: no RateLimit-Policy`);
  }
  t.equal((await request(url, withKey(a))).headers.ratelimit, '"per-key";r=3;t=2', 'the 401s and the document did not count');
});

t.test('POST /mcp over its rate: the 429 of a refused batch, its unread body discarded, the connection kept', async (t) => {
  const { db } = await demoDb();
  const served: Served[] = [];
  const api = await startApi({ db, rateLimit: 5, rateLimitClock: () => 0, onResponse: (s) => served.push(s) });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => {
    agent.destroy();
    return api.close().then(() => db.close());
  });
  const key = activeKeys[0]!.key;
  const mcpUrl = api.base.replace(/\/v1\/public$/, '/mcp');
  // A batch of 100 calls, as a flooding client sends (about 20 KB): never read when refused.
  const call = (id: number): object => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_projects', arguments: { padding: 'x'.repeat(150) } } });
  const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => call(i)));
  t.ok(batch.length > 16_000, 'a body larger than one read');
  for (let i = 0; i < 10; i++) await request(`${api.base}/projects`, withKey(key)); // the burst spent
  const before = served.length;
  const limited = [
    await postMcp(agent, mcpUrl, { 'x-api-key': key }, batch),
    await postMcp(agent, mcpUrl, { 'x-api-key': key, 'x-request-id': 'mcp-flood-1' }, batch),
    // A repeated header: the request goes the whole way to the MCP handler (hotHeaders in hot.ts).
    await postMcp(agent, mcpUrl, { 'x-api-key': key, 'x-request-id': ['one', 'two'] }, batch),
  ];
  const policy = '"per-key";q=10;w=2';
  for (const [i, r] of limited.entries()) {
    t.equal(r.status, 429, `post ${i}: 429`);
    t.equal(r.text, '{"error":true,"message":"Rate limit of 5 requests per second per API key exceeded"}', `post ${i}: the body`);
    t.equal(r.headers['ratelimit-policy'], policy);
    t.equal(r.headers['x-error-code'], 'rate_limited');
    t.equal(r.headers.connection, 'keep-alive', `post ${i}: the connection is kept`);
    if (i > 0) t.ok(r.reused, `post ${i}: on the connection of the one before (its unread body was discarded)`);
  }
  // The answer as the MCP handler writes it: header names in this case and order, values but the
  // request id and Date; the same lines and body bytes whichever path answers.
  const lines = (r: Reply): string[] => r.rawHeaders.map((v, i) => (i % 2 === 1 && /^(x-request-id|date)$/i.test(r.rawHeaders[i - 1]!) ? '*' : v));
  t.same(lines(limited[0]!), [
    'X-Request-Id', '*', 'X-Content-Type-Options', 'nosniff', 'Retry-After', '2', 'RateLimit-Policy', policy, 'RateLimit', '"per-key";r=0;t=2',
    'X-Error-Code', 'rate_limited', 'Metric-Definitions-Version', limited[0]!.headers['metric-definitions-version'] as string,
    'Cache-Control', 'private, no-cache', 'Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(limited[0]!.raw.length),
    'Date', '*', 'Connection', 'keep-alive', 'Keep-Alive', 'timeout=5',
  ], 'the header lines of the 429');
  t.same(lines(limited[1]!), lines(limited[0]!));
  t.same(lines(limited[2]!), lines(limited[0]!), 'the handler\'s 429 has the same lines');
  t.ok(limited[1]!.raw.equals(limited[0]!.raw) && limited[2]!.raw.equals(limited[0]!.raw), 'the same body bytes');
  t.equal(limited[1]!.headers['x-request-id'], 'mcp-flood-1', 'a caller\'s id is echoed');
  t.match(limited[0]!.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'else one is made');
  const account = served[before - 1]!.accountId!;
  const reports = served.slice(before).map(({ seconds: _seconds, requestId: _id, ...rest }) => rest);
  const report = { method: 'POST', route: 'mcp', template: '/mcp', status: 429, bytes: limited[0]!.raw.length, accountId: account, hit: false };
  t.same(reports, [report, report, report], 'each reported as the account\'s 429 on the mcp route');
  // Another request still follows the refused bodies on the same connection.
  const after = await postMcp(agent, mcpUrl, {}, batch);
  t.equal(after.status, 401, 'no key: 401');
  t.ok(after.reused, 'on the same connection');
});

t.test('limiter off (the default): no RateLimit fields on any answer', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const url = `${api.base}/projects/${project}/visibility`;
  const replies = [
    await request(`${api.base}/projects`, withKey(key)),
    await request(url, withKey(key)),
    await request(url, withKey(key)),
    await rawGet(url, [`X-API-Key: ${key}`, 'Accept-Encoding: gzip', 'Accept-Encoding: br']),
    await request(`${api.base}/projects/00000000-0000-4000-8000-000000000000`, withKey(key)),
  ];
  t.same(replies.map((r) => r.status), [200, 200, 200, 200, 404]);
  for (const r of replies) {
    t.equal(r.headers.ratelimit, undefined);
    t.equal(r.headers['ratelimit-policy'], undefined);
  }
});

t.test('the OpenAPI document declares the fields: optional on answers to a key, required on 429, absent on 401', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close().then(() => db.close()));
  type Header = { required: boolean; schema: { pattern: string } };
  const doc = (await request(`${api.base}/openapi.json`)).json as {
    paths: Record<string, { get: { responses: Record<string, { headers?: Record<string, Header> }> } }>;
  };
  const responses = doc.paths['/projects/{project_id}/visibility']!.get.responses;
  for (const status of ['200', '304', '400', '404', '429', '500', '503']) {
    const h = responses[status]!.headers ?? {};
    const required = status === '429';
    t.equal(h.RateLimit?.required, required, `${status}: RateLimit ${required ? 'required' : 'optional'}`);
    t.equal(h['RateLimit-Policy']?.required, required, `${status}: RateLimit-Policy ${required ? 'required' : 'optional'}`);
  }
  t.equal(responses['401']!.headers?.RateLimit, undefined, '401: none');
  const { RateLimit: field, 'RateLimit-Policy': policy } = responses['429']!.headers!;
  const limiter = new RateLimiter(7, () => 0);
  t.match(limiter.policy, new RegExp(policy!.schema.pattern), 'the policy the limiter sends matches the declared pattern');
  t.match(limiter.take('k')!, new RegExp(field!.schema.pattern), 'so does the RateLimit value');
  t.match(limiter.exceeded('k').headers.RateLimit!, new RegExp(field!.schema.pattern));
});
