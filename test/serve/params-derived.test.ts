// Each endpoint lists its query parameters once (Endpoint.params, files of schemas/params); every place
// that depends on them is derived from that list. This checks each derived place by what it does,
// for every endpoint and every query parameter there is: the parameters its validation checks, its
// read-model arguments take, its cache key tells apart, its cursor is bound to, its next Link carries,
// its OpenAPI operation lists and its MCP tool accepts are the endpoint's list, no more, no less.
import t from 'tap';
import type { ParsedUrlQuery } from 'node:querystring';
import { readSchemaDir } from '../../src/events';
import { ENDPOINTS, type Endpoint, type ReadArgs } from '../../src/readmodels';
import { PARAMS, type ParamDef } from '../../src/readmodels/params.gen';
import { CHANGES_ENDPOINT } from '../../src/serve/feed/change-feed';
import { cursorArg, encodeCursor, nextLink } from '../../src/serve/request/cursor';
import { toolList, toolName } from '../../src/serve/mcp/mcp';
import { buildOpenApi } from '../../src/serve/docs/openapi';
import { queryArgs, queryKey, queryParams } from '../../src/serve/request/params';

const WINDOW_DAYS = 7;
const UUID = '3f1c2a7e-5b1d-4c8a-9e0f-1a2b3c4d5e6f';
const KEY = Buffer.alloc(32, 1);
const ALL: readonly Endpoint[] = [...ENDPOINTS, CHANGES_ENDPOINT];

/** Every query parameter there is, by wire name (limit's variants are one parameter on the wire). */
const WIRE = new Map<string, ParamDef>();
for (const p of Object.values(PARAMS)) if (p.in === 'query' && !WIRE.has(p.name)) WIRE.set(p.name, p);

/**
 * A valid value of the parameter that is not what leaving it out gives. A parameter of a kind not
 * known here fails the test: a new kind of value must be given a sample.
 */
function sample(p: ParamDef): string | string[] {
  const s = p.schema;
  const items = s.items as { format?: string; pattern?: string; enum?: string[]; type?: string } | undefined;
  if (Array.isArray(s.enum)) return String(s.enum.find((v) => v !== s.default));
  if (s.type === 'integer') return String(Number(s.minimum ?? 0) + 1);
  if (s.type === 'array' && items?.format === 'uuid') return [UUID];
  if (s.type === 'array' && items?.pattern === '^[A-Za-z]{2}$') return ['US'];
  if (s.type === 'array' && Array.isArray(items?.enum)) return [items.enum[0]!];
  if (s.type === 'array' && items?.type === 'string' && items.pattern === undefined) return ['abc'];
  if (s.format === 'uuid') return UUID;
  if (s.format === 'date') return '2026-01-05';
  if (s.type === 'string' && (s.pattern === undefined || new RegExp(String(s.pattern)).test('abc'))) return 'abc';
  throw new Error(`no sample value for the parameter ${p.name}: add one here`);
}

/** Parameters only given together (compare_start_date and compare_end_date): one is sent with its partner's sample. */
const PARTNER: Readonly<Record<string, string>> = { compare_start_date: 'compare_end_date', compare_end_date: 'compare_start_date' };
/** A query giving the parameter a sample value (and its partner one, if it has one). */
function given(name: string): ParsedUrlQuery {
  const partner = PARTNER[name];
  return { [name]: sample(WIRE.get(name)!), ...(partner === undefined ? {} : { [partner]: sample(WIRE.get(partner)!) }) };
}

const listed = (e: Endpoint): string[] => queryParams(e).map((p) => p.name).sort();
const sorted = (names: Iterable<string>): string[] => [...names].sort();
const wireNames = [...WIRE.keys()];
const args = (e: Endpoint, query: ParsedUrlQuery): ReadArgs => ({
  ...queryArgs(query, e, WINDOW_DAYS), accountId: 'a', projectId: UUID, runGroupId: '', windowDays: WINDOW_DAYS,
});

/** The status and message of what a call throws (null: it returned). */
function thrown(f: () => unknown): { status?: number; message?: string } | null {
  try {
    f();
    return null;
  } catch (err) {
    return err as { status?: number; message?: string };
  }
}

t.test('validation checks exactly the parameters the endpoint lists (any other is an unknown parameter)', async (t) => {
  for (const e of ALL) {
    const unknown = wireNames.filter((name) => thrown(() => queryArgs({ [name]: sample(WIRE.get(name)!), ...given(name) }, e, WINDOW_DAYS))?.message?.includes(' is not a parameter of '));
    t.same(sorted(unknown), wireNames.filter((name) => !listed(e).includes(name)).sort(), `${e.name}: the others are unknown`);
    // Two empty values: a repeated scalar, a list of a non-uuid and a list of empty labels are all refused by their schemas.
    const checked = wireNames.filter((name) => {
      const err = thrown(() => queryArgs({ [name]: ['', ''] }, e, WINDOW_DAYS));
      return err !== null && err.status === 400 && err.message!.startsWith(`${name} must be `);
    });
    t.same(sorted(checked), listed(e), `${e.name}: validated`);
  }
});

t.test('the read-model arguments take exactly the listed parameters that are arguments', async (t) => {
  for (const e of ALL) {
    const none = JSON.stringify(queryArgs({}, e, WINDOW_DAYS));
    const taken = listed(e).filter((name) => JSON.stringify(queryArgs(given(name), e, WINDOW_DAYS)) !== none);
    const expected = queryParams(e).filter((p) => p['x-read-by'] === undefined).map((p) => p.name);
    t.same(sorted(taken), sorted(expected), `${e.name}: arguments`);
  }
});

