// MCP with the SDK's own client: over stdio (the built CLI, `node bin/visibility-api.js mcp`)
// and over streamable HTTP (POST /mcp on a real service, loopback). Tools answer the HTTP API's bodies
// with the HTTP API's key scoping.
import path from 'node:path';
import { spawn } from 'node:child_process';
import t, { type Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ENDPOINTS } from '../../src/readmodels';
import { toolName } from '../../src/serve/mcp/mcp';
import { queryParams, wireSchema } from '../../src/serve/request/params';
import { activeKeys, demoDb, revokedKey } from '../helpers/demo';
import { request, startApi, withKey, type Api } from '../helpers/http';
import { runCli } from '../helpers/processes';
import { ROOT } from '../helpers/paths';

const BIN = path.join(ROOT, 'bin', 'visibility-api.js');

type Project = { id: string };

function text(r: CallToolResult): string {
  const first = r.content[0];
  return first && first.type === 'text' ? first.text : '';
}

t.test('MCP', async (t) => {
  const { db, file } = await demoDb();
  const api: Api = await startApi({ db, buildThreads: 0 });
  const origin = api.base.replace(/\/v1\/public$/, '');
  t.teardown(async () => {
    await api.close();
    db.close();
  });
  const key = activeKeys[0]!;
  const other = activeKeys.find((k) => k.account_id !== key.account_id)!;
  const mine = (await request(`${api.base}/projects`, withKey(key.key))).json as Project[];
  const theirs = (await request(`${api.base}/projects`, withKey(other.key))).json as Project[];
  t.ok(mine.length > 0 && theirs.length > 0, 'both accounts have projects');
  const project = mine[0]!.id;
  const foreign = theirs[0]!.id;
  const httpVisibility = await request(`${api.base}/projects/${project}/visibility`, withKey(key.key));
  t.equal(httpVisibility.status, 200);

  /** The assertions both transports must pass. */
  async function sameAsHttp(t: Test, client: Client): Promise<void> {
    const { tools } = await client.listTools();
    t.same(tools.map((x) => x.name).sort(), ENDPOINTS.map(toolName).sort(), 'one tool per endpoint');
    const vis = tools.find((x) => x.name === 'visibility')!;
    t.same(vis.inputSchema.required, ['project_id'], 'path parameters are required');
    const engineIds = queryParams(ENDPOINTS.find((e) => e.name === 'visibility')!).find((p) => p.name === 'engine_ids')!;
    // As the wire takes them (params.ts wireSchema): a list's bound counts distinct values, so it has no maxItems.
    t.same(vis.inputSchema.properties?.engine_ids, { ...wireSchema(engineIds), description: engineIds.description }, 'query parameters: the HTTP route\'s schemas (schemas/params)');
    t.notOk('maxItems' in (vis.inputSchema.properties?.engine_ids as object), '65 repeats of one id are one value, as over HTTP');
    const mentions = tools.find((x) => x.name === 'mentions')!;
    t.same(Object.keys(mentions.inputSchema.properties ?? {}).sort(), ['country', 'cursor', 'end_date', 'engine_ids', 'entity_type', 'limit', 'model', 'persona', 'project_id', 'segment_ids', 'start_date'], 'the same parameters as the route, the date range and the filters included');
    t.match(mentions.inputSchema.properties?.limit, { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, 'with the endpoint\'s own bounds');
    t.equal(vis.annotations?.readOnlyHint, true);

    const r = (await client.callTool({ name: 'visibility', arguments: { project_id: project } })) as CallToolResult;
    t.notOk(r.isError);
    t.equal(text(r), httpVisibility.text, 'the text content is the HTTP body, byte for byte');
    t.same(r.structuredContent, httpVisibility.json, 'structuredContent is the HTTP body');

    const list = (await client.callTool({ name: 'projects', arguments: {} })) as CallToolResult;
    t.same((list.structuredContent as { items: unknown }).items, mine, 'a list body comes as { items }');

    const f = (await client.callTool({ name: 'visibility', arguments: { project_id: foreign } })) as CallToolResult;
    t.equal(f.isError, true, 'a foreign project is an error');
    t.match(JSON.parse(text(f)), { error: true, status: 404, message: 'Not found' }, 'the same not-found as HTTP');

    const bad = (await client.callTool({ name: 'mentions', arguments: { project_id: project, limit: 0 } })) as CallToolResult;
    t.equal(bad.isError, true);
    t.match(JSON.parse(text(bad)), { status: 400, message: /limit/ }, 'a bad argument names the parameter, as the HTTP 400 does');

    const page = (await client.callTool({ name: 'mentions', arguments: { project_id: project, limit: 2 } })) as CallToolResult;
    const first = page.structuredContent as { items: unknown[]; next_cursor: string | null };
    t.equal(first.items.length, 2);
    if (first.next_cursor !== null) {
      const next = (await client.callTool({ name: 'mentions', arguments: { project_id: project, limit: 2, cursor: first.next_cursor } })) as CallToolResult;
      t.notOk(next.isError, 'next_cursor fetches the next page');
      t.notSame((next.structuredContent as { items: unknown[] }).items, first.items);
    }
  }

  await t.test('streamable HTTP', async (t) => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: { 'X-API-Key': key.key } } }));
    await sameAsHttp(t, client);
    await client.close();

    const refused = new Client({ name: 'test', version: '1' });
    await t.rejects(refused.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: { 'X-API-Key': revokedKey.key } } })), 'a revoked key is refused');
    const none = await request(`${origin}/mcp`, { method: 'POST' });
    t.equal(none.status, 401);
    t.equal(none.headers['www-authenticate'], 'ApiKey');
    t.same(none.json, { error: true, message: 'Invalid API key' });
    const get = await request(`${origin}/mcp`, withKey(key.key));
    t.equal(get.status, 405, 'stateless: no GET stream');
    t.equal(get.headers.allow, 'POST');
    const other = await request(`${api.base}/projects`, { method: 'POST', headers: { 'x-api-key': key.key } });
    t.equal(other.status, 405, 'the API stays read-only elsewhere');
  });

  await t.test('streamable HTTP: a rate-limited key is charged one request per POST', async (t) => {
    const limited = await startApi({ db, buildThreads: 0, rateLimit: 1, rateLimitClock: () => 0 }); // stopped clock: no refill
    t.teardown(() => limited.close());
    const post = (): Promise<Response> => fetch(limited.base.replace(/\/v1\/public$/, '/mcp'), {
      method: 'POST',
      headers: { 'X-API-Key': key.key, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const first = await post();
    t.equal(first.status, 200);
    t.equal(first.headers.get('ratelimit-policy'), '"per-key";q=2;w=2');
    t.equal(first.headers.get('ratelimit'), '"per-key";r=1;t=1');
    t.match(await first.json(), { result: { tools: Array } });
    t.equal((await post()).status, 200);
    const over = await post();
    t.equal(over.status, 429, 'over the quota: the API\'s 429');
    t.equal(over.headers.get('x-error-code'), 'rate_limited');
    t.ok(over.headers.get('retry-after'));
    t.match(await over.json(), { error: true, message: /Rate limit/ });
  });

  await t.test('stdio (the built CLI)', async (t) => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--db', file], env: { ...process.env as Record<string, string>, VISIBILITY_API_KEY: key.key }, stderr: 'pipe' });
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(transport);
    await sameAsHttp(t, client);
    await client.close();

    const refused = new Client({ name: 'test', version: '1' });
    await t.rejects(refused.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--db', file, '--api-key', revokedKey.key], stderr: 'pipe' })), 'a revoked key is refused');
  });

  await t.test('stdio: the end of stdin, SIGTERM and SIGINT stop it cleanly (exit 0)', async (t) => {
    for (const how of ['stdin', 'SIGTERM', 'SIGINT'] as const) {
      const child = spawn(process.execPath, [BIN, 'mcp', '--db', file], { env: { ...process.env, VISIBILITY_API_KEY: key.key }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (stderr.includes('serving')) {
            clearInterval(poll);
            resolve();
          }
        }, 20);
      });
      if (how === 'stdin') child.stdin.end();
      else child.kill(how);
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      t.equal(code, 0, `${how}: exit 0`);
      // Log lines (JSON) on stderr: stdout is the MCP channel.
      const last = JSON.parse(stderr.trim().split('\n').pop()!) as { msg: string };
      t.match(last.msg, /stopped$/, `${how}: says it stopped`);
      t.equal(stdout, '', `${how}: nothing but the protocol on stdout`);
    }
  });

  await t.test('stdio: bad flags and keys exit 2 with one line', async (t) => {
    const noKey = await runCli(['mcp', '--db', file]);
    t.equal(noKey.code, 2);
    t.match(noKey.stderr, /^visibility-api mcp: an API key is required[^\n]*\n$/);
    const badKey = await runCli(['mcp', '--db', file, '--api-key', revokedKey.key]);
    t.equal(badKey.code, 2);
    t.match(badKey.stderr, /^visibility-api mcp: invalid API key[^\n]*\n$/);
    const flag = await runCli(['mcp', '--db', file, '--nope']);
    t.equal(flag.code, 2);
    t.match(flag.stderr, /^visibility-api mcp: unknown flag[^\n]*\n$/);
    const noDb = await runCli(['mcp', '--db', path.join(ROOT, 'no-such.db')], { VISIBILITY_API_KEY: key.key });
    t.equal(noDb.code, 2);
    t.match(noDb.stderr, /no such file/);
  });
});
