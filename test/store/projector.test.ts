// The projector, event type by event type: each one's visible effect in the tables, then the rules
// that make ingestion order-independent (last writer wins by occurred_at then event_id, versioned
// tombstones, created_at = earliest occurred_at seen), redelivery and retries, data_version scopes,
// bucket recomputation when a run moves, orphans kept, and source positions.
// Every expected value below is worked out by hand in the comments.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { PromptRunCompleted } from '../../src/events';
import { storedCitations, storedMentions } from '../../src/store/contributions';
import { digest, RR_SCALE, SENTIMENT_SCALE, type BatchResult, type Db, type Projector } from '../../src/store';
import { asSource, ev, id, run, sha256, W, world, type Ev } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { ROOT } from '../helpers/paths';

type Row = Record<string, unknown>;

const T0 = '2026-01-01T00:00:00.000Z'; // the world() events
const T1 = '2026-01-02T00:00:00.000Z';
const T2 = '2026-01-03T00:00:00.000Z';
const T3 = '2026-01-04T00:00:00.000Z';
const T4 = '2026-01-05T00:00:00.000Z';

const P = W.project;
const O = W.otherProject;
const scope = (projectId: string): string => `project:${projectId}`;

/** A fresh database, closed and removed when the test ends. */
function fresh(tt: Test): { db: Db; projector: Projector; apply: (events: Array<Ev | string>, source?: string, start?: number) => BatchResult } {
  const { db, projector } = freshDb(tt);
  return { db, projector, apply: (events, source = 'test', start = 1) => projector.applyBatch(asSource(events, source, start)) };
}

const one = (db: Db, sql: string, ...params: unknown[]): Row | undefined => db.prepare(sql).get(...params) as Row | undefined;
const all = (db: Db, sql: string, ...params: unknown[]): Row[] => db.prepare(sql).all(...params) as Row[];
const count = (db: Db, table: string): number => (one(db, `SELECT count(*) AS n FROM ${table}`)!.n as number);

/** The data_version scopes, without the per-kind counters (kindVersions). */
function versions(db: Db): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of all(db, "SELECT scope, version FROM data_versions WHERE scope NOT LIKE 'kind:%' ORDER BY scope")) out[r.scope as string] = r.version as number;
  return out;
}

/** The per-kind counters of a project (store/versions.ts kindScope), by kind. */
function kindVersions(db: Db, projectId: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of all(db, "SELECT scope, version FROM data_versions WHERE scope LIKE 'kind:%:' || ? ORDER BY scope", projectId)) {
    out[(r.scope as string).split(':')[1]!] = r.version as number;
  }
  return out;
}

function result(over: Partial<BatchResult>): BatchResult {
  return { applied: 0, duplicate: 0, stale: 0, deadLettered: 0, changed: [], ...over };
}

/** An explicit event id, so ties and orderings are under the test's control. */
const eid = (n: number): string => id(n, 'e0e0e0e0');

// ------------------------------------------------------------------ one test per event type

t.test('account.upserted writes the account; a newer upsert renames it', (tt) => {
  const { db, apply } = fresh(tt);
  tt.strictSame(apply([ev('account.upserted', { account_id: W.account, name: 'Acme' }, T0)]), result({ applied: 1 }));
  tt.strictSame(one(db, 'SELECT id, name FROM accounts'), { id: W.account, name: 'Acme' });
  apply([ev('account.upserted', { account_id: W.account, name: 'Acme Corp' }, T1)]);
  tt.strictSame(all(db, 'SELECT id, name FROM accounts'), [{ id: W.account, name: 'Acme Corp' }]);
  tt.end();
});

t.test('api_key.issued writes the key by its hash, times normalized to UTC; bumps keys', (tt) => {
  const { db, apply } = fresh(tt);
  const key = id(1, '11111111');
  const r = apply([ev('api_key.issued', {
    key_id: key, account_id: W.account, key_sha256: sha256('k'), label: 'CI', issued_at: '2026-01-01T01:30:00+01:00',
  }, T0)]);
  tt.strictSame(r, result({ applied: 1, changed: ['keys'] }));
  tt.strictSame(one(db, 'SELECT key_id, account_id, key_sha256, label, issued_at, revoked_at FROM api_keys'), {
    key_id: key, account_id: W.account, key_sha256: sha256('k'), label: 'CI', issued_at: '2026-01-01T00:30:00.000Z', revoked_at: null,
  });
  tt.end();
});

t.test('api_key.revoked sets revoked_at and keeps the issued fields, in either order', (tt) => {
  const key = id(1, '11111111');
  const issued = ev('api_key.issued', { key_id: key, account_id: W.account, key_sha256: sha256('k'), issued_at: T0 }, T0);
  const revoked = ev('api_key.revoked', { key_id: key, revoked_at: '2026-01-02T10:00:00Z' }, T1);
  const expected = { key_id: key, account_id: W.account, key_sha256: sha256('k'), label: null, issued_at: T0, revoked_at: '2026-01-02T10:00:00.000Z' };
  for (const order of [[issued, revoked], [revoked, issued]]) {
    const { db, apply } = fresh(tt);
    const results = order.map((e) => apply([e]));
    tt.strictSame(results.map((r) => r.changed), [['keys'], ['keys']], 'each part bumps keys');
    tt.strictSame(one(db, 'SELECT key_id, account_id, key_sha256, label, issued_at, revoked_at FROM api_keys'), expected,
      `${order[0]!.type} first`);
  }
  tt.end();
});

t.test('project.upserted writes the project and bumps catalog and the project', (tt) => {
  const { db, apply } = fresh(tt);
  const e = ev('project.upserted', {
    id: P, company_id: W.account, name: 'Acme Project', domain: 'acme.com', category_summary: 'Anvils', status: 'active',
    created_at: '2025-12-31T23:00:00-02:00', updated_at: '2026-01-01T00:00:00Z',
  }, T0);
  tt.strictSame(apply([e]), result({ applied: 1, changed: ['catalog', scope(P)] }));
  tt.strictSame(one(db, 'SELECT * FROM projects'), {
    id: P, company_id: W.account, name: 'Acme Project', domain: 'acme.com', description: null, category_summary: 'Anvils',
    status: 'active', created_at: '2026-01-01T01:00:00.000Z', updated_at: T0, deleted: 0, v_at: T0, v_id: e.event_id,
  });
  tt.end();
});

t.test('project.deleted tombstones the project', (tt) => {
  const { db, apply } = fresh(tt);
  apply(world());
  const r = apply([ev('project.deleted', { id: P }, T1)]);
  tt.strictSame(r, result({ applied: 1, changed: ['catalog', scope(P)] }));
  tt.strictSame(one(db, 'SELECT name, deleted FROM projects WHERE id = ?', P), { name: null, deleted: 1 }, 'a tombstone keeps no data: its content never depends on arrival order');
  tt.strictSame(one(db, 'SELECT deleted FROM projects WHERE id = ?', O), { deleted: 0 }, 'the other project is untouched');
  tt.end();
});

