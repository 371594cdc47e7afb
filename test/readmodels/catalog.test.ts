// Catalog and run endpoints (rows 1, 2, 6, 7, 9, 15, 16, 17, 18, 19): bodies on the tiny world,
// written out by hand, plus the last-writer-wins cases that decide what each list shows.
import t, { type Test } from 'tap';
import { apiAjv, checkedBody } from '../helpers/readmodels';
import type { ReadArgs } from '../../src/readmodels/args';
import type { Endpoint } from '../../src/readmodels/endpoint';
import { ReadStore } from '../../src/readmodels/store';
import { endpoint as projects } from '../../src/readmodels/endpoints/projects';
import { endpoint as project } from '../../src/readmodels/endpoints/project';
import { endpoint as prompts } from '../../src/readmodels/endpoints/prompts';
import { endpoint as segments } from '../../src/readmodels/endpoints/segments';
import { endpoint as competitors } from '../../src/readmodels/endpoints/competitors';
import { endpoint as engines } from '../../src/readmodels/endpoints/engines';
import { endpoint as terms } from '../../src/readmodels/endpoints/terms';
import { endpoint as runs } from '../../src/readmodels/endpoints/runs';
import { endpoint as runGroup } from '../../src/readmodels/endpoints/run-group';
import { endpoint as runResults } from '../../src/readmodels/endpoints/run-results';
import { asSource, ev, id, run, uniqueSuffix, W, world, type Ev } from '../helpers/events';
import { tmpDb } from '../helpers/db';
import { readArgs } from '../helpers/readmodels';


const T0 = '2026-01-01T00:00:00.000Z'; // occurred_at of every world() event
const DAY2 = '2026-01-02T00:00:00.000Z';
const DAY3 = '2026-01-03T00:00:00.000Z';

/** A store over world() plus `extra`; `apply` adds later batches. */
function setup(extra: Ev[] = []) {
  const { db, projector } = tmpDb();
  const apply = (events: Ev[]) => projector.applyBatch(asSource(events, `test-${uniqueSuffix()}`));
  apply([...world(), ...extra]);
  return { store: new ReadStore(db), apply };
}

const args = readArgs;

function body<T>(tt: Test, e: Endpoint, store: ReadStore, over: Partial<ReadArgs> = {}): T {
  return checkedBody<T>(tt, e, store, args(over));
}

type Row = Record<string, unknown>;
const ids = (rows: Row[]): unknown[] => rows.map((r) => r.id);

const acmeProject = {
  id: W.project, company_id: W.account, name: 'Acme Project', domain: 'acme.com', description: null,
  category_summary: null, status: 'active', created_at: T0, updated_at: T0,
};
const upsertProject = (at: string, name = 'Acme Project') =>
  ev('project.upserted', { ...acmeProject, name, created_at: '2026-01-01T00:00:00Z', updated_at: at }, at);

