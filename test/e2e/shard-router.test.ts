// The sharded fleet's router (deploy/haproxy-shards.cfg, scripts/haproxy-shards.sh, deploy/shard-router.lua)
// in front of stub shards: node:http servers that answer /readyz and echo who they are. The Lua's
// partition must be the producer's (kafkajs's default partitioner) for any partition and shard count,
// or a project's requests reach a shard without its data.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { Partitioners } from 'kafkajs';
import t from 'tap';
import { HAPROXY, SHARDS_CFG, shardRouterConfig, startShardRouter, type RouterReplica } from '../helpers/shard-router';
import { until } from '../helpers/wait';

const skip = HAPROXY ? false : 'HAProxy is not installed (apt-get install haproxy; .ci/run installs it)';

interface Echo { name: string; shard: number; method: string; url: string; headers: http.IncomingHttpHeaders; body: string }
interface Stub extends RouterReplica { name: string; close(): Promise<void> }

/**
 * A stub replica of shard `shard`: /readyz 200; a legacy run-group path 200 when it names
 * `held-by-<shard>` (404 with the contract body otherwise); anything else echoes the request.
 */
async function stub(shard: number, replica: number): Promise<Stub> {
  const name = `s${shard}r${replica}`;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/readyz') return void res.end('{"ready":true}');
      if (req.url?.startsWith('/v1/public/runs/')) {
        const found = req.url.includes(`held-by-${shard}`);
        // `...-big`: a body of 3 MB, far past HAProxy's buffer.
        const big = req.url.includes('-big') ? 'x'.repeat(3 << 20) : undefined;
        const text = found ? JSON.stringify({ name, url: req.url, key: req.headers['x-api-key'] ?? null, auth: req.headers.authorization ?? null, host: req.headers.host, big }) : '{"error":true,"message":"Not found"}';
        res.writeHead(found ? 200 : 404, { 'content-type': 'application/json; charset=utf-8', etag: `"${name}"`, 'x-error-code': found ? 'none' : 'not_found' });
        return void res.end(req.method === 'HEAD' ? undefined : text);
      }
      if (req.url?.endsWith('/changes')) {
        // A change feed: an event now, the stream left open (the router must pass it on as it comes).
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        return void res.write(`event: ready\ndata: {"shard":${shard}}\n\n`);
      }
      const echo: Echo = { name, shard, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(echo));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    name, port, opsPort: port,
    close: () => new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/** The shard the producer's partitioner puts `id` in: kafkajs's DefaultPartitioner, called as the producer calls it. */
function producerShard(id: string, partitions: number, shards: number): number {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: partitions }, (_, i) => ({ partitionId: i, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 }));
  return partitioner({ topic: 'events', partitionMetadata, message: { key: id, value: null } }) % shards;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function call(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent, method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    }).on('error', reject);
    req.end(opts.body);
  });
}
const echo = async (url: string, opts?: Parameters<typeof call>[1]): Promise<Echo> => JSON.parse((await call(url, opts)).text) as Echo;

t.test('the committed config is scripts/haproxy-shards.sh 2 2', async (t) => {
  t.equal(fs.readFileSync(SHARDS_CFG, 'utf8'), shardRouterConfig(2, 2), 'deploy/haproxy-shards.cfg: regenerate it with bash scripts/haproxy-shards.sh 2 2');
});

