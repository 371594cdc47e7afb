// Property test (seeded; the seed is printed, PROPERTY_SEED=<n> replays it): two requests whose
// parsed arguments differ never share a body-cache key, and two walks of lists whose parsed
// arguments differ (the page size aside) never share a cursor binding, whatever their values hold:
// commas, backslashes, newlines, `*` (what an absent argument is spelled), `&`, `=`, `%`, `+`.
// persona=a&persona=b and the one label persona=a%2Cb are the case that once shared a binding.
import t from 'tap';
import type { ParsedUrlQuery } from 'node:querystring';
import { ENDPOINTS, type Endpoint } from '../../src/readmodels';
import { listIdentity } from '../../src/readmodels/paging';
import { PARAMS, type ParamDef, type QueryArgs } from '../../src/readmodels/params.gen';
import { encodeCursor, cursorArg } from '../../src/serve/request/cursor';
import { queryArgs, queryParams, requestKey } from '../../src/serve/request/params';

const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : Math.floor(Math.random() * 2 ** 31);
const CASES = 8000;
const WINDOW_DAYS = 7;
const PROJECT = '3f1c2a7e-5b1d-4c8a-9e0f-1a2b3c4d5e6f';
const KEY = Buffer.alloc(32, 7);

/** mulberry32: a small seeded generator, so a failing case can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(SEED);
const PAGED = ENDPOINTS.filter((e) => e.page);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const some = <T>(list: readonly T[]): T[] => Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(list));

/** Labels that are hard to spell apart: separators, escapes, the absent spelling, URL syntax. */
const LABELS = ['a', 'b', 'A', 'a,b', 'a\\,b', 'a\\', '\\', ',', ',,', '*', '\\*', '**', 'a\nb', 'a\\nb', 'a&b', 'a=b', 'a+b', 'a b', 'a%2Cb', '%', 'é', 'Founder', 'founder'];
const UUIDS = ['3f1c2a7e-5b1d-4c8a-9e0f-1a2b3c4d5e6f', '0a1c2a7e-5b1d-4c8a-9e0f-1a2b3c4d5e6f', '0A1C2A7E-5B1D-4C8A-9E0F-1A2B3C4D5E6F'];
const DAYS = ['2026-01-01', '2026-01-05', '2026-02-01', '2026-03-01'];

/** A value for the parameter: often valid, sometimes not (queryArgs then refuses it and the case is skipped). */
function valueOf(p: ParamDef): string | string[] {
  const s = p.schema;
  const items = s.items as { format?: string; pattern?: string; enum?: string[] } | undefined;
  if (s.type === 'integer') return String(pick([1, 2, 5, 1000]));
  if (Array.isArray(s.enum)) return String(pick(s.enum as unknown[]));
  if (s.format === 'date') return pick(DAYS);
  if (s.type === 'array' && items?.format === 'uuid') return some(UUIDS);
  if (s.type === 'array' && items?.pattern !== undefined) return some(['US', 'us', 'DE', 'FR']);
  if (s.type === 'array' && Array.isArray(items?.enum)) return some(items.enum);
  if (s.type === 'array') return some(LABELS);
  return pick(LABELS);
}

/** A random query of the endpoint's parameters (the cursor aside: it is what is being bound). */
function randomQuery(e: Endpoint): ParsedUrlQuery {
  const q: ParsedUrlQuery = {};
  for (const p of queryParams(e)) {
    // Few parameters a request: two requests then often differ in one value only, where a spelling
    // that joins values ambiguously would show.
    if (p.name === 'cursor' || random() < 0.75) continue;
    q[p.name] = valueOf(p);
  }
  return q;
}

function parsed(e: Endpoint, q: ParsedUrlQuery): QueryArgs | null {
  try {
    return queryArgs(q, e, WINDOW_DAYS);
  } catch {
    return null;
  }
}

