// Requests that mean one thing, over real HTTP on loopback and POST /mcp against the demo world:
// a query is read whole or refused (never cut at 1000 pairs), repeats of a value do not matter,
// HTTP and MCP parse parameters alike (ASCII letter case only), a computed comparison period stays
// within the days the API accepts, no 400 shows a `{...}` placeholder, every status carries the
// one Cache-Control, an unknown parameter is a 400 naming the nearest one, and labels match as
// /dimensions lists them whatever their letter case.
import http from 'node:http';
import t from 'tap';
import { ENDPOINTS } from '../../src/readmodels';
import { CHANGES_ENDPOINT } from '../../src/serve/feed/change-feed';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey, type Api, type Reply } from '../helpers/http';
import { postMcp, toolCall, type RpcAnswer } from '../helpers/mcp';

type Json = Record<string, unknown>;
type ToolAnswer = { error: boolean; text: string; body: Json };

const RANGE = 'start_date=2026-11-09&end_date=2026-11-15';
/** The demo's year: every label /dimensions lists has runs in it. */
const YEAR = 'start_date=2025-11-16&end_date=2026-11-15';
/** A run-count figure of a body, to tell a filtered answer from an unfiltered one. */
const runs = (r: Reply): unknown => (r.json as Json).run_count;

t.test('request parameters over HTTP and MCP', async (t) => {
  const { db } = await demoDb();
  const api: Api = await startApi({ db, buildThreads: 0 });
  const origin = api.base.replace(/\/v1\/public$/, '');
  t.teardown(async () => {
    await api.close();
    db.close();
  });
  const key = activeKeys[0]!.key;
  const get = (path: string, headers: Record<string, string> = {}): Promise<Reply> => request(`${api.base}${path}`, withKey(key, headers));
  const project = ((await get('/projects')).json as Array<{ id: string }>)[0]!.id;
  const group = ((await get(`/projects/${project}/runs?limit=1`)).json as Array<{ id: string }>)[0]!.id;
  const P = `/projects/${project}`;
  let id = 0;
  async function tool(name: string, args: Json): Promise<ToolAnswer> {
    const a = await postMcp(origin, key, JSON.stringify(toolCall(++id, name, args)));
    const r = JSON.parse(a.text) as RpcAnswer;
    const text = r.result!.content[0]!.text!;
    return { error: r.result!.isError === true, text, body: r.result!.structuredContent! };
  }
  const message = (r: Reply): string => (r.json as { message: string }).message;

  await t.test('a query is read whole: past 1000 pairs a 400, never a cut; repeats of a value do not matter', async (t) => {
    const url = `${P}/visibility?${RANGE}`;
    const unfiltered = await get(url); // cached: a cut request would be answered with it
    t.equal(unfiltered.status, 200);
    const beyond = await get(`${url}${'&country=US'.repeat(998)}&country=ZZ`);
    t.same([beyond.status, beyond.headers['x-error-code']], [400, 'invalid_parameter'], '1001 pairs: 400, not the unfiltered body');
    t.equal(message(beyond), 'the query must have at most 1000 parameters, got 1001');
    const us = await get(`${url}&country=US`);
    t.equal(us.status, 200);
    t.not(runs(us), runs(unfiltered), 'country=US filters');
    const full = await get(`${url}${'&country=US'.repeat(998)}`);
    t.same([full.status, full.text], [200, us.text], '1000 pairs, 998 of them country=US: the body of country=US');
    const many = await get(`${url}${'&country=us'.repeat(65)}`);
    t.same([many.status, many.text], [200, us.text], '65 repeats of one code (any case): one value, the body of country=US');
    const codes = Array.from({ length: 65 }, (_, i) => `${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}`);
    const distinct = await get(`${url}${codes.map((c) => `&country=${c}`).join('')}`);
    t.equal(distinct.status, 400, '65 distinct codes: over the bound');
    t.match(message(distinct), /^country must be repeated ISO 3166-1 alpha-2 country codes, at most 64 /);
    // The same through MCP: the same parser, the same bound, the same message.
    const mcpMany = await tool('visibility', { project_id: project, start_date: '2026-11-09', end_date: '2026-11-15', country: Array(65).fill('US') });
    t.same([mcpMany.error, mcpMany.text], [false, us.text], 'MCP: 65 repeats of US are one value');
    const mcpDistinct = await tool('visibility', { project_id: project, start_date: '2026-11-09', end_date: '2026-11-15', country: codes });
    t.same([mcpDistinct.error, mcpDistinct.body.code, mcpDistinct.body.message], [true, 'invalid_parameter', message(distinct)], 'MCP: the HTTP 400\'s message');
  });

  await t.test('a cursor of persona=Developer&persona=Founder is refused under persona=Developer%2CFounder', async (t) => {
    const first = await get(`${P}/citations?limit=1&persona=Developer&persona=Founder&${RANGE}`);
    t.equal(first.status, 200);
    const link = String(first.headers.link);
    t.match(link, /rel="next"/, 'the two personas\' list has a next page');
    const cursor = new URL(/^<([^>]+)>/.exec(link)![1]!, 'http://x').searchParams.get('cursor')!;
    const own = await get(`${P}/citations?limit=1&persona=Developer&persona=Founder&${RANGE}&cursor=${cursor}`);
    t.equal(own.status, 200, 'followed under its own filter');
    const joined = await get(`${P}/citations?limit=1&persona=Developer%2CFounder&${RANGE}&cursor=${cursor}`);
    t.same([joined.status, joined.headers['x-error-code']], [400, 'invalid_parameter'], 'under the one label "Developer,Founder": 400');
    t.match(message(joined), /^cursor is not a cursor of this list/);
  });

  await t.test('HTTP and MCP read a parameter alike: any letter case, folded for ASCII letters only', async (t) => {
    const upper = await get(`${P}/visibility?${RANGE}&country=US`);
    const lower = await get(`${P}/visibility?${RANGE}&country=us`);
    t.same([lower.status, lower.text], [200, upper.text], 'HTTP: country=us is country=US');
    const mcp = await tool('visibility', { project_id: project, start_date: '2026-11-09', end_date: '2026-11-15', country: ['us'] });
    t.same([mcp.error, mcp.text], [false, upper.text], 'MCP: country ["us"] is the same body');
    for (const [sent, shown] of [['%C3%9F', 'ß'], ['%C5%BFe', 'ſe'], ['%C4%B1t', 'ıt']] as const) {
      const r = await get(`${P}/visibility?country=${sent}`);
      t.same([r.status, message(r)], [400, `country must be repeated ISO 3166-1 alpha-2 country codes, at most 64 (country=US&country=DE), got ${JSON.stringify(shown)}`],
        `HTTP: ${shown} is not a country code (no Unicode upper-casing into one)`);
      const m = await tool('visibility', { project_id: project, country: [shown] });
      t.same([m.error, m.body.code, m.body.message], [true, 'invalid_parameter', message(r)], `MCP: ${shown} refused with the same message`);
    }
    const idUpper = await get(`/projects/${project.toUpperCase()}/visibility?${RANGE}`);
    t.equal(idUpper.status, 200, 'a path id in upper case');
  });

  await t.test('a computed comparison period stays within the days the API accepts', async (t) => {
    const cases: Array<[string, string, string]> = [
      ['visibility', 'start_date=1970-01-01&end_date=1970-01-07&compare=previous_period', 'start_date must be on or after 1970-01-08 with compare=previous_period'],
      ['visibility', 'end_date=1970-01-13&compare=previous_period', 'end_date must be on or after 1970-01-14 with compare=previous_period'],
      ['visibility', 'start_date=1970-01-05&compare=previous_period', 'start_date must be on or after 1970-01-08 with compare=previous_period'],
      ['signals', 'start_date=1970-01-01&end_date=1970-01-01', 'start_date must be on or after 1970-01-02 without compare_start_date and compare_end_date'],
    ];
    for (const [endpoint, query, starts] of cases) {
      const r = await get(`${P}/${endpoint}?${query}`);
      t.equal(r.status, 400, `${endpoint}?${query}: 400`);
      t.ok(message(r).startsWith(starts), `${endpoint}?${query}: ${message(r)}`);
      const args: Json = { project_id: project };
      for (const [k, v] of new URLSearchParams(query)) args[k] = v;
      const m = await tool(endpoint, args);
      t.same([m.error, m.body.message], [true, message(r)], `MCP ${endpoint}: the same 400`);
    }
    for (const query of ['start_date=1970-01-08&end_date=1970-01-14&compare=previous_period', 'end_date=1970-01-14&compare=previous_period', 'start_date=1970-01-01&end_date=1970-01-07']) {
      const r = await get(`${P}/visibility?${query}`);
      t.equal(r.status, 200, `visibility?${query}: its previous period (if any) begins on 1970-01-01 or later`);
      const period = (r.json as { comparison?: { start_date: string } }).comparison;
      if (period) t.ok(period.start_date >= '1970-01-01', 'and the body names no day before 1970');
    }
    const signals = await get(`${P}/signals?start_date=1970-01-01&end_date=1970-01-01&compare_start_date=1970-01-02&compare_end_date=1970-01-02`);
    t.equal(signals.status, 200, 'signals with its own comparison dates: no previous period to check');
  });

  await t.test('no 400 shows a placeholder: every query parameter of every operation, with bad values', async (t) => {
    const doc = (await request(`${api.base}/openapi.json`)).json as { paths: Record<string, { get?: { operationId: string; parameters?: Array<{ name: string; in: string; schema: Json }> } }> };
    let refused = 0;
    for (const [template, item] of Object.entries(doc.paths)) {
      const op = item.get;
      if (!op || op.operationId === 'changes') continue; // a stream (a valid value would open it); its one parameter is a plain string
      const path = template.replace('{project_id}', project).replace('{run_group_id}', group);
      for (const p of (op.parameters ?? []).filter((x) => x.in === 'query')) {
        const s = p.schema;
        const items = (s.items ?? {}) as Json;
        const bad: string[][] = [[''], ['x'.repeat(200)], ['count'], ['1.5'], ['-1'], ['2026-13-01'], ['1969-12-31'], ['ß'], ['a', 'b']];
        if (s.type === 'array') bad.push(Array.from({ length: 65 }, (_, i) => (items.format === 'uuid' ? `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` : `v${i}`)));
        if (s.type === 'array' && Array.isArray(items.enum)) bad.push([String(items.enum[0]), String(items.enum[0])]);
        let thisOne = 0;
        for (const values of bad) {
          const query = values.map((v) => `${p.name}=${encodeURIComponent(v)}`).join('&');
          const r = await get(`${path}?${query}`);
          if (r.status !== 400) continue;
          thisOne += 1;
          const m = message(r);
          t.notMatch(m, /\{[^}]*\}/, `${op.operationId}?${query.slice(0, 60)}: no placeholder in "${m.slice(0, 100)}"`);
          t.ok(m.includes(p.name), `${op.operationId} ${p.name}: the message names the parameter`);
          t.equal(r.headers['x-error-code'], 'invalid_parameter');
        }
        t.ok(thisOne > 0, `${op.operationId} ${p.name}: some bad value is refused`);
        refused += thisOne;
      }
    }
    const groupBy = await get(`${P}/visibility?group_by=count`);
    t.equal(message(groupBy), 'group_by must be one or two different keys of engine, prompt, segment, country, persona, model, day, week, month, at most one of day, week and month (group_by=country&group_by=week), got "count"');
    t.ok(refused > 100, `${refused} bad values refused`);
  });

  await t.test('one Cache-Control for every status', async (t) => {
    const policy = 'private, no-cache';
    const ok = await get(`${P}/visibility`);
    const answers: Array<[string, Reply]> = [
      ['200', ok],
      ['304', await get(`${P}/visibility`, { 'if-none-match': ok.headers.etag! })],
      ['400', await get(`${P}/visibility?start_date=x`)],
      ['400 unknown', await get(`${P}/visibility?limt=5`)],
      ['401', await request(`${api.base}${P}/visibility`)],
      ['404 project', await get('/projects/00000000-0000-4000-8000-000000000000/visibility')],
      ['404 route', await get('/nothing-here')],
      ['405', await request(`${api.base}${P}/visibility`, { method: 'DELETE', headers: { 'x-api-key': key } })],
      ['200 openapi', await request(`${api.base}/openapi.json`)],
      ['401 /mcp', await request(`${origin}/mcp`, { method: 'POST' })],
    ];
    for (const [what, r] of answers) t.equal(r.headers['cache-control'], policy, `${what} (${r.status}): Cache-Control: ${policy}`);
    t.same(answers.map(([, r]) => r.status), [200, 304, 400, 400, 401, 404, 404, 405, 200, 401]);
    const mcp = await postMcp(origin, key, JSON.stringify(toolCall(1, 'projects', {})));
    t.same([mcp.status, mcp.headers['cache-control']], [200, policy], 'POST /mcp 200: the same');
    // An answer written straight to the socket (a request node cannot parse): the same.
    const raw = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(`${api.base}/projects`, { headers: { 'x-api-key': key, 'x-big': 'x'.repeat(20_000) } }, resolve);
      req.on('error', reject);
      req.end();
    });
    raw.resume();
    t.same([raw.statusCode, raw.headers['cache-control']], [431, policy], '431 written by the server itself: the same');
    const doc = (await request(`${api.base}/openapi.json`)).json as { paths: Record<string, { get: { responses: Record<string, { headers: Record<string, { schema: { const?: string; enum?: string[] } }> }> } }> };
    const responses = doc.paths['/projects/{project_id}/visibility']!.get.responses;
    for (const status of Object.keys(responses).filter((s) => s !== '304' && s !== '200' && Number(s) >= 400)) {
      t.equal(responses[status]!.headers['Cache-Control']?.schema.const, policy, `OpenAPI ${status}: Cache-Control ${policy}`);
    }
    t.ok(responses['400']!.headers['X-Error-Code']!.schema.enum!.includes('unknown_parameter'), 'OpenAPI: the 400 lists unknown_parameter');
  });

  await t.test('an unknown parameter is a 400 naming it and the nearest one, on every endpoint and tool', async (t) => {
    for (const e of [...ENDPOINTS, CHANGES_ENDPOINT]) {
      const path = e.path.replace(':project_id', project).replace(':run_group_id', group);
      if (e === CHANGES_ENDPOINT) {
        // HEAD: a GET the feed accepted would be a stream that never ends.
        const head = await request(`${api.base}${path}?limt=5`, { method: 'HEAD', headers: { 'x-api-key': key } });
        t.same([head.status, head.headers['x-error-code']], [400, 'unknown_parameter'], `${e.name}: 400 unknown_parameter`);
        continue;
      }
      const r = await get(`${path}?limt=5`);
      t.same([r.status, r.headers['x-error-code']], [400, 'unknown_parameter'], `${e.name}: 400 unknown_parameter`);
      const takes = e.params.map((n) => n.replace(/-.*$/, ''));
      if (takes.includes('limit')) t.match(message(r), `"limt" is not a parameter of ${e.name}: did you mean "limit"? It takes `, `${e.name}: did you mean "limit"?`);
      else t.match(message(r), `"limt" is not a parameter of ${e.name}`, `${e.name}: named`);
    }
    for (const [query, near] of [['engine_id=x', 'engine_ids'], ['startdate=2026-11-09', 'start_date'], ['LIMIT=5', 'limit'], ['contry=US', 'country']] as const) {
      const r = await get(`${P}/citations?${query}`);
      t.equal(message(r).split('?')[0], `"${query.split('=')[0]}" is not a parameter of citations: did you mean "${near}"`, `${query}: did you mean ${near}?`);
    }
    const buster = await get(`${P}/visibility?_=1700000000`);
    t.match(message(buster), /^"_" is not a parameter of visibility, which takes engine_ids, start_date, end_date, /, 'a name like none: the list');
    const m = await tool('citations', { project_id: project, limt: 5 });
    t.same([m.error, m.body.code], [true, 'unknown_parameter'], 'MCP: the same code');
    t.match(m.body.message, /^"limt" is not a parameter of citations: did you mean "limit"\? It takes project_id, /, 'MCP: the same message, with the path argument among those taken');
    const typo = await get(`${P}/visibility?startdate=2026-11-09&end_date=2026-11-15`);
    t.equal(typo.status, 400, 'a typo never answers unfiltered data');
  });

  await t.test('labels match as /dimensions lists them, letter case aside', async (t) => {
    const dims = (await get(`${P}/dimensions`)).json as { personas: Array<{ persona: string }>; models: Array<{ model: string }> };
    const persona = dims.personas.find((p) => p.persona !== p.persona.toLowerCase())!.persona;
    const model = dims.models[0]!.model;
    for (const [name, listed, other] of [['persona', persona, persona.toLowerCase()], ['persona', persona, persona.toUpperCase()], ['model', model, model.toUpperCase()]] as const) {
      const exact = await get(`${P}/visibility?${YEAR}&${name}=${encodeURIComponent(listed)}`);
      const cased = await get(`${P}/visibility?${YEAR}&${name}=${encodeURIComponent(other)}`);
      t.ok(Number(runs(exact)) > 0, `${name}=${listed}: runs`);
      t.same([cased.status, cased.text], [200, exact.text], `${name}=${other} answers as ${name}=${listed}`);
    }
    const none = await get(`${P}/visibility?${RANGE}&persona=NoSuchPersona`);
    t.equal(runs(none), 0, 'a label no run names still matches nothing');
  });
});