t.test('projects: owned and shared, by name then id; deleted and revoked ones vanish', (tt) => {
  // Same name as Acme Project but a smaller id: the tie is broken by id, so it comes first.
  const twin = id(1, '00000000');
  const { store, apply } = setup([
    ev('project.upserted', { id: twin, company_id: W.account, name: 'Acme Project', status: 'paused', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' }),
  ]);
  const first = body<Row[]>(tt, projects, store);
  tt.same(ids(first), [twin, W.project]);
  tt.strictSame(first[1], acmeProject, 'every Project field, nulls included');
  tt.same(ids(body<Row[]>(tt, projects, store, { accountId: W.otherAccount })), [W.otherProject]);

  apply([ev('project.access_granted', { project_id: W.otherProject, account_id: W.account }, DAY2)]);
  // 'Acme Project' < 'Other Project': the shared project sorts in by name with the owned ones.
  tt.same(ids(body<Row[]>(tt, projects, store)), [twin, W.project, W.otherProject]);
  apply([ev('project.access_revoked', { project_id: W.otherProject, account_id: W.account }, DAY3)]);
  tt.same(ids(body<Row[]>(tt, projects, store)), [twin, W.project]);

  apply([ev('project.deleted', { id: twin }, DAY2)]);
  tt.same(ids(body<Row[]>(tt, projects, store)), [W.project]);
  tt.end();
});

t.test('project: one project; deleted, not resurrected by an older upsert, back on a newer one', (tt) => {
  const { store, apply } = setup();
  tt.strictSame(body(tt, project, store), acmeProject);
  apply([ev('project.deleted', { id: W.project }, DAY2), upsertProject('2026-01-01T12:00:00.000Z', 'Stale')]);
  tt.same(body<Row[]>(tt, projects, store), [], 'the deleted project left the list');
  tt.throws(() => project.build(store, args()), /not visible/);
  apply([upsertProject(DAY3, 'Acme Renamed')]);
  tt.strictSame(body(tt, project, store), { ...acmeProject, name: 'Acme Renamed', updated_at: DAY3 });
  tt.end();
});

t.test('prompts: by text then id, segment_ids parsed, active boolean, delete and resurrect', (tt) => {
  const { store, apply } = setup([
    ev('prompt.upserted', { id: id(3, 'ffffffff'), project_id: W.project, text: 'anvil reviews', segment_ids: [], active: false }),
  ]);
  tt.strictSame(body(tt, prompts, store), [
    { id: id(3, 'ffffffff'), project_id: W.project, text: 'anvil reviews', segment_ids: [], active: false, created_at: T0, updated_at: T0 },
    { id: W.prompt1, project_id: W.project, text: 'best anvil', segment_ids: [W.segment], active: true, created_at: T0, updated_at: T0 },
    { id: W.prompt2, project_id: W.project, text: 'cheap anvil', segment_ids: [], active: true, created_at: T0, updated_at: T0 },
  ]);
  apply([ev('prompt.deleted', { id: W.prompt1, project_id: W.project }, DAY2)]);
  apply([ev('prompt.upserted', { id: W.prompt1, project_id: W.project, text: 'stale', segment_ids: [], active: true }, '2026-01-01T12:00:00.000Z')]);
  tt.same(ids(body<Row[]>(tt, prompts, store)), [id(3, 'ffffffff'), W.prompt2], 'older upsert after the delete does not resurrect');
  apply([ev('prompt.upserted', { id: W.prompt1, project_id: W.project, text: 'best anvil 2026', segment_ids: [W.segment], active: true }, DAY3)]);
  const back = body<Row[]>(tt, prompts, store)[1]!;
  // created_at stays the earliest upsert seen (T0); updated_at is the winning upsert.
  tt.strictSame(back, { id: W.prompt1, project_id: W.project, text: 'best anvil 2026', segment_ids: [W.segment], active: true, created_at: T0, updated_at: DAY3 });
  tt.end();
});

t.test('segments: active only, by name then id, prompt_count over non-deleted prompts', (tt) => {
  const analysts = id(2, 'dddddddd');
  const dormant = id(3, 'dddddddd');
  const { store, apply } = setup([
    ev('segment.upserted', { id: analysts, project_id: W.project, name: 'Analysts', description: 'people who compare', active: true }),
    ev('segment.upserted', { id: dormant, project_id: W.project, name: 'Dormant', active: false }),
    // prompt2 now lists both segments: Buyers has prompt1 and prompt2, Analysts has prompt2.
    ev('prompt.upserted', { id: W.prompt2, project_id: W.project, text: 'cheap anvil', segment_ids: [W.segment, analysts], active: true }, '2026-01-01T06:00:00.000Z'),
  ]);
  tt.strictSame(body(tt, segments, store), [
    { id: analysts, project_id: W.project, name: 'Analysts', description: 'people who compare', prompt_count: 1, created_at: T0, updated_at: T0 },
    { id: W.segment, project_id: W.project, name: 'Buyers', description: null, prompt_count: 2, created_at: T0, updated_at: T0 },
  ], 'Dormant (active false) is left out');
  apply([ev('prompt.deleted', { id: W.prompt1, project_id: W.project }, DAY2)]);
  tt.same(body<Row[]>(tt, segments, store).map((s) => s.prompt_count), [1, 1], 'a deleted prompt no longer counts');
  apply([ev('segment.deleted', { id: analysts, project_id: W.project }, DAY2)]);
  apply([ev('segment.upserted', { id: analysts, project_id: W.project, name: 'Analysts', active: true }, '2026-01-01T12:00:00.000Z')]);
  tt.same(ids(body<Row[]>(tt, segments, store)), [W.segment], 'deleted, and an older upsert does not resurrect');
  apply([ev('segment.upserted', { id: analysts, project_id: W.project, name: 'Analysts', active: true }, DAY3)]);
  tt.same(ids(body<Row[]>(tt, segments, store)), [analysts, W.segment], 'a newer upsert brings it back');
  tt.end();
});

t.test('competitors: by name then id, aliases parsed, delete and resurrect', (tt) => {
  const rival = id(2, '99999999');
  const { store, apply } = setup([ev('competitor.upserted', { id: rival, project_id: W.project, name: 'Road Runner', aliases: [] })]);
  tt.strictSame(body(tt, competitors, store), [
    { id: rival, project_id: W.project, name: 'Road Runner', domain: null, aliases: [], created_at: T0, updated_at: T0 },
    { id: W.competitor, project_id: W.project, name: 'Wile', domain: 'wile.com', aliases: ['Wile E.'], created_at: T0, updated_at: T0 },
  ]);
  apply([ev('competitor.deleted', { id: W.competitor, project_id: W.project }, DAY2)]);
  apply([ev('competitor.upserted', { id: W.competitor, project_id: W.project, name: 'Wile', aliases: [] }, '2026-01-01T12:00:00.000Z')]);
  tt.same(ids(body<Row[]>(tt, competitors, store)), [rival]);
  apply([ev('competitor.upserted', { id: W.competitor, project_id: W.project, name: 'Coyote', aliases: ['Wile', 'W.E.C.'] }, DAY3)]);
  const list = body<Row[]>(tt, competitors, store);
  tt.same(ids(list), [W.competitor, rival], 'renamed Coyote sorts before Road Runner');
  tt.same(list[0]!.aliases, ['Wile', 'W.E.C.'], 'aliases keep their event order');
  tt.end();
});

t.test('engines: tracked now, by name then id, tracked_since from the winning tracked event', (tt) => {
  const claude = id(3, 'cccccccc');
  const { store, apply } = setup([
    // Tracked before the engine itself is known: hidden until engine.upserted arrives.
    ev('project.engine_tracked', { project_id: W.project, engine_id: claude, at: '2026-01-02T00:00:00Z' }),
  ]);
  tt.strictSame(body(tt, engines, store), [
    { id: W.engineA, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o', tracked_since: T0 },
    { id: W.engineB, name: 'Perplexity', provider: 'perplexity', model: null, tracked_since: T0 },
  ]);
  apply([ev('engine.upserted', { id: claude, name: 'Claude', provider: 'anthropic' })]);
  tt.same(ids(body<Row[]>(tt, engines, store)), [W.engineA, claude, W.engineB]);
  apply([ev('project.engine_untracked', { project_id: W.project, engine_id: W.engineB, at: '2026-01-02T00:00:00Z' }, DAY2)]);
  tt.same(ids(body<Row[]>(tt, engines, store)), [W.engineA, claude]);
  apply([ev('project.engine_tracked', { project_id: W.project, engine_id: W.engineB, at: '2026-01-03T00:00:00Z' }, DAY3)]);
  apply([ev('project.engine_untracked', { project_id: W.project, engine_id: W.engineB, at: '2026-01-02T12:00:00Z' }, '2026-01-02T12:00:00.000Z')]);
  const list = body<Row[]>(tt, engines, store);
  tt.same(ids(list), [W.engineA, claude, W.engineB], 'a late, older untrack does not win');
  tt.equal(list[2]!.tracked_since, DAY3, 'tracked again: since the newer start');
  tt.end();
});

t.test('terms: by value then id, delete and resurrect', (tt) => {
  const term1 = id(1, '33333333');
  const domainTerm = id(2, '33333333');
  const { store, apply } = setup([ev('term.upserted', { id: domainTerm, project_id: W.project, value: 'acme.com', kind: 'domain' }, DAY2)]);
  // Binary order: 'Acme' < 'acme.com' (upper case sorts first).
  tt.strictSame(body(tt, terms, store), [
    { id: term1, project_id: W.project, value: 'Acme', kind: 'brand', created_at: T0 },
    { id: domainTerm, project_id: W.project, value: 'acme.com', kind: 'domain', created_at: DAY2 },
  ]);
  apply([ev('term.deleted', { id: term1, project_id: W.project }, DAY2)]);
  apply([ev('term.upserted', { id: term1, project_id: W.project, value: 'Acme', kind: 'brand' }, '2026-01-01T12:00:00.000Z')]);
  tt.same(ids(body<Row[]>(tt, terms, store)), [domainTerm]);
  apply([ev('term.upserted', { id: term1, project_id: W.project, value: 'Acme Inc', kind: 'brand' }, DAY3)]);
  tt.same(body<Row[]>(tt, terms, store).map((r) => r.value), ['Acme Inc', 'acme.com']);
  tt.end();
});

const group2 = id(2, '77777777');
const groupSummary = {
  id: W.group, project_id: W.project, status: 'running', trigger: null, started_at: '2026-01-05T00:00:00.000Z',
  completed_at: null, prompt_run_count: 0, succeeded_count: 0, failed_count: 0,
};

t.test('runs: started groups newest first; running until completed; succeeded and failed counts', (tt) => {
  const { store, apply } = setup([
    // Completed but never started: not listed. Another project's group: not listed either.
    ev('run_group.completed', { id: id(9, '77777777'), completed_at: '2026-01-06T00:00:00Z', status: 'completed' }),
    ev('run_group.started', { id: id(8, '77777777'), project_id: W.otherProject, started_at: '2026-01-07T00:00:00Z' }),
  ]);
  tt.strictSame(body(tt, runs, store), [groupSummary], 'no prompt runs yet: counts are 0');

  apply([run({ n: 1, brand: 1 }), run({ n: 2, status: 'failed' }), run({ n: 3, prompt: W.prompt2, engine: W.engineB })]);
  apply([ev('run_group.started', { id: group2, project_id: W.project, trigger: 'schedule', started_at: '2026-01-06T00:00:00Z' }, DAY2)]);
  const running = body<Row[]>(tt, runs, store);
  tt.same(ids(running), [group2, W.group], 'newest started_at first');
  tt.strictSame(running[1], { ...groupSummary, prompt_run_count: 3, succeeded_count: 2, failed_count: 1 });
  tt.same(running[0]!.trigger, 'schedule');

  apply([ev('run_group.completed', { id: W.group, completed_at: '2026-01-05T13:00:00Z', status: 'partial' }, '2026-01-05T13:00:00.000Z')]);
  tt.strictSame(body<Row[]>(tt, runs, store)[1], {
    ...groupSummary, status: 'partial', completed_at: '2026-01-05T13:00:00.000Z', prompt_run_count: 3, succeeded_count: 2, failed_count: 1,
  });
  apply([ev('run_group.completed', { id: group2, completed_at: '2026-01-06T01:00:00Z', status: 'completed' }, DAY3)]);
  tt.same(body<Row[]>(tt, runs, store).map((g) => g.status), ['completed', 'partial']);
  tt.end();
});

t.test('run-group: the group plus its prompt runs by completed_at then id', (tt) => {
  const { store } = setup([
    run({ n: 3, day: '2026-01-06', brand: 2, competitor: 1, citations: ['https://a.example/x'] }),
    run({ n: 2, day: '2026-01-05', status: 'failed' }),
    run({ n: 1, day: '2026-01-06', prompt: W.prompt2, engine: W.engineB, competitor: 3 }),
  ]);
  const g = body<Row>(tt, runGroup, store);
  tt.strictSame(g, {
    ...groupSummary, prompt_run_count: 3, succeeded_count: 2, failed_count: 1,
    prompt_runs: [
      // run 2 completed a day earlier; runs 1 and 3 share completed_at, so id order decides.
      { id: id(2, '55555555'), prompt_id: W.prompt1, engine_id: W.engineA, status: 'failed', completed_at: '2026-01-05T12:00:00.000Z', brand_mentioned: false, brand_position: null, mention_count: 0, citation_count: 0 },
      { id: id(1, '55555555'), prompt_id: W.prompt2, engine_id: W.engineB, status: 'succeeded', completed_at: '2026-01-06T12:00:00.000Z', brand_mentioned: false, brand_position: null, mention_count: 1, citation_count: 0 },
      { id: id(3, '55555555'), prompt_id: W.prompt1, engine_id: W.engineA, status: 'succeeded', completed_at: '2026-01-06T12:00:00.000Z', brand_mentioned: true, brand_position: 2, mention_count: 2, citation_count: 1 },
    ],
  });
  tt.throws(() => runGroup.build(store, args({ runGroupId: group2 })), /not visible/, 'a group never started is not shown');
  tt.end();
});

t.test('run-results: one item per prompt run with mentions and citations in analyser order', (tt) => {
  const unknownPrompt = id(99, 'ffffffff');
  const { store } = setup([
    ev('prompt_run.completed', {
      id: id(10, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: W.prompt2, engine_id: W.engineB,
      status: 'succeeded', completed_at: '2026-01-05T09:00:00Z', response_excerpt: 'Wile leads; Acme Corp is solid.',
      mentions: [
        { entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 1, snippet: 'Wile leads' },
        { entity_type: 'brand', name: 'Acme', position: 3, sentiment: -0.2 },
        { entity_type: 'brand', name: 'Acme Corp', position: 2, sentiment: 0.6, snippet: 'Acme Corp is solid' },
      ],
      citations: [{ url: 'https://www.reddit.com/r/anvils', title: 'Anvils', position: 1 }, { url: 'https://acme.com/' }],
    }, '2026-01-05T09:00:01.000Z'),
    run({ n: 11, prompt: unknownPrompt, status: 'failed' }),
  ]);
  tt.strictSame(body(tt, runResults, store), [
    {
      prompt_run_id: id(10, '55555555'), prompt_id: W.prompt2, prompt_text: 'cheap anvil', engine_id: W.engineB,
      status: 'succeeded', completed_at: '2026-01-05T09:00:00.000Z', response_excerpt: 'Wile leads; Acme Corp is solid.',
      // The brand counts at its best position (2, 'Acme Corp') with that mention's sentiment (0.6).
      brand_mentioned: true, brand_position: 2, sentiment: 0.6,
      mentions: [
        { entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 1, sentiment: null, snippet: 'Wile leads' },
        { entity_type: 'brand', competitor_id: null, name: 'Acme', position: 3, sentiment: -0.2, snippet: null },
        { entity_type: 'brand', competitor_id: null, name: 'Acme Corp', position: 2, sentiment: 0.6, snippet: 'Acme Corp is solid' },
      ],
      citations: [
        { url: 'https://www.reddit.com/r/anvils', domain: 'reddit.com', title: 'Anvils', position: 1 },
        { url: 'https://acme.com/', domain: 'acme.com', title: null, position: null },
      ],
    },
    {
      prompt_run_id: id(11, '55555555'), prompt_id: unknownPrompt, prompt_text: null, engine_id: W.engineA,
      status: 'failed', completed_at: '2026-01-05T12:00:00.000Z', response_excerpt: null,
      brand_mentioned: false, brand_position: null, sentiment: null, mentions: [], citations: [],
    },
  ]);
  tt.same(body(tt, runResults, store, { runGroupId: group2 }), [], 'a group with no runs has no results');
  tt.end();
});

t.test('error-response schema: error and message required, nothing else', (tt) => {
  const validate = apiAjv.getSchema('api/error-response.json')!;
  tt.ok(validate({ error: true, message: 'Invalid API key' }));
  tt.notOk(validate({ error: true }), 'message is required');
  tt.notOk(validate({ error: true, message: 'x', code: 401 }), 'no other fields');
  tt.end();
});
