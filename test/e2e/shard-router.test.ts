// The sharded fleet's router (deploy/haproxy-shards.cfg + deploy/shard-router.lua) in front of stub
// shards: node:http servers that answer /readyz and echo who they are. The Lua's partition must be
// the producer's (kafkajs's default partitioner), whatever the partition count, or a project's
// requests reach a shard without its data.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { Partitioners } from 'kafkajs';
import t from 'tap';
import { request } from '../helpers/http';
import { HAPROXY, startShardRouter, type Replica } from '../helpers/shard-router';
import { until } from '../helpers/wait';

const skip = HAPROXY ? false : 'HAProxy is not installed (apt-get install haproxy; .ci/run installs it)';

interface Stub extends Replica { name: string; shard: number; server: http.Server; close(): Promise<void> }

/** A stub replica: /readyz 200; a legacy run-group path 404 on shard 0 and 200 on shard 1; anything else echoes. */
async function stub(shard: number, replica: number): Promise<Stub> {
  const name = `s${shard}r${replica}`;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/readyz') return void res.end('{"ready":true}');
      if (req.url?.startsWith('/v1/public/runs/')) {
        const found = shard === 1 && !req.url.includes('nowhere');
        const text = found ? JSON.stringify({ found: req.url, key: req.headers['x-api-key'] ?? null }) : '{"error":true,"message":"Not found"}';
        res.writeHead(found ? 200 : 404, { 'content-type': 'application/json; charset=utf-8', etag: `"${name}"`, 'x-error-code': found ? 'none' : 'not_found' });
        return void res.end(req.method === 'HEAD' ? undefined : text);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name, shard, method: req.method, url: req.url, body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    name, shard, server, port, opsPort: port,
    close: () => new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

t.test('the router sends each project to the shard of its partition, as the producer partitions it', { skip }, async (t) => {
  const stubs = [[await stub(0, 1), await stub(0, 2)], [await stub(1, 1), await stub(1, 2)]];
  t.teardown(() => Promise.all(stubs.flat().map((s) => s.close())));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  t.teardown(() => agent.destroy());
  const get = (url: string): Promise<{ status: number; text: string }> => new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
  const ids = Array.from({ length: 1500 }, () => randomUUID());
  const partitioner = Partitioners.DefaultPartitioner();

  for (const partitions of [6, 12, 7]) {
    const router = await startShardRouter(stubs, partitions);
    t.teardown(() => router.stop());
    const partitionMetadata = Array.from({ length: partitions }, (_, i) => ({ partitionId: i, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 }));
    const wrong: string[] = [];
    const seen = new Set<number>();
    for (let i = 0; i < ids.length; i += 16) {
      await Promise.all(ids.slice(i, i + 16).map(async (id) => {
        const expected = partitioner({ topic: 'events', partitionMetadata, message: { key: id, value: null } }) % 2;
        const r = await get(`${router.base}/v1/public/projects/${id}/visibility?engine_ids=x`);
        const got = (JSON.parse(r.text) as { shard: number; url: string }).shard;
        seen.add(got);
        if (got !== expected) wrong.push(`${id} -> shard ${got}, the producer's partition says ${expected}`);
      }));
    }
    t.same(wrong, [], `${partitions} partitions: each of ${ids.length} projects reached the shard of its kafkajs partition`);
    t.same([...seen].sort(), [0, 1], `${partitions} partitions: both shards got projects`);
    router.stop();
  }

  const router = await startShardRouter(stubs, 6);
  t.teardown(() => router.stop());
  const shardOf = (id: string): number => partitioner({ topic: 'events', partitionMetadata: Array.from({ length: 6 }, (_, i) => ({ partitionId: i, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 })), message: { key: id, value: null } }) % 2;

  // A project's sub-paths (the change feed, the project-scoped run-group paths) follow the project.
  const id = ids[0]!;
  for (const sub of ['', '/changes', `/runs/${ids[1]}`, `/runs/${ids[1]}/results`]) {
    const r = JSON.parse((await get(`${router.base}/v1/public/projects/${id}${sub}`)).text) as { shard: number; url: string };
    t.same([r.shard, r.url], [shardOf(id), `/v1/public/projects/${id}${sub}`], `/projects/{id}${sub} goes to the project's shard, path intact`);
  }
  // Anything without a project reaches every shard in turn.
  const listed = new Set<string>();
  for (let i = 0; i < 12; i++) listed.add((JSON.parse((await get(`${router.base}/v1/public/projects`)).text) as { name: string }).name);
  t.same([...listed].sort(), ['s0r1', 's0r2', 's1r1', 's1r2'], 'GET /projects is answered by every replica of every shard in turn (the catalog is everywhere)');

  // MCP: a tool call's project_id decides; a call without one goes anywhere.
  const mcp = async (body: unknown): Promise<{ shard: number; body: string }> => {
    const r = await fetch(`${router.base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return JSON.parse(await r.text()) as { shard: number; body: string };
  };
  for (const pid of ids.slice(0, 20)) {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_visibility', arguments: { project_id: pid } } };
    const r = await mcp(call);
    if (r.shard !== shardOf(pid)) t.fail(`MCP call for ${pid} reached shard ${r.shard}`);
  }
  t.pass('20 MCP tool calls with a project_id each reached the project\'s shard');
  t.equal(JSON.parse((await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_visibility', arguments: { project_id: ids[0] } } })).body).params.arguments.project_id, ids[0], 'the body reaches the shard whole');
  const listedTools = new Set<number>();
  for (let i = 0; i < 8; i++) listedTools.add((await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/list' })).shard);
  t.same([...listedTools].sort(), [0, 1], 'MCP calls without a project go to any shard');

  // Legacy run-group paths: the router asks each shard and answers the first that is not a 404.
  const legacy = await request(`${router.base}/v1/public/runs/${ids[2]}/results`, { headers: { 'x-api-key': 'k-123' } });
  t.equal(legacy.status, 200, 'a legacy run-group path is answered by the shard that holds the group');
  t.same(legacy.json, { found: `/v1/public/runs/${ids[2]}/results`, key: 'k-123' }, 'its body, with the key passed on');
  t.match(legacy.headers, { etag: /^"s1r[12]"$/, 'content-type': 'application/json; charset=utf-8' }, 'and its headers');
  const head = await request(`${router.base}/v1/public/runs/${ids[2]}`, { method: 'HEAD', headers: { 'x-api-key': 'k' } });
  t.equal(head.status, 200, 'HEAD too');
  const none = await request(`${router.base}/v1/public/runs/nowhere`, { headers: { 'x-api-key': 'k' } });
  t.same([none.status, none.text, none.headers['x-error-code']], [404, '{"error":true,"message":"Not found"}', 'not_found'], 'no shard holds it: the shards\' 404');

  // A replica that stops is taken out of its shard: its twin answers.
  await stubs[0]![0]!.close();
  const shard0 = ids.filter((x) => shardOf(x) === 0).slice(0, 40);
  let failed = 0;
  for (const pid of shard0) {
    const r = await get(`${router.base}/v1/public/projects/${pid}/visibility`);
    if (r.status !== 200 || (JSON.parse(r.text) as { name: string }).name !== 's0r2') failed += 1;
  }
  t.equal(failed, 0, 'with replica s0r1 gone, every request for a shard-0 project is answered by s0r2');
  t.ok(await until(async () => (await get(`${router.base}/v1/public/projects`)).status === 200, 5000, 50), 'and the project list still answers');
});
