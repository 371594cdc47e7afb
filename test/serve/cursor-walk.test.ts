// Every paged list, walked through the typed client (clients/typescript) with every combination of
// its filters, ranges included: following rel="next" exactly as given returns the list the same query
// with the largest limit returns, each item once and in order; every Link asks for the same list
// (each of the endpoint's parameters kept, normalized); and a cursor with any byte or character
// changed is a 400 naming cursor. Real HTTP on loopback, on the world of test/helpers/paged-world.ts.
import querystring from 'node:querystring';
import t from 'tap';
import { createClient, type ListPath, type VisibilityClient } from '../../clients/typescript/src';
import { ENDPOINTS, type Endpoint } from '../../src/readmodels';
import { queryArgs, queryParams } from '../../src/serve/request/params';
import { identity, pagedWorld } from '../helpers/paged-world';
import { asSource, W } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { startApi } from '../helpers/http';

type Item = Record<string, unknown>;
type Query = Record<string, string | number | string[]>;

const WINDOW_DAYS = 7;
const PAGED = ENDPOINTS.filter((e) => e.page);

/**
 * The values each query parameter is walked with (undefined: absent). A parameter a paged list takes
 * that is missing here fails the test: a new filter must be walked too. Engine ids unsorted and in
 * upper case, so the Link's normalized spelling is what is followed.
 */
const VALUES: Record<string, (e: Endpoint) => Array<Query | undefined>> = {
  engine_ids: () => [undefined, { engine_ids: [W.engineA] }, { engine_ids: [W.engineB.toUpperCase(), W.engineA] }],
  entity_type: () => [undefined, { entity_type: 'brand' }, { entity_type: 'competitor' }],
  // start_date and end_date together: both, one alone (the window's days from or to it), neither, and a range with nothing in it.
  start_date: (): Array<Query | undefined> => [undefined, { start_date: '2026-01-03', end_date: '2026-01-08' }, { start_date: '2026-01-02' }, { end_date: '2026-01-06' }, { start_date: '2025-06-01', end_date: '2025-06-30' }],
  end_date: () => [undefined],
  // The dimension filters and segment_ids: one of them (lower case, normalized in the Link), segment_ids
  // alone (a prompt filter), and all four together; persona, model and segment_ids are walked here.
  country: (): Array<Query | undefined> => [undefined, { country: ['us', 'DE'] }, { segment_ids: [W.segment] }, { country: 'US', persona: 'Founder', model: ['sonar', 'gpt-4o'], segment_ids: [W.segment] }],
  persona: () => [undefined],
  model: () => [undefined],
  segment_ids: () => [undefined],
  limit: () => [undefined, { limit: 5 }, { limit: 13 }],
  cursor: () => [undefined],
};

/** Every combination of the endpoint's parameter values. */
function combinations(e: Endpoint): Query[] {
  let out: Query[] = [{}];
  for (const p of queryParams(e)) {
    const values = VALUES[p.name];
    if (!values) throw new Error(`${e.name}: no values to walk for its parameter ${p.name}`);
    out = out.flatMap((q) => values(e).map((v) => ({ ...q, ...v })));
  }
  return out;
}

const apiPath = (e: Endpoint): ListPath => e.path.replace(':project_id', '{project_id}') as ListPath;
const describe = (q: Query): string => querystring.stringify(q) || '(no query)';