t.test('the router sends each project to the shard of its partition, as the producer partitions it', { skip }, async (t) => {
  t.teardown(() => agent.destroy());
  const stubs = [0, 1, 2].map(async (k) => [await stub(k, 1), await stub(k, 2)]);
  const shards = await Promise.all(stubs);
  t.teardown(() => Promise.all(shards.flat().map((s) => s.close())));
  const fleet = (n: number): Array<{ replicas: RouterReplica[] }> => shards.slice(0, n).map((replicas) => ({ replicas }));
  const ids = Array.from({ length: 2000 }, () => randomUUID());

  for (const partitions of [6, 12]) {
    for (const n of [2, 3]) {
      const router = await startShardRouter({ shards: fleet(n), partitions });
      t.teardown(() => router.stop());
      const wrong: string[] = [];
      const seen = new Set<number>();
      for (let i = 0; i < ids.length; i += 16) {
        await Promise.all(ids.slice(i, i + 16).map(async (id) => {
          const expected = producerShard(id, partitions, n);
          const got = (await echo(`${router.base}/v1/public/projects/${id}/visibility?engine_ids=x`)).shard;
          seen.add(got);
          if (got !== expected) wrong.push(`${id} -> shard ${got}, the producer's partition says ${expected}`);
        }));
      }
      t.same(wrong.slice(0, 5), [], `${partitions} partitions, ${n} shards: each of ${ids.length} projects reached the shard of its kafkajs partition (${wrong.length} did not)`);
      t.same([...seen].sort(), Array.from({ length: n }, (_, k) => k), `${partitions} partitions, ${n} shards: every shard got projects`);
      await router.stop();
    }
  }

  const [P, N] = [12, 3];
  const router = await startShardRouter({ shards: fleet(N), partitions: P });
  t.teardown(() => router.stop());
  const base = router.base;
  const shardOf = (id: string): number => producerShard(id, P, N);

  // A project's sub-paths (the change feed, the project-scoped run-group paths) follow the project;
  // an id as the service reads it (percent-decoded, any letter case) goes where the id goes.
  const id = ids.find((x) => shardOf(x) !== 0 && /[a-f]/.test(x))!;
  const run = ids[1]!;
  for (const sub of ['', '/visibility', `/runs/${run}`, `/runs/${run}/results`]) {
    const r = await echo(`${base}/v1/public/projects/${id}${sub}?x=1`);
    t.same([r.shard, r.url], [shardOf(id), `/v1/public/projects/${id}${sub}?x=1`], `/projects/{id}${sub} goes to the project's shard, path and query intact`);
  }
  const feed = await new Promise<string>((resolve, reject) => {
    http.get(`${base}/v1/public/projects/${id}/changes`, (res) => res.once('data', (c: Buffer) => {
      resolve(`${res.headers['content-type']} ${c.toString()}`);
      res.destroy();
    })).on('error', reject);
  });
  t.equal(feed, `text/event-stream event: ready\ndata: {"shard":${shardOf(id)}}\n\n`, 'the change feed: from the project\'s shard, each event passed on as it comes');
  t.equal((await echo(`${base}/v1/public/projects/${id.toUpperCase()}/visibility`)).shard, shardOf(id), 'the id in upper case: the same shard');
  const encoded = id.replace(/[a-f]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
  t.equal((await echo(`${base}/v1/public/projects/${encoded}/visibility`)).shard, shardOf(id), 'a percent-encoded id: the same shard');

  // Anything without a project reaches every replica of every shard in turn.
  for (const p of ['/v1/public/projects', '/v1/public/openapi.json', '/llms.txt', '/v1/public/projects/']) {
    const names = new Set<string>();
    for (let i = 0; i < 18; i++) names.add((await echo(`${base}${p}`)).name);
    t.same([...names].sort(), ['s0r1', 's0r2', 's1r1', 's1r2', 's2r1', 's2r2'], `${p} is answered by every replica of every shard in turn (the catalog is everywhere)`);
  }
  const plain = await echo(`${base}/v1/public/projects/${id}`, { headers: { 'x-api-key': 'k-1' } });
  t.same([plain.headers['x-api-key'], plain.headers['x-shard-router-shard']], ['k-1', undefined], 'the key reaches the shard; no router header does');

  // MCP: a tool call's project_id decides; a call without one goes anywhere.
  const mcp = (body: unknown): Promise<Echo> => echo(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const toolCall = (args: Record<string, unknown>): unknown => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_visibility', arguments: args } });
  const misrouted: string[] = [];
  for (const pid of ids.slice(0, 60)) {
    const r = await mcp(toolCall({ project_id: pid, start_date: '2026-01-01' }));
    if (r.shard !== shardOf(pid)) misrouted.push(`${pid} -> shard ${r.shard}`);
  }
  t.same(misrouted, [], '60 MCP tool calls with a project_id each reached the project\'s shard');
  const whole = await mcp(toolCall({ project_id: id.toUpperCase() }));
  t.same([whole.shard, JSON.parse(whole.body)], [shardOf(id), toolCall({ project_id: id.toUpperCase() })], 'a project_id in upper case too, and the body reaches the shard whole');
  const large = toolCall({ project_id: id, note: 'x'.repeat(40_000) });
  const past = await mcp(large);
  t.same(JSON.parse(past.body), large, 'a tool call past HAProxy\'s buffer reaches a shard whole (any shard: its project is not looked for)');
  const anywhere = new Set<number>();
  for (let i = 0; i < 12; i++) anywhere.add((await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/list' })).shard);
  t.same([...anywhere].sort(), [0, 1, 2], 'MCP calls without a project go to any shard');

  // Legacy run-group paths: the router asks each shard and answers the first that is not a 404.
  for (const holder of [0, 1, 2]) {
    const legacy = await call(`${base}/v1/public/runs/held-by-${holder}/results?a=b`, { headers: { 'x-api-key': 'k-123', authorization: 'ApiKey k-456' } });
    t.same([legacy.status, JSON.parse(legacy.text)], [200, { name: legacy.headers.etag?.slice(1, -1), url: `/v1/public/runs/held-by-${holder}/results?a=b`, key: 'k-123', auth: 'ApiKey k-456', host: new URL(base).host }],
      `a legacy run-group path held by shard ${holder}: its 200 and body, the key and Host headers passed on`);
    t.match(legacy.headers, { etag: new RegExp(`^"s${holder}r[12]"$`), 'content-type': 'application/json; charset=utf-8', 'x-error-code': 'none' }, '  and its headers');
  }
  const big = await call(`${base}/v1/public/runs/held-by-1-big`, { headers: { 'x-api-key': 'k' } });
  t.same([big.status, big.text.length > 3 << 20, (JSON.parse(big.text) as { big: string }).big.length], [200, true, 3 << 20], 'a body of 3 MB is copied back whole');
  const head = await call(`${base}/v1/public/runs/held-by-2`, { method: 'HEAD', headers: { 'x-api-key': 'k' } });
  t.same([head.status, head.headers.etag?.startsWith('"s2'), head.text], [200, true, ''], 'HEAD too, without a body');
  const none = await call(`${base}/v1/public/runs/nowhere`, { headers: { 'x-api-key': 'k' } });
  t.same([none.status, none.text, none.headers['x-error-code'], none.headers['content-type']], [404, '{"error":true,"message":"Not found"}', 'not_found', 'application/json; charset=utf-8'], 'no shard holds it: the shards\' 404');
  const forced = await call(`${base}/v1/public/projects/${id}`, { headers: { 'x-shard-router-shard': '0' } });
  t.equal((JSON.parse(forced.text) as Echo).shard, shardOf(id), 'a client cannot pick the shard with the router\'s own header');

  // A replica that stops is taken out of its shard: its twin answers.
  await shards[1]![0]!.close();
  const ofShard1 = ids.filter((x) => shardOf(x) === 1).slice(0, 60);
  const answers: string[] = [];
  for (const pid of ofShard1) {
    const r = await call(`${base}/v1/public/projects/${pid}/visibility`);
    answers.push(r.status === 200 ? (JSON.parse(r.text) as Echo).name : `HTTP ${r.status}`);
  }
  t.same([...new Set(answers)], ['s1r2'], `with replica s1r1 gone, each of ${ofShard1.length} requests for a shard-1 project is answered by s1r2`);
  t.ok(await until(async () => (await call(`${base}/v1/public/projects`)).status === 200, 5000, 50), 'and the project list still answers');
  await router.stop();
});

t.test('a bad partition or shard count, or one the config disagrees with, stops the router at start, saying why', { skip }, async (t) => {
  const replicas = [{ port: 1, opsPort: 1 }, { port: 2, opsPort: 2 }];
  const fleet = [{ replicas }, { replicas }];
  await t.rejects(startShardRouter({ shards: fleet, partitions: 0 }), /SHARD_PARTITIONS must be a whole number from 1 to 1000000, got "0"/);
  await t.rejects(startShardRouter({ shards: [...fleet, { replicas }], partitions: 2 }), /SHARD_COUNT 3 is more than SHARD_PARTITIONS 2/);
  await t.rejects(startShardRouter({ shards: fleet, partitions: 6, env: { SHARD_COUNT: '3' } }), /SHARD_COUNT is 3 but the config has no backend shard2/);
  await t.rejects(startShardRouter({ shards: fleet, partitions: 6, env: { SHARD_COUNT: '1' } }), /SHARD_COUNT is 1 but the config has a backend shard1/);
});
