// Structured logs: `serve --demo` run as users run it, its stdout and stderr read as an
// operator's log shipper reads them. Every line is one JSON object; every answered request (hot
// path, Koa, MCP, pages, errors) gets one access line with its request id, route template, status,
// bytes, time and account; the id is the caller's X-Request-Id when plain, else made, and always
// echoed; no API key (nor its hash) appears anywhere in the output.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { request, withKey } from '../helpers/http';
import { runCli, spawnServeOnFreePorts, startServe, type ServeProcess } from '../helpers/processes';
import { ROOT } from '../helpers/paths';
import { sleep } from '../helpers/wait';

interface DemoKey { account: string; key: string; revoked: boolean }
const KEYS = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/demo/keys.json'), 'utf8')) as DemoKey[];
const ACTIVE = KEYS.find((k) => !k.revoked)!;
const REVOKED = KEYS.find((k) => k.revoked)!;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TEMPLATE_VISIBILITY = '/v1/public/projects/:project_id/visibility';

type Line = Record<string, unknown>;

function jsonLines(out: string): Line[] {
  return out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);
}

/** The access lines written so far (they leave asynchronously: wait until `n` are there). */
async function accessLines(srv: ServeProcess, n: number): Promise<Line[]> {
  for (let i = 0; i < 200; i++) {
    const lines = jsonLines(srv.stdout()).filter((l) => l.msg === 'request');
    if (lines.length >= n) return lines;
    await sleep(25);
  }
  throw new Error(`fewer than ${n} access lines:\n${srv.stdout()}`);
}

async function stop(srv: ServeProcess): Promise<void> {
  srv.child.kill('SIGTERM');
  await srv.exited;
}