t.test('every paged list, every combination of its filters: the walk is the whole list, each item once', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld()));
  const server = await startApi({ db, buildThreads: 0, windowDays: WINDOW_DAYS });
  t.teardown(() => server.close());
  const client = createClient({ baseUrl: server.base, apiKey: W.key });
  const params = (q: Query): never => ({ path: { project_id: W.project }, query: q }) as never;
  t.equal(PAGED.map((e) => e.name).sort().join(), 'citations,forum-leads,forum-opportunities,mentions,runs', 'the five paged lists');

  let walks = 0;
  let longest = 0;
  for (const e of PAGED) {
    const id = identity[e.name]!;
    for (const q of combinations(e)) {
      const whole = await client.GET(apiPath(e) as never, { params: params({ ...q, limit: queryParams(e).find((p) => p.name === 'limit')!.schema.maximum as number }) } as never);
      t.equal(whole.response.status, 200, `${e.name} ${describe(q)}: the whole list`);
      t.equal(whole.response.headers.get('link'), null, `${e.name} ${describe(q)}: in one page`);
      const expected = (whole.data as unknown as Item[]).map(id);
      // The first request's normalized arguments: every Link must ask for the same.
      const asked = queryArgs(querystring.parse(querystring.stringify(q)), e, WINDOW_DAYS);
      const seen: string[] = [];
      let pages = 0;
      let sameList = true;
      for await (const page of client.pages(apiPath(e), params(q))) {
        pages += 1;
        seen.push(...(page.items as Item[]).map(id));
        if (page.next === null) continue;
        const next = querystring.parse(new URL(page.next, server.base).search.slice(1));
        sameList &&= JSON.stringify(queryArgs(next, e, WINDOW_DAYS)) === JSON.stringify(asked);
      }
      walks += 1;
      longest = Math.max(longest, pages);
      t.ok(sameList, `${e.name} ${describe(q)}: every Link keeps each parameter`);
      t.same(seen, expected, `${e.name} ${describe(q)}: ${pages} page(s), ${expected.length} items, each once, in order`);
      if (q.limit !== undefined && expected.length > 0) t.equal(pages, Math.ceil(expected.length / Number(q.limit)), `${e.name} ${describe(q)}: no empty page`);
    }
  }
  t.ok(walks >= 150, `${walks} walks`);
  t.ok(longest >= 10, `lists of several pages (the longest walk: ${longest} pages)`);
});

/** The message of a cursor that is not this list's (src/serve/request/cursor.ts). */
const NOT_A_CURSOR = /^cursor is not a cursor of this list: /;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

t.test('a cursor with any byte or character changed is a 400 naming cursor', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld()));
  const server = await startApi({ db, buildThreads: 0, windowDays: WINDOW_DAYS });
  t.teardown(() => server.close());
  const client: VisibilityClient = createClient({ baseUrl: server.base, apiKey: W.key });
  const params = (q: Query): never => ({ path: { project_id: W.project }, query: q }) as never;

  // One walk's page 2 per list, with its filters: keyset cursors (mentions, runs) and pinned ones (the ranked lists).
  const FILTERS: Record<string, Query> = {
    mentions: { engine_ids: [W.engineA], entity_type: 'brand', start_date: '2026-01-02', end_date: '2026-01-08', limit: 5 },
    citations: { engine_ids: [W.engineA], start_date: '2026-01-02', limit: 5 },
  };
  for (const e of PAGED) {
    const q = FILTERS[e.name] ?? { limit: 5 };
    const first = client.pages(apiPath(e), params(q));
    const page = (await first.next()).value;
    await first.return();
    const cursor = new URL(page!.next!, server.base).searchParams.get('cursor')!;
    const status = async (c: string): Promise<{ status: number; message: string }> => {
      const r = await client.GET(apiPath(e) as never, { params: params({ ...q, cursor: c }) } as never);
      return { status: r.response.status, message: (r.error as { message?: string } | undefined)?.message ?? '' };
    };
    t.equal((await status(cursor)).status, 200, `${e.name}: the cursor as given`);

    const bytes = Buffer.from(cursor, 'base64url');
    const changed: string[] = [];
    // Every byte of what the cursor encodes, its lowest and its highest bit flipped.
    for (let i = 0; i < bytes.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const b = Buffer.from(bytes);
        b[i]! ^= bit;
        changed.push(b.toString('base64url'));
      }
    }
    // Every character of the text, replaced by another of the alphabet (the last one's unused bits included).
    for (let i = 0; i < cursor.length; i++) {
      const other = ALPHABET[(ALPHABET.indexOf(cursor[i]!) + 1) % ALPHABET.length]!;
      changed.push(cursor.slice(0, i) + other + cursor.slice(i + 1));
    }
    // And shortened or lengthened by one character.
    changed.push(cursor.slice(0, -1), `${cursor}A`, cursor.slice(1));
    let refused = 0;
    const accepted: string[] = [];
    for (const c of changed) {
      const r = await status(c);
      if (r.status === 400 && NOT_A_CURSOR.test(r.message)) refused += 1;
      else accepted.push(`${c}: ${r.status} ${r.message}`);
    }
    t.same(accepted, [], `${e.name}: a cursor of ${cursor.length} characters, ${changed.length} changed ones: each a 400 naming cursor`);
    t.equal(refused, changed.length);
  }
});