/** The arguments a binding covers: all but the page size. */
function bound(e: Endpoint, a: QueryArgs): string {
  const out: Record<string, unknown> = { ...a };
  for (const name of e.params) if (PARAMS[name]['x-page-size'] === true && PARAMS[name].arg !== null) delete out[PARAMS[name].arg];
  return JSON.stringify(out);
}

t.test('different parsed requests never share a cache key or a cursor binding', async (t) => {
  t.comment(`seed ${SEED} (PROPERTY_SEED=${SEED} replays it)`);
  const keys = new Map<string, string>();
  const bindings = new Map<string, string>();
  let checked = 0;
  for (let i = 0; i < CASES; i++) {
    const e = random() < 0.5 ? pick(PAGED) : pick(ENDPOINTS);
    const q = randomQuery(e);
    const a = parsed(e, q);
    if (a === null) continue;
    checked += 1;
    const what = `${e.name} ${JSON.stringify(a)}`;
    const key = requestKey(e, PROJECT, a, q);
    const seen = keys.get(key);
    if (seen !== undefined && seen !== what) t.fail(`seed ${SEED}: one cache key for two requests`, { key, first: seen, second: what });
    keys.set(key, what);
    if (e.page) {
      const list = `${e.name} ${bound(e, a)}`;
      const id = listIdentity(e, { ...a, projectId: PROJECT });
      const other = bindings.get(id);
      if (other !== undefined && other !== list) t.fail(`seed ${SEED}: one cursor binding for two lists`, { id, first: other, second: list });
      bindings.set(id, list);
    }
  }
  t.ok(checked > CASES / 4, `seed ${SEED}: ${checked} valid requests checked`);
  t.ok(bindings.size > 100, `seed ${SEED}: ${bindings.size} lists bound`);
});

t.test('a cursor of persona=a&persona=b is refused under the one label persona=a%2Cb (and the other way)', async (t) => {
  for (const e of ENDPOINTS.filter((x) => x.page && x.params.includes('persona'))) {
    const pair = queryArgs({ persona: ['Developer', 'Founder'] }, e, WINDOW_DAYS);
    const joined = queryArgs({ persona: 'Developer,Founder' }, e, WINDOW_DAYS);
    const cursor = encodeCursor(KEY, e, { ...pair, projectId: PROJECT }, { after: ['x', 1] });
    t.throws(() => cursorArg({ cursor }, e, { ...joined, projectId: PROJECT, accountId: 'a', runGroupId: '', windowDays: WINDOW_DAYS }, KEY),
      { status: 400, message: /^cursor is not a cursor of this list/ }, `${e.name}: refused under the joined label`);
    const back = encodeCursor(KEY, e, { ...joined, projectId: PROJECT }, { after: ['x', 1] });
    t.throws(() => cursorArg({ cursor: back }, e, { ...pair, projectId: PROJECT, accountId: 'a', runGroupId: '', windowDays: WINDOW_DAYS }, KEY),
      { status: 400, message: /^cursor is not a cursor of this list/ }, `${e.name}: and the joined label's cursor under the two`);
    t.same(cursorArg({ cursor }, e, { ...pair, projectId: PROJECT, accountId: 'a', runGroupId: '', windowDays: WINDOW_DAYS }, KEY), { after: ['x', 1] }, `${e.name}: read under its own list`);
  }
});

t.test('plain values keep the binding they had: cursors issued before stay valid', async (t) => {
  // The identity of a walk with plain filters, as the earlier spelling made it (values joined by commas).
  const runs = ENDPOINTS.find((e) => e.name === 'citations')!;
  const a = queryArgs({ persona: ['Founder', 'Developer'], country: ['us'], start_date: '2026-01-01', end_date: '2026-01-05' }, runs, WINDOW_DAYS);
  t.equal(listIdentity(runs, { ...a, projectId: PROJECT }), ['citations', PROJECT, '*', '*', '2026-01-01', '2026-01-05', 'US', 'Developer,Founder', '*', '*'].join('\n'));
});
