// Each endpoint's dependsOn (src/readmodels/endpoint.ts) against real commits: for events of every
// kind, applied one batch at a time to a real store, every body whose bytes changed must depend on a
// kind of change whose counter the batch moved (store/change-log.ts projectVersions). Otherwise the body
// cache would keep sending the old bytes as current (serve/bodies/cache.ts relabel), and the change feed
// would not name the endpoint. A missing dependency fails here, naming the endpoint and the event.
import t from 'tap';
import type { ParsedUrlQuery } from 'node:querystring';
import { ENDPOINTS, PageSnapshots, ReadStore, type Endpoint, type ReadArgs } from '../../src/readmodels';
import { queryArgs, queryParams } from '../../src/serve/request/params';
import { CHANGE_KINDS, inputsVersion, projectVersions, type ChangeKind } from '../../src/store';
import { pagedWorld } from '../helpers/paged-world';
import { asSource, ev, id, run, W, type Ev } from '../helpers/events';
import { freshDb } from '../helpers/db';

const WINDOW_DAYS = 7;
const NEW_ENGINE = id(9, 'cccccccc');
const NEW_GROUP = id(9, '77777777');
const POST = id(1, '12121212');

/** The queries each endpoint is asked with: the defaults, and every parameter it takes. */
function queries(e: Endpoint): ParsedUrlQuery[] {
  const out: ParsedUrlQuery[] = [{}];
  const takes = (name: string): boolean => queryParams(e).some((p) => p.name === name);
  if (takes('start_date')) out.push({ start_date: '2026-01-03', end_date: '2026-01-09' }, { start_date: '2026-01-04' }, { end_date: '2026-01-08' });
  if (takes('engine_ids')) out.push({ engine_ids: W.engineB }, { engine_ids: NEW_ENGINE });
  if (takes('entity_type')) out.push({ entity_type: 'competitor' });
  if (takes('interval')) out.push({ interval: 'week' }, { interval: 'month', start_date: '2025-12-01', end_date: '2026-02-28' });
  if (takes('limit')) out.push({ limit: '3' });
  return out;
}

/** The body's bytes as a build makes them now (a page: its items and where the next page starts). */
function body(store: ReadStore, e: Endpoint, args: ReadArgs): string {
  return store.snapshot(() => {
    const text = e.text?.(store, args) ?? null;
    if (text !== null) return text;
    if (!e.page) return JSON.stringify(e.build(store, args));
    const page = e.page(store, args, { version: 0, snapshots: new PageSnapshots() });
    return JSON.stringify({ items: page.items, next: page.next?.after ?? null });
  });
}

/** Every body of the project's endpoints (and its run group's, and the account's list), by endpoint and query. */
function bodies(store: ReadStore): Map<string, { e: Endpoint; text: string }> {
  const out = new Map<string, { e: Endpoint; text: string }>();
  for (const e of ENDPOINTS) {
    for (const q of queries(e)) {
      const args: ReadArgs = {
        ...queryArgs(q, e, WINDOW_DAYS), accountId: W.account, windowDays: WINDOW_DAYS, cursor: null,
        projectId: e.scope === 'account' ? '' : W.project, runGroupId: e.scope === 'run_group' ? W.group : '',
      };
      out.set(`${e.name} ${JSON.stringify(q)}`, { e, text: body(store, e, args) });
    }
  }
  return out;
}

const at = (n: number): string => `2026-02-${String(n).padStart(2, '0')}T00:00:00.000Z`;