t.test('project.access_granted / access_revoked flip project_access.granted', (tt) => {
  const { db, apply } = fresh(tt);
  const grant = apply([ev('project.access_granted', { project_id: P, account_id: W.otherAccount }, T1)]);
  tt.strictSame(grant, result({ applied: 1, changed: ['catalog'] }));
  tt.strictSame(all(db, 'SELECT project_id, account_id, granted FROM project_access'), [{ project_id: P, account_id: W.otherAccount, granted: 1 }]);
  const revoke = apply([ev('project.access_revoked', { project_id: P, account_id: W.otherAccount }, T2)]);
  tt.strictSame(revoke, result({ applied: 1, changed: ['catalog'] }));
  tt.strictSame(all(db, 'SELECT project_id, account_id, granted FROM project_access'), [{ project_id: P, account_id: W.otherAccount, granted: 0 }]);
  // A grant older than the revoke arrives late: it loses.
  tt.strictSame(apply([ev('project.access_granted', { project_id: P, account_id: W.otherAccount }, T1)]), result({ stale: 1 }));
  tt.equal(one(db, 'SELECT granted FROM project_access')!.granted, 0);
  tt.end();
});

t.test('engine.upserted writes the engine', (tt) => {
  const { db, apply } = fresh(tt);
  apply([
    ev('engine.upserted', { id: W.engineA, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o' }, T0),
    ev('engine.upserted', { id: W.engineB, name: 'Perplexity', provider: 'perplexity' }, T0),
  ]);
  tt.strictSame(all(db, 'SELECT id, name, provider, model FROM engines ORDER BY id'), [
    { id: W.engineA, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o' },
    { id: W.engineB, name: 'Perplexity', provider: 'perplexity', model: null },
  ]);
  tt.end();
});

t.test('project.engine_tracked / engine_untracked flip project_engines.tracked', (tt) => {
  const { db, apply } = fresh(tt);
  const tracked = apply([ev('project.engine_tracked', { project_id: P, engine_id: W.engineA, at: '2026-01-02T03:00:00+03:00' }, T1)]);
  tt.strictSame(tracked, result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(all(db, 'SELECT project_id, engine_id, tracked, since FROM project_engines'),
    [{ project_id: P, engine_id: W.engineA, tracked: 1, since: T1 }]);
  const untracked = apply([ev('project.engine_untracked', { project_id: P, engine_id: W.engineA, at: T2 }, T2)]);
  tt.strictSame(untracked, result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(all(db, 'SELECT project_id, engine_id, tracked, since FROM project_engines'),
    [{ project_id: P, engine_id: W.engineA, tracked: 0, since: T2 }]);
  tt.end();
});

t.test('term.upserted / term.deleted', (tt) => {
  const { db, apply } = fresh(tt);
  const term = id(1, '33333333');
  tt.strictSame(apply([ev('term.upserted', { id: term, project_id: P, value: 'Acme', kind: 'brand' }, T1)]), result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(one(db, 'SELECT id, project_id, value, kind, created_at, deleted FROM terms'),
    { id: term, project_id: P, value: 'Acme', kind: 'brand', created_at: T1, deleted: 0 });
  tt.strictSame(apply([ev('term.deleted', { id: term, project_id: P }, T2)]), result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(one(db, 'SELECT id, project_id, value, kind, created_at, deleted FROM terms'),
    { id: term, project_id: P, value: null, kind: null, created_at: T1, deleted: 1 });
  tt.end();
});

t.test('segment.upserted / segment.deleted', (tt) => {
  const { db, apply } = fresh(tt);
  const cols = 'id, project_id, name, description, active, created_at, updated_at, deleted';
  apply([ev('segment.upserted', { id: W.segment, project_id: P, name: 'Buyers', active: true }, T1)]);
  tt.strictSame(one(db, `SELECT ${cols} FROM segments`),
    { id: W.segment, project_id: P, name: 'Buyers', description: null, active: 1, created_at: T1, updated_at: T1, deleted: 0 });
  apply([ev('segment.upserted', { id: W.segment, project_id: P, name: 'Buyers EU', description: 'EU only', active: false }, T2)]);
  tt.strictSame(one(db, `SELECT ${cols} FROM segments`),
    { id: W.segment, project_id: P, name: 'Buyers EU', description: 'EU only', active: 0, created_at: T1, updated_at: T2, deleted: 0 });
  tt.strictSame(apply([ev('segment.deleted', { id: W.segment, project_id: P }, T3)]), result({ applied: 1, changed: [scope(P)] }));
  tt.equal(one(db, 'SELECT deleted FROM segments')!.deleted, 1);
  tt.equal(one(db, 'SELECT created_at FROM segments')!.created_at, T1);
  tt.end();
});

t.test('prompt.upserted fills prompt_segments; a newer upsert rewrites them; prompt.deleted clears them', (tt) => {
  const { db, apply } = fresh(tt);
  const s1 = id(1, 'dddddddd');
  const s2 = id(2, 'dddddddd');
  const segs = (): Row[] => all(db, 'SELECT prompt_id, segment_id, project_id FROM prompt_segments ORDER BY prompt_id, segment_id');
  tt.strictSame(apply([ev('prompt.upserted', { id: W.prompt1, project_id: P, text: 'best anvil', segment_ids: [s2, s1], active: true }, T1)]),
    result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(one(db, 'SELECT id, project_id, text, segment_ids, active, created_at, updated_at, deleted FROM prompts'), {
    id: W.prompt1, project_id: P, text: 'best anvil', segment_ids: JSON.stringify([s1, s2]), active: 1, created_at: T1, updated_at: T1, deleted: 0,
  });
  tt.strictSame(segs(), [
    { prompt_id: W.prompt1, segment_id: s1, project_id: P },
    { prompt_id: W.prompt1, segment_id: s2, project_id: P },
  ]);
  apply([ev('prompt.upserted', { id: W.prompt1, project_id: P, text: 'best anvil 2026', segment_ids: [s2], active: false }, T2)]);
  tt.strictSame(segs(), [{ prompt_id: W.prompt1, segment_id: s2, project_id: P }]);
  tt.strictSame(one(db, 'SELECT text, active, updated_at FROM prompts'), { text: 'best anvil 2026', active: 0, updated_at: T2 });
  tt.strictSame(apply([ev('prompt.deleted', { id: W.prompt1, project_id: P }, T3)]), result({ applied: 1, changed: [scope(P)] }));
  tt.equal(one(db, 'SELECT deleted FROM prompts')!.deleted, 1);
  tt.strictSame(segs(), [], 'a deleted prompt is in no segment');
  tt.end();
});

t.test('competitor.upserted / competitor.deleted', (tt) => {
  const { db, apply } = fresh(tt);
  const cols = 'id, project_id, name, domain, aliases, created_at, updated_at, deleted';
  tt.strictSame(apply([ev('competitor.upserted', { id: W.competitor, project_id: P, name: 'Wile', domain: 'wile.com', aliases: ['Wile E.', 'Coyote'] }, T1)]),
    result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(one(db, `SELECT ${cols} FROM competitors`), {
    id: W.competitor, project_id: P, name: 'Wile', domain: 'wile.com', aliases: '["Wile E.","Coyote"]', created_at: T1, updated_at: T1, deleted: 0,
  });
  tt.strictSame(apply([ev('competitor.deleted', { id: W.competitor, project_id: P }, T2)]), result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(one(db, 'SELECT name, deleted FROM competitors'), { name: null, deleted: 1 });
  tt.end();
});

t.test('a term, segment, prompt, competitor, forum post or run group moved to another project changes the project it left too', (tt) => {
  const moves: Array<[string, string, (projectId: string, at: string, label: string) => Ev]> = [
    ['term', 'terms', (p, at, label) => ev('term.upserted', { id: id(1, '33333333'), project_id: p, value: label, kind: 'brand' }, at)],
    ['segment', 'segments', (p, at, label) => ev('segment.upserted', { id: W.segment, project_id: p, name: label, active: true }, at)],
    ['prompt', 'prompts', (p, at, label) => ev('prompt.upserted', { id: W.prompt1, project_id: p, text: label, segment_ids: [], active: true }, at)],
    ['competitor', 'competitors', (p, at, label) => ev('competitor.upserted', { id: W.competitor, project_id: p, name: label, aliases: [] }, at)],
    ['forum post', 'forum_posts', (p, at, label) => ev('forum_post.discovered', {
      id: id(1, '12121212'), project_id: p, platform: 'reddit', url: 'https://reddit.com/r/anvils/1', title: label, discovered_at: T1,
      relevance: 0.5, intent: 'high', matched_terms: [],
    }, at)],
    ['run group', 'run_groups', (p, at, label) => ev('run_group.started', { id: W.group, project_id: p, trigger: label, started_at: '2026-01-05T00:00:00Z' }, at)],
  ];
  for (const [name, table, upsert] of moves) {
    const { db, apply } = fresh(tt);
    apply([upsert(P, T1, 'Acme')]);
    const before = versions(db);
    const kindsBefore = kindVersions(db, P);
    tt.strictSame(apply([upsert(O, T2, 'Acme')]), result({ applied: 1, changed: [scope(O), scope(P)].sort() }), `${name}: both projects changed`);
    tt.equal(versions(db)[scope(P)], before[scope(P)]! + 1, `${name}: the project it left has a new data version`);
    tt.notSame(kindVersions(db, P), kindsBefore, `${name}: and a new version of its kind`);
    tt.equal(count(db, `${table} WHERE project_id = '${P}'`), 0, `${name}: the project it left no longer holds it`);
    tt.strictSame(apply([upsert(O, T3, 'Acme Corp')]), result({ applied: 1, changed: [scope(O)] }), `${name}: an edit in place changes only its project`);
  }
  tt.end();
});

t.test('run_group.started / run_group.completed fill one row, each with its own version', (tt) => {
  const { db, apply } = fresh(tt);
  const cols = 'id, project_id, trigger, started_at, completed_at, status';
  tt.strictSame(apply([ev('run_group.started', { id: W.group, project_id: P, trigger: 'scheduled', started_at: '2026-01-05T00:00:00Z' }, T4)]),
    result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(one(db, `SELECT ${cols} FROM run_groups`),
    { id: W.group, project_id: P, trigger: 'scheduled', started_at: T4, completed_at: null, status: null });
  tt.strictSame(apply([ev('run_group.completed', { id: W.group, completed_at: '2026-01-05T01:00:00Z', status: 'partial' }, '2026-01-05T01:00:01Z')]),
    result({ applied: 1, changed: [scope(P)] }), 'completed finds the project through started');
  tt.strictSame(one(db, `SELECT ${cols} FROM run_groups`),
    { id: W.group, project_id: P, trigger: 'scheduled', started_at: T4, completed_at: '2026-01-05T01:00:00.000Z', status: 'partial' });

  // The other way round: completed first, then started; both parts end up in the row.
  const late = fresh(tt);
  late.apply([ev('run_group.completed', { id: W.group, completed_at: '2026-01-05T01:00:00Z', status: 'completed' }, '2026-01-05T01:00:01Z')]);
  late.apply([ev('run_group.started', { id: W.group, project_id: P, started_at: '2026-01-05T00:00:00Z' }, T4)]);
  tt.strictSame(one(late.db, `SELECT ${cols} FROM run_groups`),
    { id: W.group, project_id: P, trigger: null, started_at: T4, completed_at: '2026-01-05T01:00:00.000Z', status: 'completed' });
  tt.end();
});

// Runs of one bucket (project P, engine A, prompt 1, day 2026-01-05), plus one run elsewhere.
const R = { r1: id(1, '55555555'), r2: id(2, '55555555'), r3: id(3, '55555555'), r4: id(4, '55555555'), r5: id(5, '55555555') };
const ANVILS = 'https://www.anvils.com/best';
const BORG = 'https://b.org/x';

function runEvent(runId: string, status: string, completedAt: string, mentions: Row[], citations: Row[], extra: Row = {}): Ev {
  return ev('prompt_run.completed', {
    id: runId, run_group_id: W.group, project_id: P, prompt_id: W.prompt1, engine_id: W.engineA, status,
    completed_at: completedAt, mentions, citations, ...extra,
  }, completedAt);
}
const brandM = (position: number, sentiment?: number, name = 'Acme'): Row => ({ entity_type: 'brand', name, position, ...(sentiment === undefined ? {} : { sentiment }) });
const wileM = (position: number, sentiment?: number): Row => ({ entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position, ...(sentiment === undefined ? {} : { sentiment }) });

t.test('prompt_run.completed writes the run, its mentions and citations, and adds it to the aggregates', (tt) => {
  const { db, apply, projector } = fresh(tt);
  apply(world());
  const runs = [
    // Brand twice: best (lowest) is position 2 with sentiment -0.5. Wile twice: best is 1 with 0.5.
    // anvils.com cited twice: counts once for this run.
    runEvent(R.r1, 'succeeded', '2026-01-05T10:00:00Z',
      [{ ...brandM(3, 0.25), snippet: 'Acme makes anvils' }, wileM(1, 0.5), brandM(2, -0.5, 'Acme Inc'), wileM(4)],
      [{ url: ANVILS, title: 'Best anvils', position: 1 }, { url: BORG }, { url: ANVILS, title: 'Dup title', position: 3 }],
      { response_excerpt: 'Wile and Acme lead.' }),
    // Brand at 1 without sentiment; Wile at 2 with -0.25; anvils.com again, later, with a newer title.
    runEvent(R.r2, 'succeeded', '2026-01-05T14:00:00Z', [brandM(1), wileM(2, -0.25)], [{ url: ANVILS, title: 'Newer title' }]),
    // Mentions nothing.
    runEvent(R.r3, 'succeeded', '2026-01-05T16:00:00Z', [], []),
    // Failed: stored, counted in its run group, never in the aggregates.
    runEvent(R.r4, 'failed', '2026-01-05T18:00:00Z', [brandM(1, 1)], [{ url: BORG, title: 'B' }]),
    // Engine B, completed 23:30 at UTC-2 = 01:30 UTC the next day: bucket day 2026-01-06.
    ev('prompt_run.completed', {
      id: R.r5, run_group_id: W.group, project_id: P, prompt_id: W.prompt1, engine_id: W.engineB, status: 'succeeded',
      completed_at: '2026-01-05T23:30:00-02:00', mentions: [brandM(4, 0.5)], citations: [],
    }, '2026-01-06T01:30:01Z'),
  ];
  tt.strictSame(apply(runs), result({ applied: 5, changed: [scope(P)] }));

  tt.strictSame(all(db, `SELECT id, project_id, prompt_id, engine_id, status, completed_at, day, event ->> '$.data.response_excerpt' AS response_excerpt,
      brand_position, brand_sentiment, mention_count, citation_count FROM prompt_runs ORDER BY id`), [
    { id: R.r1, project_id: P, prompt_id: W.prompt1, engine_id: W.engineA, status: 'succeeded', completed_at: '2026-01-05T10:00:00.000Z', day: '2026-01-05',
      response_excerpt: 'Wile and Acme lead.', brand_position: 2, brand_sentiment: -0.5, mention_count: 4, citation_count: 3 },
    { id: R.r2, project_id: P, prompt_id: W.prompt1, engine_id: W.engineA, status: 'succeeded', completed_at: '2026-01-05T14:00:00.000Z', day: '2026-01-05',
      response_excerpt: null, brand_position: 1, brand_sentiment: null, mention_count: 2, citation_count: 1 },
    { id: R.r3, project_id: P, prompt_id: W.prompt1, engine_id: W.engineA, status: 'succeeded', completed_at: '2026-01-05T16:00:00.000Z', day: '2026-01-05',
      response_excerpt: null, brand_position: null, brand_sentiment: null, mention_count: 0, citation_count: 0 },
    { id: R.r4, project_id: P, prompt_id: W.prompt1, engine_id: W.engineA, status: 'failed', completed_at: '2026-01-05T18:00:00.000Z', day: '2026-01-05',
      response_excerpt: null, brand_position: 1, brand_sentiment: 1, mention_count: 1, citation_count: 1 },
    { id: R.r5, project_id: P, prompt_id: W.prompt1, engine_id: W.engineB, status: 'succeeded', completed_at: '2026-01-06T01:30:00.000Z', day: '2026-01-06',
      response_excerpt: null, brand_position: 4, brand_sentiment: 0.5, mention_count: 1, citation_count: 0 },
  ]);

  // The row keeps the event as it came; what the API shows of it is every mention and citation as
  // reported, in order, normalized (absent fields null; citations carry their domain).
  tt.equal(one(db, 'SELECT event FROM prompt_runs WHERE id = ?', R.r5)!.event, JSON.stringify(runs[4]), 'the event, byte for byte');
  const stored = (runId: string): { mentions: unknown; citations: unknown } => {
    const { data } = JSON.parse(one(db, 'SELECT event FROM prompt_runs WHERE id = ?', runId)!.event as string) as { data: PromptRunCompleted };
    return { mentions: storedMentions(data.mentions), citations: storedCitations(data.citations) };
  };
  tt.strictSame(stored(R.r1), {
    mentions: [
      { entity_type: 'brand', competitor_id: null, name: 'Acme', position: 3, sentiment: 0.25, snippet: 'Acme makes anvils' },
      { entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 1, sentiment: 0.5, snippet: null },
      { entity_type: 'brand', competitor_id: null, name: 'Acme Inc', position: 2, sentiment: -0.5, snippet: null },
      { entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 4, sentiment: null, snippet: null },
    ],
    citations: [
      { url: ANVILS, domain: 'anvils.com', title: 'Best anvils', position: 1 },
      { url: BORG, domain: 'b.org', title: null, position: null },
      { url: ANVILS, domain: 'anvils.com', title: 'Dup title', position: 3 },
    ],
  });
  tt.strictSame(stored(R.r3), { mentions: [], citations: [] });
  tt.strictSame(stored(R.r4), {
    mentions: [{ entity_type: 'brand', competitor_id: null, name: 'Acme', position: 1, sentiment: 1, snippet: null }],
    citations: [{ url: BORG, domain: 'b.org', title: 'B', position: null }],
  }, 'a failed run keeps what the analyser reported');

  // Day 2026-01-05, engine A: succeeded runs r1, r2, r3 (r4 failed). Brand in r1 (@2, -0.5) and r2 (@1, none):
  // position_sum 3, rr 1/2 + 1 = 1.5, sentiment -0.5 over 1; Wile (tracked) in r1 and r2. Day 2026-01-06,
  // engine B: r5 (@4, 0.5). The two fractional sums are fixed-point integers (x RR_SCALE, x SENTIMENT_SCALE).
  // The engine-day rows move with the batch.
  tt.strictSame(all(db, 'SELECT * FROM agg_engine_day ORDER BY day'), [
    { project_id: P, day: '2026-01-05', engine_id: W.engineA, runs: 3, brand_runs: 2, position_sum: 3, rr_fixed: 1.5 * RR_SCALE, sentiment_fixed: -0.5 * SENTIMENT_SCALE, sentiment_n: 1, competitor_runs: 2, prompt_ids: W.prompt1 },
    { project_id: P, day: '2026-01-06', engine_id: W.engineB, runs: 1, brand_runs: 1, position_sum: 4, rr_fixed: 0.25 * RR_SCALE, sentiment_fixed: 0.5 * SENTIMENT_SCALE, sentiment_n: 1, competitor_runs: 0, prompt_ids: W.prompt1 },
  ]);
  // The week (Monday 2026-01-05) waits in memory until the writer settles, then has the same sums per engine and prompt.
  tt.strictSame(all(db, "SELECT grain, day FROM rollup_pending ORDER BY grain"), [{ grain: 'month', day: '2026-01-01' }, { grain: 'week', day: '2026-01-05' }]);
  tt.equal(count(db, 'agg_prompt_week'), 0, 'nothing written for the pending week yet');
  projector.settle();
  tt.equal(count(db, 'rollup_pending'), 0);
  tt.strictSame(all(db, 'SELECT * FROM agg_prompt_week ORDER BY engine_id'), [
    { project_id: P, day: '2026-01-05', engine_id: W.engineA, prompt_id: W.prompt1, runs: 3, brand_runs: 2, position_sum: 3, rr_fixed: 1.5 * RR_SCALE, sentiment_fixed: -0.5 * SENTIMENT_SCALE, sentiment_n: 1 },
    { project_id: P, day: '2026-01-05', engine_id: W.engineB, prompt_id: W.prompt1, runs: 1, brand_runs: 1, position_sum: 4, rr_fixed: 0.25 * RR_SCALE, sentiment_fixed: 0.5 * SENTIMENT_SCALE, sentiment_n: 1 },
  ]);
  // Wile: r1 best @1 (0.5), r2 @2 (-0.25): runs 2, position_sum 3, rr_sum 1 + 1/2, sentiment 0.25 over 2.
  tt.strictSame(all(db, 'SELECT * FROM agg_competitor_month'), [
    { project_id: P, day: '2026-01-01', engine_id: W.engineA, prompt_id: W.prompt1, competitor_id: W.competitor, runs: 2, position_sum: 3, rr_fixed: 1.5 * RR_SCALE, sentiment_fixed: 0.25 * SENTIMENT_SCALE, sentiment_n: 2 },
  ]);
  // anvils.com: r1 (once) and r2; latest title is r2's. b.org: r1 only (r4 failed), no title.
  tt.strictSame(all(db, 'SELECT * FROM agg_cited_engine_week ORDER BY url'), [
    { project_id: P, day: '2026-01-05', url: BORG, engine_id: W.engineA, domain: 'b.org', runs: 1, prompt_ids: W.prompt1,
      first_at: '2026-01-05T10:00:00.000Z', last_at: '2026-01-05T10:00:00.000Z', title: null, title_at: null, title_bucket: null, title_run: null },
    { project_id: P, day: '2026-01-05', url: ANVILS, engine_id: W.engineA, domain: 'anvils.com', runs: 2, prompt_ids: W.prompt1,
      first_at: '2026-01-05T10:00:00.000Z', last_at: '2026-01-05T14:00:00.000Z', title: 'Newer title', title_at: '2026-01-05T14:00:00.000Z',
      title_bucket: `2026-01-05 ${W.engineA} ${W.prompt1}`, title_run: R.r2 },
  ]);
  tt.strictSame(all(db, 'SELECT * FROM agg_run_group'), [{ run_group_id: W.group, project_id: P, prompt_run_count: 5, succeeded_count: 4, failed_count: 1 }]);
  tt.end();
});

t.test('forum_post.discovered writes the post and its fields', (tt) => {
  const { db, apply } = fresh(tt);
  const post = id(1, '12121212');
  const r = apply([ev('forum_post.discovered', {
    id: post, project_id: P, platform: 'reddit', url: 'https://reddit.com/r/anvils/1', title: 'Best anvil?', author: 'wile',
    posted_at: '2026-01-01T10:00:00+02:00', discovered_at: '2026-01-02T00:00:00Z', relevance: 0.75, intent: 'high',
    matched_terms: ['anvil', 'Acme'], comment_count: 12,
  }, T1)]);
  tt.strictSame(r, result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(one(db, `SELECT id, project_id, platform, url, title, community, author, posted_at, discovered_at, matched_terms FROM forum_posts`), {
    id: post, project_id: P, platform: 'reddit', url: 'https://reddit.com/r/anvils/1', title: 'Best anvil?', community: null, author: 'wile',
    posted_at: '2026-01-01T08:00:00.000Z', discovered_at: T1, matched_terms: '["anvil","Acme"]',
  });
  const fields = Object.fromEntries(all(db, 'SELECT field, value FROM forum_post_fields WHERE post_id = ?', post).map((f) => [f.field, f.value]));
  tt.equal(fields.relevance, '0.75');
  tt.equal(fields.intent, '"high"');
  tt.equal(fields.comment_count, '12');
  tt.equal(fields.score, undefined, 'an absent score is not reported, so nothing is stored (the API shows null)');
  tt.end();
});

t.test('forum_post.updated: last writer wins per field', (tt) => {
  const { db, apply } = fresh(tt);
  const post = id(1, '12121212');
  apply([ev('forum_post.discovered', {
    id: post, project_id: P, platform: 'reddit', url: 'https://reddit.com/r/anvils/1', title: 'Best anvil?',
    discovered_at: T1, relevance: 0.75, intent: 'high', matched_terms: [], comment_count: 12, score: 3,
  }, T1)]);
  tt.strictSame(apply([ev('forum_post.updated', { id: post, status: 'engaged', score: 40 }, T3)]), result({ applied: 1, changed: [scope(P)] }));
  // Older than the score of T3, newer than the comment_count of T1: only comment_count changes.
  tt.strictSame(apply([ev('forum_post.updated', { id: post, score: 5, comment_count: 20 }, T2)]), result({ applied: 1, changed: [scope(P)] }));
  const fields = Object.fromEntries(all(db, 'SELECT field, value FROM forum_post_fields WHERE post_id = ?', post).map((f) => [f.field, f.value]));
  tt.strictSame(fields, { comment_count: '20', intent: '"high"', relevance: '0.75', score: '40', status: '"engaged"' });
  tt.end();
});

t.test('webhook.subscribed / webhook.unsubscribed: the subscription row, last writer wins; no data version moves', (tt) => {
  const { db, apply } = fresh(tt);
  apply(world());
  const before = versions(db);
  const hook = id(1, '12121212');
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const sub = (url: string, at: string): Ev => ev('webhook.subscribed', { id: hook, account_id: W.account, url, secret, events: ['signal.detected', 'data.changed'], project_ids: [O, P] }, at);
  tt.strictSame(apply([sub('https://hooks.example.com/b', T2), sub('https://hooks.example.com/a', T1)]), result({ applied: 1, stale: 1 }), 'the newer one wins, whatever the order');
  tt.same(one(db, 'SELECT account_id, project_ids, url, secret, events, deleted FROM webhooks WHERE id = ?', hook), {
    account_id: W.account, project_ids: JSON.stringify([O, P].sort()), url: 'https://hooks.example.com/b', secret, events: '["data.changed","signal.detected"]', deleted: 0,
  });
  tt.strictSame(apply([ev('webhook.unsubscribed', { id: hook, account_id: W.account }, T3)]), result({ applied: 1 }));
  tt.same(one(db, 'SELECT account_id, url, secret, deleted FROM webhooks WHERE id = ?', hook), { account_id: W.account, url: null, secret: null, deleted: 1 },
    'the tombstone keeps no URL and no secret');
  tt.same(versions(db), before, 'no read model shows subscriptions: no data version moved');
  tt.end();
});

t.test('every event type has a test above', (tt) => {
  // The list of event types is the schema directory minus the envelope: a new type needs a new test.
  const types = fs.readdirSync(path.join(ROOT, 'schemas', 'events'))
    .filter((f) => f.endsWith('.json') && f !== 'envelope.json').map((f) => f.slice(0, -5)).sort();
  tt.strictSame(types, [
    'account.upserted', 'api_key.issued', 'api_key.revoked', 'competitor.deleted', 'competitor.upserted', 'engine.upserted',
    'forum_post.discovered', 'forum_post.updated', 'project.access_granted', 'project.access_revoked', 'project.deleted',
    'project.engine_tracked', 'project.engine_untracked', 'project.upserted', 'prompt.deleted', 'prompt.upserted',
    'prompt_run.completed', 'run_group.completed', 'run_group.started', 'segment.deleted', 'segment.upserted',
    'term.deleted', 'term.upserted', 'webhook.subscribed', 'webhook.unsubscribed',
  ]);
  tt.equal(types.length, 25);
  tt.end();
});

// ------------------------------------------------------------------ last writer wins, in any order

/** Applies `orders` (each a list of batches) to fresh databases; all must give `expectedDigest` equal and `check` pass. */
function sameInEveryOrder(tt: Test, orders: Record<string, Ev[][]>, check: (db: Db, label: string) => void): void {
  const digests: Record<string, string> = {};
  for (const [label, batches] of Object.entries(orders)) {
    const { db, apply } = fresh(tt);
    apply(world());
    for (const b of batches) {
      const r = apply(b);
      tt.equal(r.deadLettered, 0, `${label}: nothing dead-lettered`);
    }
    check(db, label);
    digests[label] = digest(db);
  }
  const [first, ...rest] = Object.keys(digests);
  for (const label of rest) tt.equal(digests[label], digests[first!], `${label} gives the digest of ${first}`);
}

t.test('competitor: older upsert late, delete before its upserts, newer upsert after the delete', (tt) => {
  const C = id(7, '99999999');
  const up1 = ev('competitor.upserted', { id: C, project_id: P, name: 'One', aliases: [] }, T1);
  const up2 = ev('competitor.upserted', { id: C, project_id: P, name: 'Two', domain: 'two.com', aliases: [] }, T2);
  const del = ev('competitor.deleted', { id: C, project_id: P }, T3);
  const up3 = ev('competitor.upserted', { id: C, project_id: P, name: 'Three', aliases: ['3'] }, T4);
  sameInEveryOrder(tt, {
    chronological: [[up1, up2, del, up3]],
    reversed: [[up3, del, up2, up1]],
    'delete first, one per batch': [[del], [up3], [up1], [up2]],
    'newer upsert after the delete': [[up2], [del], [up1], [up3]],
  }, (db, label) => {
    tt.strictSame(one(db, 'SELECT name, domain, aliases, created_at, updated_at, deleted FROM competitors WHERE id = ?', C),
      { name: 'Three', domain: null, aliases: '["3"]', created_at: T1, updated_at: T4, deleted: 0 }, label);
  });
  tt.end();
});

t.test('segment: a delete arriving before its (older) upsert gives the same row as in order', (tt) => {
  const S = id(9, 'dddddddd');
  const up = ev('segment.upserted', { id: S, project_id: P, name: 'Gone soon', active: true }, T1);
  const del = ev('segment.deleted', { id: S, project_id: P }, T2);
  const rows: Record<string, Row | undefined> = {};
  sameInEveryOrder(tt, {
    'in order': [[up], [del]],
    'delete first': [[del], [up]],
    'delete first, same batch': [[del, up]],
  }, (db, label) => {
    const row = one(db, 'SELECT id, project_id, name, description, active, created_at, updated_at, deleted FROM segments WHERE id = ?', S);
    tt.equal(row?.deleted, 1, `${label}: deleted`);
    tt.equal(row?.created_at, T1, `${label}: created_at is the upsert's occurred_at`);
    rows[label] = row;
  });
  tt.strictSame(rows['delete first'], rows['in order'], 'the whole row is the same whatever the order');
  tt.end();
});

t.test('prompt: an older upsert arriving late does not undo the newer one, nor its segments', (tt) => {
  const v1 = ev('prompt.upserted', { id: W.prompt2, project_id: P, text: 'v1', segment_ids: [W.segment], active: true }, T1);
  const v2 = ev('prompt.upserted', { id: W.prompt2, project_id: P, text: 'v2', segment_ids: [], active: false }, T2);
  sameInEveryOrder(tt, { 'in order': [[v1], [v2]], 'newer first': [[v2], [v1]], 'newer first, same batch': [[v2, v1]] }, (db, label) => {
    // world() upserted prompt 2 at T0: created_at stays T0.
    tt.strictSame(one(db, 'SELECT text, segment_ids, active, created_at, updated_at, deleted FROM prompts WHERE id = ?', W.prompt2),
      { text: 'v2', segment_ids: '[]', active: 0, created_at: T0, updated_at: T2, deleted: 0 }, label);
    tt.strictSame(all(db, 'SELECT segment_id FROM prompt_segments WHERE prompt_id = ?', W.prompt2), [], `${label}: no segments`);
  });
  tt.end();
});

t.test('ties on occurred_at are resolved by event_id (the greater wins)', (tt) => {
  const term = id(5, '33333333');
  const low = ev('term.upserted', { id: term, project_id: P, value: 'Low', kind: 'brand' }, T1, eid(0xa1));
  const high = ev('term.upserted', { id: term, project_id: P, value: 'High', kind: 'domain' }, T1, eid(0xb2));
  const grant = ev('project.access_granted', { project_id: P, account_id: W.otherAccount }, T1, eid(0xb3));
  const revoke = ev('project.access_revoked', { project_id: P, account_id: W.otherAccount }, T1, eid(0xa4));
  sameInEveryOrder(tt, { ab: [[low, revoke], [high, grant]], ba: [[high, grant], [low, revoke]] }, (db, label) => {
    tt.strictSame(one(db, 'SELECT value, kind FROM terms WHERE id = ?', term), { value: 'High', kind: 'domain' }, label);
    tt.equal(one(db, 'SELECT granted FROM project_access')!.granted, 1, `${label}: the grant has the greater event id`);
  });
  tt.end();
});

t.test('pairs, runs and forum fields: last writer wins in any order', (tt) => {
  const tracked = ev('project.engine_tracked', { project_id: O, engine_id: W.engineA, at: T1 }, T1);
  const untracked = ev('project.engine_untracked', { project_id: O, engine_id: W.engineA, at: T2 }, T2);
  const runV1 = ev('prompt_run.completed', {
    id: R.r1, run_group_id: W.group, project_id: P, prompt_id: W.prompt1, engine_id: W.engineA, status: 'succeeded',
    completed_at: '2026-01-05T12:00:00Z', mentions: [brandM(3)], citations: [],
  }, T1);
  const runV2 = ev('prompt_run.completed', { ...runV1.data, mentions: [brandM(1)] }, T2);
  const post = id(1, '12121212');
  const disc = ev('forum_post.discovered', {
    id: post, project_id: P, platform: 'quora', url: 'https://quora.com/q/1', title: 'Anvils?', discovered_at: T1,
    relevance: 0.5, intent: 'low', matched_terms: [], score: 3,
  }, T1);
  const upd = ev('forum_post.updated', { id: post, status: 'engaged', score: 10 }, T2);
  sameInEveryOrder(tt, {
    'in order': [[tracked, runV1, disc], [untracked, runV2, upd]],
    'newest first': [[untracked, runV2, upd], [tracked, runV1, disc]],
    'one batch, newest first': [[upd, runV2, untracked, disc, runV1, tracked]],
  }, (db, label) => {
    tt.strictSame(one(db, 'SELECT tracked, since FROM project_engines WHERE project_id = ?', O), { tracked: 0, since: T2 }, label);
    tt.equal(one(db, 'SELECT brand_position FROM prompt_runs WHERE id = ?', R.r1)!.brand_position, 1, `${label}: run v2 wins`);
    tt.strictSame(one(db, 'SELECT runs, brand_runs, position_sum FROM agg_engine_day'), { runs: 1, brand_runs: 1, position_sum: 1 }, `${label}: aggregate of v2`);
    const fields = Object.fromEntries(all(db, 'SELECT field, value FROM forum_post_fields').map((f) => [f.field, f.value]));
    tt.strictSame(fields, { intent: '"low"', relevance: '0.5', score: '10', status: '"engaged"' }, label);
  });
  tt.end();
});

t.test('created_at is the earliest occurred_at seen (terms, segments, prompts, competitors)', (tt) => {
  const { db, apply } = fresh(tt);
  const ids = { term: id(8, '33333333'), segment: id(8, 'dddddddd'), prompt: id(8, 'ffffffff'), competitor: id(8, '99999999') };
  const newer = [
    ev('term.upserted', { id: ids.term, project_id: P, value: 'new', kind: 'brand' }, T3),
    ev('segment.upserted', { id: ids.segment, project_id: P, name: 'new', active: true }, T3),
    ev('prompt.upserted', { id: ids.prompt, project_id: P, text: 'new', segment_ids: [], active: true }, T3),
    ev('competitor.upserted', { id: ids.competitor, project_id: P, name: 'new', aliases: [] }, T3),
  ];
  const older = [
    ev('term.upserted', { id: ids.term, project_id: P, value: 'old', kind: 'brand' }, T1),
    ev('segment.upserted', { id: ids.segment, project_id: P, name: 'old', active: true }, T1),
    ev('prompt.upserted', { id: ids.prompt, project_id: P, text: 'old', segment_ids: [], active: true }, T1),
    ev('competitor.upserted', { id: ids.competitor, project_id: P, name: 'old', aliases: [] }, T1),
  ];
  const between = ev('segment.upserted', { id: ids.segment, project_id: P, name: 'between', active: true }, T2);
  apply(newer);
  apply(older);
  apply([between]);
  tt.strictSame(one(db, 'SELECT value, created_at FROM terms WHERE id = ?', ids.term), { value: 'new', created_at: T1 });
  for (const [table, col] of [['segments', 'name'], ['prompts', 'text'], ['competitors', 'name']] as const) {
    const key = table === 'segments' ? ids.segment : table === 'prompts' ? ids.prompt : ids.competitor;
    tt.strictSame(one(db, `SELECT ${col} AS v, created_at, updated_at FROM ${table} WHERE id = ?`, key),
      { v: 'new', created_at: T1, updated_at: T3 }, table);
  }
  tt.end();
});

// ------------------------------------------------------------------ redelivery and retries

function runsForRedelivery(): Ev[] {
  return [
    run({ n: 1, brand: 2, sentiment: 0.5, competitor: 1, citations: ['https://a.com/1'] }),
    run({ n: 2, engine: W.engineB, brand: 1 }),
    run({ n: 3, status: 'failed' }),
  ];
}

t.test('an exact redelivery changes nothing', (tt) => {
  const { db, apply } = fresh(tt);
  const events = [...world(), ...runsForRedelivery()];
  tt.equal(apply(events).applied, events.length);
  const before = { digest: digest(db), versions: all(db, 'SELECT * FROM data_versions ORDER BY scope') };
  tt.strictSame(apply(events), result({ duplicate: events.length }), 'every event is a duplicate, no scope changed');
  tt.strictSame(apply(events.slice(3, 7), 'other-source'), result({ duplicate: 4 }), 'also from another source');
  tt.equal(digest(db), before.digest);
  tt.strictSame(all(db, 'SELECT * FROM data_versions ORDER BY scope'), before.versions, 'data_versions unchanged (version and updated_at)');
  tt.end();
});

t.test('a retry of the same fact under a new event id changes nothing and counts as a duplicate', (tt) => {
  const { db, apply } = fresh(tt);
  const r = run({ n: 1, brand: 2, competitor: 1, citations: ['https://a.com/1'] });
  const comp = ev('competitor.upserted', { id: id(5, '99999999'), project_id: P, name: 'Road Runner', aliases: ['RR'] }, T1, eid(0x50));
  apply([...world(), r, comp]);
  const before = { digest: digest(db), versions: versions(db) };
  const retries: Array<[string, Ev]> = [
    ['run, greater event id', { ...r, event_id: id(1, 'ffffffff') }],
    ['run, smaller event id', { ...r, event_id: id(1, '00000001') }],
    ['competitor, greater event id', { ...comp, event_id: eid(0x90) }],
    ['competitor, smaller event id', { ...comp, event_id: eid(0x10) }],
  ];
  for (const [label, retry] of retries) {
    tt.strictSame(apply([retry]), result({ duplicate: 1 }), label);
    tt.equal(digest(db), before.digest, `${label}: same digest`);
    tt.strictSame(versions(db), before.versions, `${label}: no data_version bump`);
  }
  tt.end();
});

// ------------------------------------------------------------------ data_version scopes

t.test('data_version bumps exactly the scopes whose data changed, once per batch', (tt) => {
  const { db, apply } = fresh(tt);
  apply(world());
  tt.strictSame(versions(db), { catalog: 1, keys: 1, engines: 1, [scope(P)]: 1, [scope(O)]: 1 });

  tt.strictSame(apply([ev('term.upserted', { id: id(9, '33333333'), project_id: P, value: 'Acme Pro', kind: 'brand' }, T1)]).changed, [scope(P)]);
  tt.strictSame(versions(db), { catalog: 1, keys: 1, engines: 1, [scope(P)]: 2, [scope(O)]: 1 }, 'a term of P: only P');

  tt.strictSame(apply([ev('project.upserted', {
    id: O, company_id: W.otherAccount, name: 'Renamed', status: 'active', created_at: T0, updated_at: T1,
  }, T1)]).changed, ['catalog', scope(O)]);
  tt.strictSame(versions(db), { catalog: 2, keys: 1, engines: 1, [scope(P)]: 2, [scope(O)]: 2 }, 'a project change: catalog and that project');

  tt.strictSame(apply([ev('project.access_granted', { project_id: P, account_id: W.otherAccount }, T1)]).changed, ['catalog']);
  tt.strictSame(versions(db), { catalog: 3, keys: 1, engines: 1, [scope(P)]: 2, [scope(O)]: 2 }, 'access: catalog');

  tt.strictSame(apply([ev('api_key.revoked', { key_id: id(1, '11111111'), revoked_at: T1 }, T1)]).changed, ['keys']);
  tt.strictSame(versions(db), { catalog: 3, keys: 2, engines: 1, [scope(P)]: 2, [scope(O)]: 2 }, 'a key: keys');

  // Engines are shared by all projects: an engine change bumps the engines scope, which every
  // project's cache key includes, and no project counter.
  tt.strictSame(apply([ev('engine.upserted', { id: W.engineA, name: 'ChatGPT 5', provider: 'openai' }, T1)]).changed, ['engines']);
  tt.strictSame(versions(db), { catalog: 3, keys: 2, engines: 2, [scope(P)]: 2, [scope(O)]: 2 }, 'an engine: the engines scope');

  // Three changes to P in one batch: one bump.
  const batch = apply([
    ev('segment.upserted', { id: id(5, 'dddddddd'), project_id: P, name: 'New', active: true }, T2),
    ev('competitor.upserted', { id: id(5, '99999999'), project_id: P, name: 'New', aliases: [] }, T2),
    run({ n: 7, brand: 1 }),
  ]);
  tt.strictSame(batch, result({ applied: 3, changed: [scope(P)] }));
  tt.strictSame(versions(db), { catalog: 3, keys: 2, engines: 2, [scope(P)]: 3, [scope(O)]: 2 }, 'one bump per batch');
  // Each kind of change of a project has its own counter, bumped once per batch with the project's.
  tt.strictSame(kindVersions(db, P), { project: 1, runs: 2, setup: 3 }, 'P: its row once (world), its runs (world, the batch), its setup (world, the term, the batch)');
  tt.strictSame(kindVersions(db, O), { project: 2 }, 'O: its row twice');

  // A batch of duplicates and stale events bumps nothing.
  tt.strictSame(apply([ev('account.upserted', { account_id: W.account, name: 'Older' }, '2025-12-31T00:00:00Z'), run({ n: 7, brand: 1 })]).changed, []);
  tt.strictSame(versions(db), { catalog: 3, keys: 2, engines: 2, [scope(P)]: 3, [scope(O)]: 2 });
  tt.end();
});

t.test('a run that moves to another day, prompt or project leaves what it left counted again', (tt) => {
  const { db, apply, projector } = fresh(tt);
  apply(world());
  const first = run({ n: 1, brand: 2, sentiment: 0.5, competitor: 3, citations: ['https://a.com/1'] });
  const stays = run({ n: 2, brand: 4 });
  apply([first, stays]);
  tt.strictSame(one(db, 'SELECT runs, brand_runs, position_sum, prompt_ids FROM agg_engine_day'), { runs: 2, brand_runs: 2, position_sum: 6, prompt_ids: W.prompt1 });

  // Run 1, newer (run() events occur at 2026-01-05T12:00:01Z): prompt 2 instead of prompt 1. The day keeps both prompts.
  const movedPrompt = ev('prompt_run.completed', { ...first.data, prompt_id: W.prompt2 }, '2026-01-06T00:00:00Z');
  tt.strictSame(apply([movedPrompt]), result({ applied: 1, changed: [scope(P)] }));
  tt.strictSame(one(db, 'SELECT runs, brand_runs, position_sum, prompt_ids FROM agg_engine_day'), { runs: 2, brand_runs: 2, position_sum: 6, prompt_ids: [W.prompt1, W.prompt2].sort().join(',') });
  projector.settle();
  tt.strictSame(all(db, 'SELECT prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n FROM agg_prompt_week ORDER BY prompt_id'), [
    { prompt_id: W.prompt1, runs: 1, brand_runs: 1, position_sum: 4, rr_fixed: RR_SCALE / 4, sentiment_fixed: 0, sentiment_n: 0 },
    { prompt_id: W.prompt2, runs: 1, brand_runs: 1, position_sum: 2, rr_fixed: RR_SCALE / 2, sentiment_fixed: 0.5 * SENTIMENT_SCALE, sentiment_n: 1 },
  ]);
  tt.strictSame(all(db, 'SELECT prompt_id, competitor_id, runs FROM agg_competitor_week'), [{ prompt_id: W.prompt2, competitor_id: W.competitor, runs: 1 }]);
  tt.strictSame(all(db, 'SELECT prompt_ids, url, runs FROM agg_cited_week'), [{ prompt_ids: W.prompt2, url: 'https://a.com/1', runs: 1 }]);

  // Newer again: another project, engine and day. What run 1 left is counted again from the runs that stay.
  const movedProject = ev('prompt_run.completed', {
    ...first.data, prompt_id: W.prompt2, project_id: O, engine_id: W.engineB, completed_at: '2026-01-07T12:00:00Z', run_group_id: id(2, '77777777'),
  }, '2026-01-07T12:00:01Z');
  tt.strictSame(apply([movedProject]), result({ applied: 1, changed: [scope(P), scope(O)].sort() }), 'both projects change');
  // In O the run does not count (prompt 2 is P's): O's engine-day and cited rows leave it out, the roll-ups by prompt keep it.
  tt.strictSame(all(db, 'SELECT project_id, day, engine_id, runs, prompt_ids FROM agg_engine_day ORDER BY project_id'), [
    { project_id: P, day: '2026-01-05', engine_id: W.engineA, runs: 1, prompt_ids: W.prompt1 },
  ]);
  projector.settle();
  tt.strictSame(all(db, 'SELECT project_id, day, engine_id, prompt_id, runs FROM agg_prompt_week ORDER BY project_id'), [
    { project_id: P, day: '2026-01-05', engine_id: W.engineA, prompt_id: W.prompt1, runs: 1 },
    { project_id: O, day: '2026-01-05', engine_id: W.engineB, prompt_id: W.prompt2, runs: 1 },
  ]);
  tt.strictSame(all(db, 'SELECT project_id, day FROM agg_competitor_week'), [{ project_id: O, day: '2026-01-05' }]);
  tt.strictSame(all(db, 'SELECT project_id, day FROM agg_cited_week'), []);
  tt.strictSame(one(db, 'SELECT project_id, engine_id, day, completed_at FROM prompt_runs WHERE id = ?', first.data.id),
    { project_id: O, engine_id: W.engineB, day: '2026-01-07', completed_at: '2026-01-07T12:00:00.000Z' }, 'the run row moved');
  tt.strictSame(all(db, 'SELECT * FROM agg_run_group ORDER BY run_group_id'), [
    { run_group_id: W.group, project_id: P, prompt_run_count: 1, succeeded_count: 1, failed_count: 0 },
    { run_group_id: id(2, '77777777'), project_id: O, prompt_run_count: 1, succeeded_count: 1, failed_count: 0 },
  ], 'both run groups recomputed');
  tt.end();
});

// ------------------------------------------------------------------ orphans and positions

t.test('a fact whose parents have not arrived is kept', (tt) => {
  const { db, apply } = fresh(tt);
  const orphanRun = run({ n: 1, brand: 1, sentiment: 1 });
  const orphanUpdate = ev('forum_post.updated', { id: id(3, '12121212'), status: 'dismissed' }, T1);
  tt.strictSame(apply([orphanRun, orphanUpdate]), result({ applied: 2, changed: [scope(P)] }), 'the batch succeeds, nothing dead-lettered');
  tt.strictSame(one(db, 'SELECT id, brand_position FROM prompt_runs'), { id: orphanRun.data.id, brand_position: 1 });
  tt.equal(count(db, 'agg_engine_day'), 0, 'the run does not count while its prompt and engine are unknown');
  tt.strictSame(one(db, 'SELECT field, value FROM forum_post_fields'), { field: 'status', value: '"dismissed"' });
  tt.equal(count(db, 'dead_letters'), 0);
  // The parents arrive: the run is still there, unchanged.
  apply(world());
  tt.strictSame(one(db, 'SELECT id, project_id, brand_position FROM prompt_runs'), { id: orphanRun.data.id, project_id: P, brand_position: 1 });
  tt.strictSame(one(db, 'SELECT runs, brand_runs FROM agg_engine_day'), { runs: 1, brand_runs: 1 }, 'and counts, counted again from its stored row');
  tt.end();
});

t.test('source_positions stores the next position per source with the batch', (tt) => {
  const { db, projector } = fresh(tt);
  const [a, b, c] = world();
  const r = projector.applyBatch([
    { raw: JSON.stringify(a), source: 'file:/x.ndjson', position: 5 },
    { raw: 'not json', source: 'file:/x.ndjson', position: 6 },
    { raw: JSON.stringify(b), source: 'file:/x.ndjson', position: 7 },
    { raw: JSON.stringify(c), source: 'kafka:events:0', position: 41 },
  ]);
  tt.equal(r.deadLettered, 1);
  tt.strictSame(all(db, 'SELECT source, position FROM source_positions ORDER BY source'), [
    { source: 'file:/x.ndjson', position: 8 },
    { source: 'kafka:events:0', position: 42 },
  ]);
  // A batch of only bad lines still moves its source on; an earlier position never moves it back.
  projector.applyBatch([{ raw: '{', source: 'kafka:events:0', position: 42 }, { raw: JSON.stringify(a), source: 'file:/x.ndjson', position: 2 }]);
  tt.strictSame(all(db, 'SELECT source, position FROM source_positions ORDER BY source'), [
    { source: 'file:/x.ndjson', position: 8 },
    { source: 'kafka:events:0', position: 43 },
  ]);
  tt.end();
});