t.test('the cache key tells apart two requests that differ in any one listed parameter, and only those', async (t) => {
  for (const e of ALL) {
    const key = (q: ParsedUrlQuery): string => queryKey(e, queryArgs(q, e, WINDOW_DAYS), q);
    const base = key({});
    const apart = listed(e).filter((name) => key(given(name)) !== base);
    t.same(sorted(apart), listed(e), `${e.name}: cache key`);
    // Two spellings of one request share a key.
    if (e.params.includes('engine_ids')) {
      const other = '0a1c2a7e-5b1d-4c8a-9e0f-1a2b3c4d5e6f';
      t.equal(key({ engine_ids: [UUID.toUpperCase(), other, other] }), key({ engine_ids: [other, UUID] }), `${e.name}: engine_ids order, case and repeats`);
    }
    if (e.params.includes('country')) {
      t.equal(key({ country: ['de', 'US', 'us'] }), key({ country: ['DE', 'US'] }), `${e.name}: country order, case and repeats`);
      t.equal(key({ persona: ['b', 'a', 'b'] }), key({ persona: ['a', 'b'] }), `${e.name}: persona order and repeats`);
    }
    if (e.params.includes('group_by')) {
      t.not(key({ group_by: ['country', 'week'] }), key({ group_by: ['week', 'country'] }), `${e.name}: group_by keeps its order`);
    }
  }
});

t.test('a cursor is bound to every listed argument but the page size', async (t) => {
  for (const e of ALL.filter((x) => x.page)) {
    const first = args(e, {});
    const cursor = encodeCursor(KEY, e, first, { after: ['x', 1] });
    const bound = listed(e).filter((name) => name !== 'cursor').filter((name) => {
      const q = { [name]: sample(WIRE.get(name)!), cursor };
      return thrown(() => cursorArg(q, e, args(e, q), KEY)) !== null;
    });
    const expected = queryParams(e).filter((p) => p['x-read-by'] === undefined && p['x-page-size'] !== true).map((p) => p.name);
    t.same(sorted(bound), sorted(expected), `${e.name}: bound`);
    t.same(cursorArg({ cursor }, e, first, KEY), { after: ['x', 1] }, `${e.name}: the cursor of the same list is read`);
  }
});

t.test('the next Link carries every listed parameter, normalized, and asks for the same arguments', async (t) => {
  for (const e of ALL.filter((x) => x.page)) {
    const q: ParsedUrlQuery = {};
    for (const p of queryParams(e)) if (p['x-read-by'] === undefined) q[p.name] = sample(p);
    const a = args(e, q);
    const link = /^<([^>]+)>; rel="next"$/.exec(nextLink(e, a, { after: ['x', 1] }, KEY))![1]!;
    const carried = new URL(link, 'http://x').searchParams;
    t.same(sorted(new Set(carried.keys())), listed(e), `${e.name}: the Link's parameters`);
    const again = Object.fromEntries([...new Set(carried.keys())].map((k) => [k, carried.getAll(k).length > 1 ? carried.getAll(k) : carried.get(k)!]));
    t.same(queryArgs(again, e, WINDOW_DAYS), queryArgs(q, e, WINDOW_DAYS), `${e.name}: the Link asks for the same arguments`);
  }
});

t.test('the OpenAPI operation lists the endpoint\'s query parameters, in its order', async (t) => {
  const doc = buildOpenApi(ENDPOINTS, readSchemaDir('schemas/api'), '/v1/public') as { paths: Record<string, Record<string, { operationId?: string; parameters?: Array<{ name: string; in: string }> }>> };
  const operations = new Map(Object.values(doc.paths).flatMap((ops) => Object.values(ops)).map((o) => [o.operationId, o]));
  for (const e of ALL) {
    const query = operations.get(e.name)?.parameters?.filter((p) => p.in === 'query').map((p) => p.name);
    t.same(query, queryParams(e).map((p) => p.name), `${e.name}: OpenAPI parameters`);
  }
});

t.test('the MCP tool takes the path parameters and the listed query parameters', async (t) => {
  const tools = new Map(toolList(ENDPOINTS).map((tool) => [tool.name, tool]));
  for (const e of ENDPOINTS) {
    const input = tools.get(toolName(e))!.inputSchema;
    const query = Object.keys(input.properties ?? {}).filter((name) => !(input.required ?? []).includes(name));
    t.same(sorted(query), listed(e), `${e.name}: MCP arguments`);
  }
});

t.test('a list that breaks the list\'s rules is refused on first use, naming the endpoint', async (t) => {
  const runs = ENDPOINTS.find((e) => e.name === 'runs')!;
  t.match(thrown(() => queryArgs({}, { ...runs, params: ['limit'] }, WINDOW_DAYS)), { message: 'endpoint runs: its params must list cursor exactly when it pages' });
  t.match(thrown(() => queryArgs({}, { ...runs, params: ['limit', 'limit-days', 'cursor'] }, WINDOW_DAYS)), { message: 'endpoint runs: its params names a parameter twice' });
  t.match(thrown(() => queryArgs({}, { ...runs, params: ['start_date', 'cursor'] }, WINDOW_DAYS)), { message: 'endpoint runs: its params must list start_date and end_date together' });
});
