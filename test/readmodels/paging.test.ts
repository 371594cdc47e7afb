// Pages of the five long lists at the read-model level: walks by Endpoint.page, with events applied
// between pages, and the ranked lists' fallback when the walk's pinned list is gone.
import querystring from 'node:querystring';
import t from 'tap';
import { ENDPOINTS, ReadStore, type Endpoint, type ReadArgs } from '../../src/readmodels';
import type { PagePosition } from '../../src/readmodels/args';
import { listIdentity, PageSnapshots } from '../../src/readmodels/paging';
import { readVersion, sumVersions } from '../../src/serve/bodies/ready-body';
import { queryArgs } from '../../src/serve/request/params';
import { asSource, W } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { arriving, identity, pagedWorld } from '../helpers/paged-world';
import { readArgs } from '../helpers/readmodels';

// The kept lists of walks in progress, as a build thread owns them (the read models keep none).
const snapshots = new PageSnapshots();
const PAGED = ['mentions', 'citations', 'runs', 'forum-opportunities', 'forum-leads'];
const endpointNamed = (name: string): Endpoint => ENDPOINTS.find((e) => e.name === name)!;

function args(over: Partial<ReadArgs> = {}): ReadArgs {
  return readArgs({ runGroupId: '', limit: 0, ...over });
}

/** The data version a build would read (buildReady: the project's and the engines' counters). */
function versionOf(store: ReadStore): number {
  return sumVersions([readVersion(store, `project:${W.project}`), readVersion(store, 'engines')]).version;
}

type Item = Record<string, unknown>;

/** Every page from the first, `between` running after each; the items in page order and the page count. */
function walk(store: ReadStore, e: Endpoint, a: ReadArgs, between: (page: number) => void = () => {}): { items: Item[]; pages: number } {
  const items: Item[] = [];
  let cursor: PagePosition | null = null;
  let pages = 0;
  do {
    const page: { items: unknown[]; next: PagePosition | null } = e.page!(store, { ...a, cursor }, { version: versionOf(store), snapshots });
    items.push(...(page.items as Item[]));
    pages += 1;
    cursor = page.next;
    between(pages);
  } while (cursor && pages < 1000);
  return { items, pages };
}

const ids = (name: string, items: Item[]): string[] => items.map(identity[name]!);

t.test('the five long lists page; the other seventeen do not', async (t) => {
  t.same(ENDPOINTS.filter((e) => e.page).map((e) => e.name).sort(), [...PAGED].sort());
});

t.test('a walk with a small page returns the whole list, in order, each item once', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld()));
  const store = new ReadStore(db);
  for (const name of PAGED) {
    const e = endpointNamed(name);
    const whole = e.build(store, args({ limit: 1000 })) as Item[];
    t.ok(whole.length > 20, `${name}: a list worth paging (${whole.length} items)`);
    for (const limit of [1, 7, whole.length, whole.length + 1]) {
      const { items, pages } = walk(store, e, args({ limit }));
      t.same(ids(name, items), ids(name, whole), `${name} by ${limit}: the whole list in order`);
      t.equal(pages, Math.max(1, Math.ceil(whole.length / limit)), `${name} by ${limit}: no empty last page`);
    }
  }
});

t.test('filters page too: mentions of one entity type and engine, citations of one engine', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld()));
  const store = new ReadStore(db);
  const cases: Array<[string, Partial<ReadArgs>]> = [['mentions', { entityType: 'competitor', engineIds: [W.engineB] }], ['citations', { engineIds: [W.engineA] }]];
  for (const [name, over] of cases) {
    const e = endpointNamed(name);
    const whole = e.build(store, args({ limit: 1000, ...over })) as Item[];
    t.ok(whole.length > 5, `${name}: filtered list of ${whole.length}`);
    t.same(ids(name, walk(store, e, args({ limit: 4, ...over })).items), ids(name, whole), `${name} filtered: whole list`);
  }
});

t.test('v1 requests (no cursor) build the same bodies as before paging', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld()));
  const store = new ReadStore(db);
  for (const name of PAGED) {
    const e = endpointNamed(name);
    const limit = queryArgs({}, e, 7).limit; // 100 for mentions and citations; 0 (everything) for the lists v1 had no limit on
    const page = e.page!(store, args({ limit }), { version: versionOf(store), snapshots });
    t.same(page.items, e.build(store, args({ limit })), `${name}: page 1 is build()`);
  }
  t.equal(endpointNamed('runs').page!(store, args(), { version: versionOf(store), snapshots }).next, null, 'runs without limit: all, no next page');
});

t.test('events arriving between pages: every item of the list the walk began with, exactly once', async (t) => {
  for (const name of PAGED) {
    const { db, projector } = freshDb(t);
    projector.applyBatch(asSource(pagedWorld()));
    const store = new ReadStore(db);
    const e = endpointNamed(name);
    const before = ids(name, e.build(store, args({ limit: 1000 })) as Item[]);
    let position = 1_000_000;
    const { items } = walk(store, e, args({ limit: 6 }), (page) => {
      const batch = arriving(page);
      projector.applyBatch(asSource(batch, 'arriving', position));
      position += batch.length;
    });
    const seen = ids(name, items);
    t.equal(new Set(seen).size, seen.length, `${name}: no item twice`);
    t.same(seen.filter((i) => before.includes(i)), before, `${name}: every item of the first list, in its order`);
    const after = ids(name, e.build(store, args({ limit: 1000 })) as Item[]);
    t.not(after.join(), before.join(), `${name}: the list did change during the walk`);
  }
});