/** Events of every kind, each its own batch, in this order (later ones build on earlier ones). */
const CHANGES: Array<{ what: string; events: Ev[] }> = [
  { what: 'a run on a new latest day', events: [run({ n: 2001, day: '2026-01-12', brand: 2, competitor: 1, citations: ['https://www.reddit.com/r/anvils/1', 'https://wile.com/a'] })] },
  { what: 'a run of an earlier day of the window, citing a community page again', events: [run({ n: 2002, day: '2026-01-11', prompt: W.prompt2, engine: W.engineB, brand: 1, citations: ['https://www.reddit.com/r/anvils/1', 'https://acme.com/x'] })] },
  { what: 'a failed run', events: [run({ n: 2003, day: '2026-01-12', status: 'failed' })] },
  { what: 'a run of an engine not known yet', events: [run({ n: 2004, day: '2026-01-11', engine: NEW_ENGINE, brand: 1, citations: ['https://new.example/a'] })] },
  { what: 'a run group started', events: [ev('run_group.started', { id: NEW_GROUP, project_id: W.project, started_at: '2026-01-12T00:00:00Z' }, at(1))] },
  { what: 'a run group completed', events: [ev('run_group.completed', { id: W.group, completed_at: '2026-01-12T23:00:00Z', status: 'completed' }, at(2))] },
  {
    what: 'a forum post discovered', events: [ev('forum_post.discovered', {
      id: id(999, '12121212'), project_id: W.project, platform: 'reddit', url: 'https://forum.example/new', title: 'New',
      discovered_at: '2026-01-12T10:00:00.000Z', relevance: 0.95, intent: 'high', matched_terms: ['anvil'],
    }, at(3))],
  },
  { what: 'a forum post updated', events: [ev('forum_post.updated', { id: POST, project_id: W.project, status: 'engaged', relevance: 0.2 }, at(4))] },
  { what: 'a domain term', events: [ev('term.upserted', { id: id(2, '33333333'), project_id: W.project, value: 'reddit.com', kind: 'domain' }, at(5))] },
  { what: 'a brand term deleted', events: [ev('term.deleted', { id: id(1, '33333333'), project_id: W.project }, at(6))] },
  { what: 'a prompt edited', events: [ev('prompt.upserted', { id: W.prompt2, project_id: W.project, text: 'an anvil', segment_ids: [W.segment], active: false }, at(7))] },
  { what: 'a segment renamed', events: [ev('segment.upserted', { id: W.segment, project_id: W.project, name: 'Shoppers', active: true }, at(8))] },
  { what: 'a competitor renamed, its domain changed', events: [ev('competitor.upserted', { id: W.competitor, project_id: W.project, name: 'Coyote', domain: 'new.example', aliases: [] }, at(9))] },
  { what: 'an engine untracked', events: [ev('project.engine_untracked', { project_id: W.project, engine_id: W.engineB, at: at(10) }, at(10))] },
  { what: 'the engine of earlier runs arrives', events: [ev('engine.upserted', { id: NEW_ENGINE, name: 'Gemini', provider: 'google' }, at(12))] },
  { what: 'an engine tracked', events: [ev('project.engine_tracked', { project_id: W.project, engine_id: NEW_ENGINE, at: at(12) }, at(12))] },
  { what: 'an engine renamed', events: [ev('engine.upserted', { id: W.engineA, name: 'ChatGPT 5', provider: 'openai', model: 'gpt-5' }, at(13))] },
  {
    what: 'the project renamed, its domain changed', events: [ev('project.upserted', {
      id: W.project, company_id: W.account, name: 'Acme Renamed', domain: 'new.example', status: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: at(14),
    }, at(14))],
  },
  { what: 'a prompt deleted', events: [ev('prompt.deleted', { id: W.prompt1, project_id: W.project }, at(15))] },
  { what: 'a competitor deleted', events: [ev('competitor.deleted', { id: W.competitor, project_id: W.project }, at(16))] },
];

t.test('every body a commit changes depends on a kind of change whose version it moved', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld(), 'world'));
  const store = new ReadStore(db);
  const changedBy = new Map<ChangeKind, Set<string>>(CHANGE_KINDS.map((k) => [k, new Set()]));
  let before = bodies(store);
  let n = 0;
  for (const c of CHANGES) {
    const v0 = projectVersions(store, W.project);
    const result = projector.applyBatch(asSource(c.events, `change-${(n += 1)}`));
    t.equal(result.applied, c.events.length, `${c.what}: applied`);
    const v1 = projectVersions(store, W.project);
    const moved = CHANGE_KINDS.filter((k) => v1.kinds[k] !== v0.kinds[k]);
    t.ok(moved.length > 0, `${c.what}: moved ${moved.join(', ')}`);
    const after = bodies(store);
    let changed = 0;
    for (const [key, { e, text }] of after) {
      if (text === before.get(key)!.text) continue;
      changed += 1;
      for (const k of moved) changedBy.get(k)!.add(e.name);
      // What the cache compares: equal inputs would relabel the old bytes as current.
      if (inputsVersion(v1, e.dependsOn) === inputsVersion(v0, e.dependsOn)) {
        t.fail(`${e.name} changed with ${c.what} (${moved.join(', ')}) but depends on ${e.dependsOn.join(', ')} only: ${key}`);
      }
    }
    t.ok(changed > 0, `${c.what}: changed ${changed} bodies (the world exercises it)`);
    before = after;
  }
  // Each kind changed some body here: a declaration too wide would not fail above, but every kind is exercised.
  for (const [k, names] of changedBy) t.ok(names.size > 0, `${k}: ${[...names].sort().join(', ')}`);
});

t.test('a forum post moves only the forum counter; a run only the runs counter', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(pagedWorld(), 'world'));
  const store = new ReadStore(db);
  const moved = (events: Ev[], source: string): ChangeKind[] => {
    const v0 = projectVersions(store, W.project);
    projector.applyBatch(asSource(events, source));
    const v1 = projectVersions(store, W.project);
    t.ok(v1.version > v0.version, 'the project\'s data version moved');
    return CHANGE_KINDS.filter((k) => v1.kinds[k] !== v0.kinds[k]);
  };
  t.same(moved(CHANGES[6]!.events, 'forum'), ['forum']);
  t.same(moved(CHANGES[0]!.events, 'run'), ['runs']);
  t.same(moved(CHANGES[14]!.events, 'engine'), ['engines']);
});
