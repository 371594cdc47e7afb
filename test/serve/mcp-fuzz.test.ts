// Seeded fuzz of the MCP tools' arguments (schemathesis covers the OpenAPI routes,
// not POST /mcp). For every tool, argument objects are drawn from its input schema: valid ones (real
// project and run group, engine subsets, bounds, enums, ordered dates) and ones with one thing wrong
// (a wrong type, an unknown name, a list over maxItems, a bad uuid, bad dates, nested junk, a bad
// cursor, no required argument), plus non-object arguments and batches mixing all of them. Every
// answer must be in the documented forms (test/helpers/mcp.ts checkAnswer): no 5xx, no -32603; valid
// arguments give a result, arguments with one thing wrong a 400 tool error, non-object arguments
// -32602. The server answers a GET at the end. MCP_FUZZ_SEED=N replays a run; every failure names it.
import t from 'tap';
import { mulberry32, type Rng } from '../../fixtures/random';
import { ENDPOINTS } from '../../src/readmodels';
import { toolInputSchema, toolName } from '../../src/serve/mcp/mcp';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey } from '../helpers/http';
import { checkAnswer, postMcp, toolCall, type RpcAnswer } from '../helpers/mcp';

const SEED = Number(process.env.MCP_FUZZ_SEED ?? 38);
/** Argument objects per tool: valid ones and ones with one thing wrong. */
const VALID_PER_TOOL = 6;
const INVALID_PER_TOOL = 20;
const BATCHES = 40;

type Schema = { type?: string; format?: string; enum?: string[]; minimum?: number; maximum?: number; maxItems?: number; minLength?: number; maxLength?: number; items?: Schema };
type Args = Record<string, unknown>;
/** What an argument object is expected to give. */
type Expect = 'result' | 'invalid' | 'params';
interface Case { tool: string; args: unknown; expect: Expect; what: string }

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
const hex = (rng: Rng, n: number): string => Array.from({ length: n }, () => '0123456789abcdef'[int(rng, 0, 15)]).join('');
const randomUuid = (rng: Rng): string => `${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-8${hex(rng, 3)}-${hex(rng, 12)}`;
const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const nested = (rng: Rng, depth: number): unknown => (depth === 0 ? pick(rng, [1, 'x', null]) : rng() < 0.5 ? [nested(rng, depth - 1)] : { a: nested(rng, depth - 1) });

/** Values of the wrong kind for any parameter (strings only where the schema wants no string). */
function junk(rng: Rng, s: Schema): unknown {
  const pool: unknown[] = [-1, 1.5, true, null, {}, { a: 1 }, [[[1]]], 1e308];
  if (s.type !== 'integer') pool.push(5);
  if (s.type !== 'string') pool.push('', 'abc', '5', 'x'.repeat(500));
  if (s.type !== 'array') pool.push([], ['a', 'b'], [randomUuid(rng)], nested(rng, int(rng, 2, 20)));
  return pick(rng, pool);
}

