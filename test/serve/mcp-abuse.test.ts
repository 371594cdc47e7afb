// POST /mcp against a hostile caller, over real HTTP on loopback with a real service:
// the body is read with a cap and checked for depth and width before it is parsed; tool arguments
// are checked against the tool's input schema (the HTTP parameter schemas) first; every refusal of
// the POST is in the API's error format; JSON-RPC errors are -32600/-32602, never -32603; every
// message of a batch costs a request; the body cache counts its keys.
import t, { type Test } from 'tap';
import { readySize } from '../../src/serve/bodies/encode';
import { ERRORS } from '../../src/serve/request/errors';
import { MCP_MAX_BODY_BYTES, MCP_MAX_DEPTH, MCP_MAX_MEMBERS } from '../../src/serve/mcp/mcp-body';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey, type Api } from '../helpers/http';
import { checkAnswer, postMcp, toolCall, type RpcAnswer } from '../helpers/mcp';

type Project = { id: string };

/** A made-up uuid per number: ids no engine has. */
const fakeId = (i: number): string => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

t.test('POST /mcp against a hostile caller', async (t) => {
  const { db } = await demoDb();
  const api: Api = await startApi({ db, buildThreads: 0 });
  const origin = api.base.replace(/\/v1\/public$/, '');
  t.teardown(async () => {
    await api.close();
    db.close();
  });
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Project[])[0]!.id;
  const post = (body: unknown, headers: Record<string, string> = {}): ReturnType<typeof postMcp> =>
    postMcp(origin, key, typeof body === 'string' ? body : JSON.stringify(body), headers);
  /** The one JSON-RPC answer of a single call, checked against the contract. */
  async function one(t: Test, body: unknown, where: string): Promise<RpcAnswer> {
    const answers = checkAnswer(t, await post(body), where);
    t.equal(answers.length, 1, `${where}: one answer`);
    return answers[0]!;
  }
  const toolError = (r: RpcAnswer): { status: number; code: string; message: string } => r.result?.structuredContent as { status: number; code: string; message: string };

  await t.test('tool arguments are checked against the input schema before anything else', async (t) => {
    const unknown = await one(t, toolCall(1, 'visibility', { project_id: project, cache_buster: 1 }), 'unknown argument');
    t.equal(unknown.result?.isError, true, 'an unknown argument is refused (additionalProperties: false)');
    t.match(toolError(unknown), {
      status: 400, code: 'unknown_parameter',
      message: '"cache_buster" is not a parameter of visibility, which takes project_id, engine_ids, start_date, end_date, country, persona, model, segment_ids, group_by, compare, compare_start_date, compare_end_date',
    }, 'named with all the tool takes (nothing is near enough to suggest), as HTTP names an unknown parameter');

    const number = await one(t, toolCall(2, 'visibility', { project_id: 5 }), 'a number for project_id');
    t.match(toolError(number), { status: 400, message: /^project_id must be a uuid .*, got 5$/ }, 'a non-string project_id is shown as sent');
    const object = await one(t, toolCall(3, 'project', { project_id: { id: project } }), 'an object for project_id');
    t.match(toolError(object), { status: 400, message: /^project_id must be a uuid .*, got an object$/ });

    const missing = await one(t, toolCall(4, 'visibility', {}), 'no project_id');
    t.match(toolError(missing), { status: 400, message: /^project_id is required: a uuid/ });

    const ids = Array.from({ length: 65 }, (_, i) => fakeId(i));
    const long = await one(t, toolCall(5, 'visibility', { project_id: project, engine_ids: ids }), '65 engine ids');
    t.match(toolError(long), { status: 400, code: 'invalid_parameter', message: /^engine_ids must be repeated uuids, at most 64 .*, got "00000000-0000-4000-8000-000000000000,/ }, 'engine_ids: maxItems 64 from schemas/params');
    const http = await request(`${api.base}/projects/${project}/visibility?${ids.map((id) => `engine_ids=${id}`).join('&')}`, withKey(key));
    t.equal(http.status, 400, 'HTTP validates against the same schema: the same bound');
    t.match(http.json, { message: /^engine_ids must be repeated uuids, at most 64 / });
    t.equal(toolError(long).message, (http.json as { message: string }).message, 'one parser: the same message over MCP and HTTP');
    const ok = await one(t, toolCall(6, 'visibility', { project_id: project.toUpperCase(), engine_ids: ids.slice(0, 64).map((id) => id.toUpperCase()) }), '64 engine ids in upper case');
    t.notOk(ok.result?.isError, '64 ids, any letter case: accepted, as over HTTP');

    const limit = await one(t, toolCall(7, 'mentions', { project_id: project, limit: '5' }), 'a string for limit');
    t.match(toolError(limit), { status: 400, message: /^limit must be an integer from 1 to 1000, got "5"$/ });
  });

  await t.test('malformed tools/call params are JSON-RPC -32602 (Invalid params) with a clear message', async (t) => {
    for (const [args, got] of [[[project], 'an array of 1 values'], ['project_id', '"project_id"'], [7, '7'], [null, 'null']] as const) {
      const r = await one(t, toolCall(1, 'visibility', args), `arguments ${JSON.stringify(args)}`);
      t.same(r.error, { code: -32602, message: `Invalid params: arguments must be an object of the tool's arguments, got ${got}` }, `arguments ${JSON.stringify(args)}: -32602`);
    }
    const noName = await one(t, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { arguments: {} } }, 'no tool name');
    t.equal(noName.error?.code, -32602);
    t.equal(noName.id, 9, 'answered under its id');
  });

  await t.test('an empty batch is JSON-RPC Invalid Request (-32600, id null)', async (t) => {
    const a = await post('[]');
    t.equal(a.status, 200);
    t.same(JSON.parse(a.text), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: the batch is empty' } });
  });

  await t.test('every refusal of the POST is in the API\'s error format, with its X-Error-Code', async (t) => {
    const call = toolCall(1, 'projects', {});
    const cases: Array<[string, () => ReturnType<typeof postMcp>, number, string]> = [
      ['no Accept for both types', () => post(call, { accept: 'application/json' }), 406, 'not_acceptable'],
      ['text/plain', () => post(call, { 'content-type': 'text/plain' }), 415, 'unsupported_media_type'],
      ['a body over the cap', () => post(' '.repeat(MCP_MAX_BODY_BYTES + 1)), 413, 'payload_too_large'],
      ['not JSON', () => post('{"jsonrpc":'), 400, 'invalid_mcp_request'],
      ['JSON, not JSON-RPC', () => post({ hello: 'world' }), 400, 'invalid_mcp_request'],
      ['an unsupported MCP-Protocol-Version', () => post(call, { 'mcp-protocol-version': '1999-01-01' }), 400, 'invalid_mcp_request'],
      ['a batch of 101', () => post(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' }))), 400, 'invalid_mcp_request'],
      [`nested ${MCP_MAX_DEPTH + 1} deep`, () => post('['.repeat(MCP_MAX_DEPTH + 1) + ']'.repeat(MCP_MAX_DEPTH + 1)), 400, 'invalid_mcp_request'],
      [`an array of ${MCP_MAX_MEMBERS + 1}`, () => post(`[${Array(MCP_MAX_MEMBERS + 1).fill('1').join(',')}]`), 400, 'invalid_mcp_request'],
    ];
    for (const [name, send, status, code] of cases) {
      const a = await send();
      checkAnswer(t, a, name);
      t.equal(a.status, status, `${name}: ${status}`);
      t.equal(a.headers['x-error-code'], code, `${name}: ${code}`);
      t.ok((ERRORS as Record<string, unknown>)[code], `${name}: the code is in the table`);
    }
  });

  await t.test('a bounded flood: each answer a clean refusal, and the server answers a GET after', async (t) => {
    // What a hostile caller sends: 100,000 made-up engine ids per call, 300k argument keys, arrays 2 million deep.
    const ids = Array.from({ length: 100_000 }, (_, i) => fakeId(i));
    for (let i = 0; i < 5; i++) {
      const a = await post(toolCall(i, 'visibility', { project_id: project, engine_ids: ids }));
      checkAnswer(t, a, `100,000 engine ids #${i}`);
      t.equal(a.status, 413, `100,000 engine ids #${i}: 413, not read`);
    }
    const keys = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"visibility","arguments":{${Array.from({ length: 300_000 }, (_, i) => `"k${i}":1`).join(',')}}}}`;
    const wide = await post(keys);
    checkAnswer(t, wide, '300k keys');
    t.equal(wide.status, 413);
    const deep = await post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"visibility","arguments":{"project_id":${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}}}}`);
    checkAnswer(t, deep, '2 million deep');
    t.equal(deep.status, 413);
    // The same shapes small enough to be read: refused before the parse, by depth and width.
    const deepSmall = await post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"visibility","arguments":{"project_id":${'['.repeat(30_000)}${']'.repeat(30_000)}}}}`);
    t.equal(deepSmall.status, 400, '30,000 deep within the byte cap: 400');
    t.match(JSON.parse(deepSmall.text), { message: /deeper than 32 levels/ });
    const wideSmall = await post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"visibility","arguments":{${Array.from({ length: 5000 }, (_, i) => `"k${i}":1`).join(',')}}}}`);
    t.equal(wideSmall.status, 400, '5,000 keys within the byte cap: 400');
    t.match(JSON.parse(wideSmall.text), { message: /more than 1000 members/ });
    // A body sent without Content-Length is cut at the cap too.
    const chunked = await postMcp(origin, key, Buffer.alloc(MCP_MAX_BODY_BYTES * 4, 0x20), { 'transfer-encoding': 'chunked' });
    t.equal(chunked.status, 413, 'a chunked body over the cap: 413');

    const after = await request(`${api.base}/projects`, withKey(key));
    t.equal(after.status, 200, 'the server still answers a GET');
    const call = await one(t, toolCall(1, 'visibility', { project_id: project }), 'a normal call after');
    t.notOk(call.result?.isError, 'and a normal tool call');
  });

  await t.test('the body cache counts its keys as well as its bodies', async (t) => {
    for (let n = 0; n < 8; n++) {
      const ids = Array.from({ length: 64 }, (_, i) => fakeId(n * 64 + i));
      const r = await one(t, toolCall(n, 'visibility', { project_id: project, engine_ids: ids }), `64 engine ids #${n}`);
      t.notOk(r.result?.isError);
    }
    const lru = api.service.cache.lru;
    let bodies = 0;
    let keys = 0;
    for (const [k, v] of lru.entries()) {
      bodies += readySize(v.ready);
      keys += k.length;
    }
    t.ok(keys > 8 * 64 * 36, `the keys hold the ids (${keys} bytes)`);
    t.equal(lru.calculatedSize, bodies + keys, 'the counted size is the bodies\' plus the keys\'');
  });
});