t.test('ranked lists when the pinned list is gone: rebuilt when the data did not move, else continued after the last key', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld()));
  const store = new ReadStore(db);
  for (const name of ['citations', 'forum-leads']) {
    const e = endpointNamed(name);
    const whole = e.build(store, args({ limit: 1000 })) as Item[];
    const first = e.page!(store, args({ limit: 5 }), { version: versionOf(store), snapshots });
    t.ok(snapshots.size > 0, `${name}: the walk's list is kept`);
    snapshots.clear();
    const second = e.page!(store, args({ limit: 5, cursor: first.next }), { version: versionOf(store), snapshots });
    t.same(ids(name, second.items as Item[]), ids(name, whole.slice(5, 10)), `${name}: same version, rebuilt: exact`);
    t.ok(second.next?.pinned, `${name}: the next page is pinned again`);
  }
  // The data moves and the kept lists are gone: pages continue after the cursor's key in the new order.
  const e = endpointNamed('citations');
  const first = e.page!(store, args({ limit: 5 }), { version: versionOf(store), snapshots });
  projector.applyBatch(asSource(arriving(1), 'arriving', 1_000_000));
  snapshots.clear();
  const now = e.build(store, args({ limit: 1000 })) as Item[];
  const second = e.page!(store, args({ limit: 5, cursor: first.next }), { version: versionOf(store), snapshots });
  const lastKey = first.next!.after;
  const start = now.findIndex((c) => Number(c.citation_count) < Number(lastKey[0]) || (c.citation_count === lastKey[0] && String(c.url) > String(lastKey[1])));
  t.same(ids('citations', second.items as Item[]), ids('citations', now.slice(start, start + 5)), 'the page after the last key in the current order');
  t.equal(second.next!.pinned!.version, versionOf(store), 'and the walk pins the current list from there');
});

t.test('the kept lists are the owner\'s, passed in: a read model keeps no state between builds', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld()));
  const store = new ReadStore(db);
  const e = endpointNamed('citations');
  const mine = new PageSnapshots();
  const other = new PageSnapshots();
  const first = e.page!(store, args({ limit: 5 }), { version: versionOf(store), snapshots: mine });
  t.same([mine.size, other.size], [1, 0], 'the walk\'s list is kept by the owner whose context built the page, only');
  const second = e.page!(store, args({ limit: 5, cursor: first.next }), { version: versionOf(store), snapshots: other });
  t.same([mine.size, other.size], [1, 1], 'another owner builds the list again (the data did not move) and keeps its own');
  const whole = e.build(store, args({ limit: 1000 })) as Item[];
  t.same(ids('citations', second.items as Item[]), ids('citations', whole.slice(5, 10)), 'and the walk stays exact');
});

// A cursor is signed over its list's identity (serve/request/cursor.ts): a walk asked as v1 or v1.1 could ask
// it must keep the identity it had then, or the cursors issued before an upgrade fail after it. The
// strings below are those releases' identities, written out.
t.test('a list asked as an earlier release could ask it keeps that release\'s identity', async (t) => {
  const P = W.project;
  const identityOf = (name: string, query: string): string => {
    const e = endpointNamed(name);
    return listIdentity(e, { ...queryArgs(querystring.parse(query), e, 7), projectId: P });
  };
  const cases: Array<[string, string, string[]]> = [
    ['citations', '', ['citations', P, '*', '*']],
    ['citations', `engine_ids=${W.engineB}&engine_ids=${W.engineA}&limit=5`, ['citations', P, `${W.engineA},${W.engineB}`, '*']],
    ['citations', 'start_date=2026-10-20&end_date=2026-11-10', ['citations', P, '*', '*', '2026-10-20', '2026-11-10']],
    ['mentions', 'entity_type=brand&start_date=2026-10-20', ['mentions', P, '*', 'brand', '2026-10-20', '*']],
    ['mentions', `end_date=2026-11-10&engine_ids=${W.engineA}`, ['mentions', P, W.engineA, '*', '*', '2026-11-10']],
  ];
  for (const [name, query, want] of cases) t.equal(identityOf(name, query), want.join('\n'), `${name}?${query}: as v1/v1.1 signed it`);
  // The dimension filters join only when given (with the range's places), so their lists differ.
  const withCountry = identityOf('citations', 'country=US');
  t.equal(withCountry, ['citations', P, '*', '*', '*', '*', 'US', '*', '*', '*'].join('\n'), 'a dimension filter joins with the range\'s places');
  t.not(identityOf('citations', 'start_date=2026-10-20&end_date=2026-11-10&segment_ids=' + W.segment), cases[2]![2].join('\n'), 'and makes a list of its own');
});