t.test(`MCP tool arguments, seeded fuzz (MCP_FUZZ_SEED=${SEED})`, async (t) => {
  const rng = mulberry32(SEED);
  const { db } = await demoDb();
  const api = await startApi({ db, buildThreads: 0 });
  const origin = api.base.replace(/\/v1\/public$/, '');
  t.teardown(async () => {
    await api.close();
    db.close();
  });
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const engines = ((await request(`${api.base}/projects/${project}/engines`, withKey(key))).json as Array<{ engine_id?: string; id?: string }>).map((e) => (e.engine_id ?? e.id)!);
  const runGroup = ((await request(`${api.base}/projects/${project}/runs?limit=1`, withKey(key))).json as Array<{ id?: string; run_group_id?: string }>)[0]!;
  const runGroupId = (runGroup.run_group_id ?? runGroup.id)!;
  t.ok(engines.length > 0 && runGroupId, `seed ${SEED}: the demo has engines and run groups`);

  /** A valid value of a parameter (no cursor: a made-up one is a 400). */
  function valid(name: string, s: Schema, args: Args): unknown {
    if (name === 'project_id') return rng() < 0.3 ? project.toUpperCase() : project;
    if (name === 'run_group_id') return runGroupId;
    if (name === 'engine_ids') return Array.from({ length: int(rng, 0, 3) }, () => (rng() < 0.8 ? pick(rng, engines) : randomUuid(rng)));
    if (s.enum) return pick(rng, s.enum);
    if (s.type === 'integer') return int(rng, s.minimum ?? 1, s.maximum ?? 1000);
    if (name === 'start_date') return day(Date.UTC(2026, 0, 1) + int(rng, 0, 300) * 86_400_000);
    if (name === 'end_date') {
      const start = typeof args.start_date === 'string' ? Date.parse(args.start_date) : Date.UTC(2026, 0, 1);
      return day(start + int(rng, 0, 365) * 86_400_000);
    }
    throw new Error(`no valid value for ${name}`);
  }

  /** A valid argument object: the required ones and some of the others. */
  function validArgs(props: Record<string, Schema>, required: string[]): Args {
    const args: Args = {};
    for (const name of ['project_id', 'run_group_id', 'engine_ids', 'limit', 'entity_type', 'start_date', 'end_date', 'interval']) {
      if (!(name in props)) continue;
      if (required.includes(name) || rng() < 0.5) args[name] = valid(name, props[name]!, args);
    }
    return args;
  }

  /** A valid argument object with one thing wrong, and what. */
  function invalidArgs(props: Record<string, Schema>, required: string[]): { args: Args; what: string } {
    const args = validArgs(props, required);
    const names = Object.keys(props);
    const kinds = ['unknown', 'type', 'missing', 'uuid', 'nested'];
    if (names.includes('engine_ids')) kinds.push('long', 'item');
    if (names.includes('limit')) kinds.push('range');
    if (names.includes('start_date')) kinds.push('date', 'order');
    if (names.includes('cursor')) kinds.push('cursor');
    const kind = pick(rng, kinds);
    const some = names.length > 0 ? pick(rng, names) : undefined;
    switch (kind) {
      case 'unknown': {
        const name = pick(rng, ['foo', 'projectId', 'ENGINE_IDS', '__proto__', 'constructor', 'x'.repeat(int(rng, 1, 300)), `k${int(rng, 0, 1e6)}`]);
        Object.defineProperty(args, name, { value: junk(rng, {}), enumerable: true, configurable: true, writable: true });
        return { args, what: `unknown argument ${name.slice(0, 20)}` };
      }
      case 'type':
      case 'nested':
        if (some === undefined) break;
        args[some] = kind === 'nested' ? nested(rng, int(rng, 1, 25)) : junk(rng, props[some]!);
        return { args, what: `${kind} ${some}` };
      case 'missing':
        if (required.length === 0) break;
        delete args[required[0]!];
        return { args, what: `no ${required[0]}` };
      case 'uuid': {
        const name = required[0] ?? (names.includes('engine_ids') ? 'engine_ids' : undefined);
        if (name === undefined) break;
        const bad = pick(rng, ['not-a-uuid', randomUuid(rng).slice(1), `${randomUuid(rng)}x`, randomUuid(rng).replace(/-/g, ''), '', ' '.repeat(36)]);
        args[name] = name === 'engine_ids' ? [bad] : bad;
        return { args, what: `bad uuid in ${name}` };
      }
      case 'long':
        args.engine_ids = Array.from({ length: int(rng, 65, 400) }, () => randomUuid(rng));
        return { args, what: 'engine_ids over maxItems' };
      case 'item':
        args.engine_ids = [pick(rng, engines), junk(rng, { type: 'string' })];
        return { args, what: 'an engine_ids item of the wrong type' };
      case 'range': {
        const s = props.limit!;
        args.limit = pick(rng, [0, -5, (s.maximum ?? 1000) + 1, 2 ** 53, 1.5]);
        return { args, what: `limit ${String(args.limit)}` };
      }
      case 'date':
        args[pick(rng, ['start_date', 'end_date'])] = pick(rng, ['2026-02-30', '2026-13-01', '20260101', '1969-12-31', '9000-01-01', '2026-1-1', 'yesterday']);
        return { args, what: 'a bad date' };
      case 'order':
        args.start_date = '2026-06-02';
        args.end_date = pick(rng, ['2026-06-01', '2027-06-03']);
        return { args, what: 'dates out of order or over 366 days' };
      case 'cursor':
        args.cursor = pick(rng, ['', '!!', 'a'.repeat(8193), hex(rng, int(rng, 1, 80)), 'e30']);
        return { args, what: `cursor ${String(args.cursor).slice(0, 12)}` };
    }
    args[`unknown_${int(rng, 0, 99)}`] = 1;
    return { args, what: 'unknown argument' };
  }

  const cases: Case[] = [];
  for (const e of ENDPOINTS) {
    const schema = toolInputSchema(e) as { properties: Record<string, Schema>; required: string[] };
    const tool = toolName(e);
    for (let i = 0; i < VALID_PER_TOOL; i++) cases.push({ tool, args: validArgs(schema.properties, schema.required), expect: 'result', what: 'valid' });
    for (let i = 0; i < INVALID_PER_TOOL; i++) {
      const { args, what } = invalidArgs(schema.properties, schema.required);
      cases.push({ tool, args, expect: 'invalid', what });
    }
    cases.push({ tool, args: pick(rng, [[], [project], 'project_id', 7, true, null]), expect: 'params', what: 'non-object arguments' });
  }

  let id = 0;
  /** Checks one case's answer against what it was expected to give. */
  function expectFor(c: Case, r: RpcAnswer | undefined, where: string): void {
    if (c.expect === 'params') t.equal(r?.error?.code, -32602, `${where}: -32602`, { answer: r });
    else if (c.expect === 'invalid') {
      // An unknown argument is HTTP's unknown parameter; any other wrong argument a wrong value.
      const code = c.what.startsWith('unknown argument') ? 'unknown_parameter' : 'invalid_parameter';
      t.match(r?.result?.structuredContent, { status: 400, code }, `${where}: a 400 tool error`, { answer: r });
    }
    else t.ok(r?.result && !r.result.isError, `${where}: a result`, { answer: r });
  }

  for (const c of cases) {
    const where = `seed ${SEED} ${c.tool} (${c.what}) ${JSON.stringify(c.args)?.slice(0, 120)}`;
    const answers = checkAnswer(t, await postMcp(origin, key, JSON.stringify(toolCall(++id, c.tool, c.args))), where);
    expectFor(c, answers[0], where);
  }

  for (let b = 0; b < BATCHES; b++) {
    const picked = Array.from({ length: int(rng, 1, 8) }, () => pick(rng, cases));
    const first = id + 1;
    const messages: unknown[] = picked.map((c) => toolCall(++id, c.tool, c.args));
    if (rng() < 0.3) messages.push({ jsonrpc: '2.0', method: 'notifications/initialized' });
    if (rng() < 0.3) messages.push({ jsonrpc: '2.0', id: ++id, method: 'tools/list' });
    if (rng() < 0.2) messages.push({ jsonrpc: '2.0', id: ++id, method: pick(rng, ['resources/list', 'tools/nope', 'prompts/get']) });
    if (rng() < 0.2) messages.push({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: pick(rng, [{}, { name: 5 }, { name: 'nope' }, { arguments: {} }]) });
    const where = `seed ${SEED} batch ${b} (${messages.length} messages)`;
    const answers = checkAnswer(t, await postMcp(origin, key, JSON.stringify(messages)), where);
    const requests = messages.filter((m) => (m as { id?: unknown }).id !== undefined).length;
    t.equal(answers.length, requests, `${where}: one answer per request`);
    picked.forEach((c, i) => expectFor(c, answers.find((a) => a.id === first + i), `${where} #${i} ${c.tool} (${c.what})`));
  }

  const alive = await request(`${api.base}/projects`, withKey(key));
  t.equal(alive.status, 200, `seed ${SEED}: the server answers a GET at the end`);
});