t.test('POST /mcp: every message of a batch costs a request of the key', async (t) => {
  const { db } = await demoDb();
  const limited = await startApi({ db, buildThreads: 0, rateLimit: 2, rateLimitClock: () => 0 }); // q=4, stopped clock: no refill
  t.teardown(async () => {
    await limited.close();
    db.close();
  });
  const origin = limited.base.replace(/\/v1\/public$/, '');
  const key = activeKeys[0]!.key;
  const batch = (n: number): string => JSON.stringify(Array.from({ length: n }, (_, i) => toolCall(i, 'projects', {})));
  const three = await postMcp(origin, key, batch(3));
  t.equal(three.status, 200);
  t.equal((JSON.parse(three.text) as unknown[]).length, 3, 'three answers');
  t.equal(three.headers.ratelimit, '"per-key";r=1;t=2', 'three requests charged: one of four left');
  const two = await postMcp(origin, key, batch(2));
  checkAnswer(t, two, 'a batch of two with one left');
  t.equal(two.status, 429, 'a batch needing more than is left: 429 as a whole');
  t.match(JSON.parse(two.text), { message: 'Rate limit of 2 requests per second per API key exceeded: a batch of 2 messages costs 2 requests (one per message)' });
  t.ok(two.headers['retry-after'], 'with Retry-After');
  t.equal(two.headers.ratelimit, '"per-key";r=0;t=2', 'the POST\'s own request was spent');

  const fresh = await startApi({ db, buildThreads: 0, rateLimit: 2, rateLimitClock: () => 0 });
  const five = await postMcp(fresh.base.replace(/\/v1\/public$/, ''), key, batch(5));
  t.equal(five.status, 429, 'a batch larger than the bucket can never pass');
  t.match(JSON.parse(five.text), { message: /a batch of 5 messages costs 5 requests \(one per message\), more than the 4 a key may send at once$/ });
  t.equal(five.headers.ratelimit, '"per-key";r=3;t=1', 'only the POST\'s own request was spent');
  await fresh.close();
});