t.test('serve --demo at LOG_LEVEL=debug: JSON lines, one access line per request, ids echoed, no key anywhere', async (t) => {
  const srv = await startServe(['--demo'], { LOG_LEVEL: 'debug' });
  t.teardown(() => stop(srv));
  const key = withKey(ACTIVE.key);
  const projects = await request(`${srv.base}/projects`, withKey(ACTIVE.key, { 'x-request-id': 'trace-0001' }));
  t.equal(projects.status, 200);
  t.equal(projects.headers['x-request-id'], 'trace-0001', "the caller's id is echoed");
  const projectId = (projects.json as Array<{ id: string }>)[0]!.id;
  const url = `${srv.base}/projects/${projectId}/visibility`;
  const miss = await request(url, key);
  const hit = await request(url, key); // the cached body: answered by the hot path
  const notModified = await request(url, withKey(ACTIVE.key, { 'if-none-match': hit.headers.etag!, 'x-request-id': 'x'.repeat(129) }));
  const unknown = await request(url, withKey('vk_not_a_real_key_123456'));
  const revoked = await request(url, withKey(REVOKED.key, { 'x-request-id': 'bad id with spaces' }));
  const missing = await request(`${srv.base}/no-such-route`);
  const docs = await request(`${srv.base}/openapi.json`);
  const mcp = await request(`${new URL(srv.base).origin}/mcp`, { method: 'POST', headers: { 'x-api-key': ACTIVE.key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
  const replies = [projects, miss, hit, notModified, unknown, revoked, missing, docs, mcp];
  for (const r of [miss, hit, unknown, revoked, missing, docs, mcp]) t.match(r.headers['x-request-id'], UUID, `a made id on a ${r.status}`);
  t.match(notModified.headers['x-request-id'], UUID, 'an id over 128 characters is replaced');
  t.match(revoked.headers['x-request-id'], UUID, 'an id with spaces is replaced');
  t.equal(hit.status, 200);
  t.equal(notModified.status, 304);

  const lines = await accessLines(srv, replies.length);
  t.equal(lines.length, replies.length, 'one access line per request');
  const byId = new Map(lines.map((l) => [l.request_id, l]));
  for (const r of replies) {
    const line = byId.get(r.headers['x-request-id']);
    t.ok(line, `the echoed id ${r.headers['x-request-id']} is the logged one`);
    t.equal(line?.status, r.status, `status ${r.status} logged`);
    t.equal(line?.method, r === mcp ? 'POST' : 'GET');
    t.type(line?.ms, 'number');
    t.equal(line?.level, 30, 'at info');
  }
  const line = (r: (typeof replies)[number]): Line => byId.get(r.headers['x-request-id'])!;
  t.same([line(projects).route, line(miss).route, line(hit).route, line(missing).route, line(docs).route, line(mcp).route],
    ['/v1/public/projects', TEMPLATE_VISIBILITY, TEMPLATE_VISIBILITY, null, '/v1/public/openapi.json', '/mcp'],
    'routes are templates, never URLs (null when nothing matched)');
  t.equal(line(miss).bytes, Number(miss.headers['content-length']), 'bytes of a miss: the body sent');
  t.equal(line(hit).bytes, Number(hit.headers['content-length']), 'bytes of a hot hit');
  t.equal(line(notModified).bytes, 0, 'a 304 sends no body');
  const account = line(projects).account_id;
  t.match(account, UUID, 'the account is an id');
  t.same([line(miss).account_id, line(hit).account_id, line(notModified).account_id, line(mcp).account_id], [account, account, account, account],
    'every path names the account of the key');
  t.same([line(unknown).account_id, line(revoked).account_id, line(docs).account_id], [null, null, null], 'no account without a valid key');
  t.notOk(lines.some((l) => typeof l.route === 'string' && (l.route.includes(projectId) || l.route.includes('?'))), 'no project id or query in a route');

  const hint = jsonLines(srv.stdout()).find((l) => typeof l.key_file === 'string');
  t.ok(hint, 'the demo names the file that holds a key');
  const keyFile = hint!.key_file as string;
  t.equal(fs.readFileSync(keyFile, 'utf8').trim(), ACTIVE.key, 'which holds a working demo key');
  t.equal(fs.statSync(keyFile).mode & 0o077, 0, 'readable by its owner only');

  await stop(srv);
  const exit = await srv.exited;
  t.equal(exit.code, 0);
  t.notOk(fs.existsSync(keyFile), 'the key file goes with the temporary demo database at the stop');
  const all = jsonLines(exit.stdout);
  t.ok(all.every((l) => typeof l.level === 'number' && typeof l.time === 'number' && typeof l.msg === 'string'), 'every stdout line is a pino JSON object');
  t.ok(all.some((l) => l.msg === 'visibility-api: stopped'), 'the stop is logged');
  const output = exit.stdout + exit.stderr;
  for (const k of KEYS) {
    t.notOk(output.includes(k.key), `the ${k.revoked ? 'revoked' : 'active'} demo key of ${k.account} appears in no log line`);
    t.notOk(output.includes(createHash('sha256').update(k.key).digest('hex')), 'nor its hash');
  }
  t.notOk(output.includes('vk_not_a_real_key_123456'), 'nor an unknown key a caller presented');
});

t.test('at info, cache hits of the hot path are sampled (one line per N, saying N); every other request has its line', async (t) => {
  const srv = await startServe(['--demo', '--log-hit-sample', '10']);
  t.teardown(() => stop(srv));
  const projects = await request(`${srv.base}/projects`, withKey(ACTIVE.key));
  const url = `${srv.base}/projects/${(projects.json as Array<{ id: string }>)[0]!.id}/visibility`;
  const first = await request(url, withKey(ACTIVE.key)); // a miss: built by the Koa path
  t.equal(first.status, 200);
  const hits = [];
  for (let i = 0; i < 30; i++) hits.push(await request(url, withKey(ACTIVE.key)));
  const errors = [await request(url, withKey('vk_unknown_key_0000000000')), await request(`${srv.base}/nope`)];
  const lines = await accessLines(srv, 2 + 3 + errors.length);
  await sleep(300); // no more arrive
  const all = jsonLines(srv.stdout()).filter((l) => l.msg === 'request');
  t.equal(all.length, 2 + 3 + errors.length, 'the two misses, 3 of the 30 hits, each error');
  const ids = new Set(all.map((l) => l.request_id));
  for (const r of [projects, first, ...errors]) t.ok(ids.has(r.headers['x-request-id']), `the ${r.status} has its line`);
  const sampled = all.filter((l) => l.sample !== undefined);
  t.same(sampled.map((l) => l.sample), [10, 10, 10], 'sampled lines say how many hits each stands for');
  t.same(sampled.map((l) => l.request_id), [hits[9], hits[19], hits[29]].map((r) => r!.headers['x-request-id']), 'every 10th hit');
  t.equal(lines.filter((l) => l.sample === undefined).length, 4);
});

t.test('LOG_LEVEL=warn: no line at info (access lines included); a request still gets its id', async (t) => {
  // At warn no listening line tells the ports: they are picked beforehand, and serve is up once both answer.
  const { child, exited, port } = await spawnServeOnFreePorts(['--demo'], { LOG_LEVEL: 'warn' }, async ({ port, opsPort }) =>
    (await request(`http://127.0.0.1:${opsPort}/readyz`)).status === 200 && (await request(`http://127.0.0.1:${port}/v1/public/openapi.json`)).status === 200);
  t.teardown(() => void child.kill('SIGKILL'));
  const r = await request(`http://127.0.0.1:${port}/v1/public/projects`, withKey(ACTIVE.key));
  t.equal(r.status, 200);
  t.match(r.headers['x-request-id'], UUID, 'the id is echoed whatever the level');
  child.kill('SIGTERM');
  const exit = await exited;
  t.equal(exit.code, 0);
  t.equal(exit.stdout, '', 'nothing written at warn on a healthy run');
});

t.test('a bad LOG_LEVEL or LOG_FORMAT: exit 2, one line naming it', async (t) => {
  for (const [name, value] of [['LOG_LEVEL', 'loud'], ['LOG_FORMAT', 'xml']] as const) {
    const r = await runCli(['serve', '--demo', '--port', '0', '--ops-port', '0'], { [name]: value });
    t.equal(r.code, 2, `${name}=${value} exits 2`);
    t.equal(r.stdout, '');
    t.match(r.stderr, new RegExp(`^visibility-api serve: ${name} must be one of [^\\n]+ \\(got "${value}"\\)\\n$`));
  }
});

t.test('LOG_FORMAT=pretty: lines for a human, the same facts', async (t) => {
  const srv = await startServe(['--demo'], { LOG_FORMAT: 'pretty' });
  t.teardown(() => stop(srv));
  const r = await request(`${srv.base}/projects`, withKey(ACTIVE.key, { 'x-request-id': 'pretty-1' }));
  t.equal(r.status, 200);
  for (let i = 0; i < 100 && !srv.stdout().includes('pretty-1'); i++) await new Promise((res) => setTimeout(res, 25));
  const out = srv.stdout();
  t.notOk(out.split('\n').filter((l) => l !== '').some((l) => l.startsWith('{')), 'no JSON line');
  t.match(out, /INFO: request GET \/v1\/public\/projects 200, \d+ B, [\d.]+ ms, account \S+, id pretty-1\n/, 'the access line: its level, route, status, size, time, account and id');
  // At the default level a line is one line: no field under it (a request was an 8-line block, and
  // the start-up URLs scrolled away).
  const lines = out.split('\n').filter((l) => l !== '');
  t.strictSame(lines.filter((l) => !/^\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+: /.test(l)), [], 'every line a log line of its own');
  t.ok(lines.some((l) => /INFO: visibility-api listening on \S+ \(http:\/\/[^)]+\); ops on/.test(l)), 'the start-up line whole');
  t.ok(lines.some((l) => /INFO: API reference: http:\/\/\S+\/docs$/.test(l)), 'the reference URL alone on its line');
  t.notOk(out.includes(ACTIVE.key), 'no key');
});
