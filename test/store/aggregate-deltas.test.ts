// Aggregates add up exactly (migrations 005, 011): a batch adds its runs' sums, the latest week and
// month of a project wait in the writer's memory until it moves past them or settles, and whatever
// cannot subtract (a superseded run, a change of what counts) is counted again from the runs. These
// cases check that this leaves exactly what applying only the winning versions leaves, whatever the
// order, the batching and the versions in between: runs that are re-analysed several times, move
// between days, change status, and cite one URL with titles at the same instant; and that nothing
// depends on the writer's memory (a writer gone, another writer meanwhile).
import t from 'tap';
import { mulberry32 } from '../../fixtures/random';
import { ENDPOINTS, ReadStore } from '../../src/readmodels';
import { digest, openDb, Projector, type Db } from '../../src/store';
import { asSource, ev, id, W, world, type Ev } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { oracleAggregates } from '../helpers/oracle-aggregates';
import { readArgs } from '../helpers/readmodels';

/** The aggregate tables replaced by the SQL oracle's, computed from the stored runs. */
const recomputeBySql = (db: Db): void => oracleAggregates(db);

// Two days of one ISO week, and a Sunday of another week and month: versions move sums between roll-up rows too.
const DAYS = ['2026-01-05', '2026-01-06', '2026-02-01'];
const URLS = ['https://a.com/x', 'https://b.org/y', 'https://c.net/z'];

type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

/** One version of run `n`: a random bucket, status, mentions and citations; `v` orders the versions. */
function version(rng: Rng, n: number, v: number): Ev {
  const mentions: Array<Record<string, unknown>> = [];
  if (rng() < 0.7) mentions.push({ entity_type: 'brand', name: 'Acme', position: 1 + Math.floor(rng() * 12), ...(rng() < 0.8 ? { sentiment: Math.round((rng() * 2 - 1) * 100) / 100 } : {}) });
  // Half-units of the fixed point, both signs: JavaScript and SQLite must round them alike.
  if (rng() < 0.3) mentions.push({ entity_type: 'brand', name: 'Acme Inc', position: 1 + Math.floor(rng() * 12), sentiment: pick(rng, [-0.5, -0.0000005, 0.0000025]) });
  if (rng() < 0.6) mentions.push({ entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 1 + Math.floor(rng() * 30), sentiment: 0.25 });
  const citations = URLS.filter(() => rng() < 0.5).map((url) => (rng() < 0.6 ? { url, title: pick(rng, ['T0', 'T1', 'T2', '']) } : { url }));
  if (citations.length > 0 && rng() < 0.3) citations.push({ url: citations[0]!.url, title: 'Again' }); // the URL twice in one run
  // A few instants only, so titles of one URL often tie at the same completed_at across runs.
  const hour = pick(rng, ['09', '12', '12', '15']);
  return ev('prompt_run.completed', {
    id: id(n, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: pick(rng, [W.prompt1, W.prompt2]),
    engine_id: pick(rng, [W.engineA, W.engineB]), status: rng() < 0.85 ? 'succeeded' : 'failed',
    completed_at: `${pick(rng, DAYS)}T${hour}:00:00Z`, mentions, citations,
  }, `2026-01-07T00:00:${String(v).padStart(2, '0')}Z`);
}

/** 40 runs, each in 1-4 versions: every version, and the winning (latest) one of each run. */
function history(seed: number): { all: Ev[]; winners: Ev[] } {
  const rng = mulberry32(seed);
  const all: Ev[] = [];
  const winners: Ev[] = [];
  for (let n = 1; n <= 40; n += 1) {
    const versions = Array.from({ length: 1 + Math.floor(rng() * 4) }, (_, v) => version(rng, n, v));
    all.push(...versions);
    winners.push(versions.at(-1)!);
  }
  return { all, winners };
}

function shuffled<T>(rng: Rng, xs: T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Applies the world, then `events` cut into batches of the given sizes (cycled), settles (a writer's
 * last step: the weeks and months waiting in memory are written), and returns the digest.
 */
function digestOf(tt: Parameters<typeof freshDb>[0], events: Ev[], sizes: number[], then?: (db: Db) => void): string {
  const { db, projector } = freshDb(tt);
  projector.applyBatch(asSource(world()));
  applyIn(projector, events, sizes);
  projector.settle();
  then?.(db);
  return digest(db);
}

function applyIn(projector: Projector, events: Ev[], sizes: number[], from = 0): void {
  for (let i = 0, b = 0; i < events.length; b += 1) {
    const size = sizes[b % sizes.length]!;
    projector.applyBatch(asSource(events.slice(i, i + size), 'test', 1000 + from + i));
    i += size;
  }
}

t.test('superseding runs leave the aggregates of their winning versions alone, whatever the order and batching', (t) => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const { all, winners } = history(seed);
    const rng = mulberry32(seed * 7919);
    const expected = digestOf(t, winners, [winners.length]);
    t.equal(digestOf(t, all, [all.length]), expected, `seed ${seed}: every version in one batch`);
    t.equal(digestOf(t, all, [1]), expected, `seed ${seed}: every version, one per batch`);
    t.equal(digestOf(t, shuffled(rng, all), [3, 1, 7, 2]), expected, `seed ${seed}: shuffled, in uneven batches`);
    t.equal(digestOf(t, [...shuffled(rng, all), ...shuffled(rng, all)], [5]), expected, `seed ${seed}: shuffled, twice over`);
    t.equal(digestOf(t, all, [4], recomputeBySql), expected, `seed ${seed}: the aggregates the SQL oracle computes from the runs`);
  }
  t.end();
});

t.test('a run that leaves a cited URL takes its first, last and title with it', (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  const cite = (n: number, hour: string, title: string | null, at: string, url = URLS[0]!): Ev => ev('prompt_run.completed', {
    id: id(n, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: W.prompt1, engine_id: W.engineA,
    status: 'succeeded', completed_at: `2026-01-05T${hour}:00:00Z`, mentions: [], citations: [title ? { url, title } : { url }],
  }, at);
  // The week's row once settled (a writer stopping), and again after each supersede, settled again.
  const row = (): unknown => {
    projector.settle();
    return db.prepare(`SELECT runs, first_at, last_at, title, title_run FROM agg_cited_week WHERE url = '${URLS[0]}'`).get();
  };
  // Runs 1 and 2 cite the URL at 09:00 and 12:00; run 3 at 12:00 too, with a title: the greater id wins the tie.
  projector.applyBatch(asSource([cite(1, '09', 'First', '2026-01-06T00:00:00Z'), cite(2, '12', 'Tie low', '2026-01-06T00:00:00Z'), cite(3, '12', 'Tie high', '2026-01-06T00:00:00Z')]));
  t.same(row(), { runs: 3, first_at: '2026-01-05T09:00:00.000Z', last_at: '2026-01-05T12:00:00.000Z', title: 'Tie high', title_run: id(3, '55555555') });
  // Run 3 re-analysed: it now cites another URL. The tie's winner is gone: run 2's title is next.
  projector.applyBatch(asSource([cite(3, '12', 'Elsewhere', '2026-01-06T01:00:00Z', URLS[1])]));
  t.same(row(), { runs: 2, first_at: '2026-01-05T09:00:00.000Z', last_at: '2026-01-05T12:00:00.000Z', title: 'Tie low', title_run: id(2, '55555555') });
  // Run 1 (the first) re-analysed without a title, later in the day: first_at moves, the title stays.
  projector.applyBatch(asSource([cite(1, '15', null, '2026-01-06T01:00:00Z')]));
  t.same(row(), { runs: 2, first_at: '2026-01-05T12:00:00.000Z', last_at: '2026-01-05T15:00:00.000Z', title: 'Tie low', title_run: id(2, '55555555') });
  t.end();
});

t.test('a run that leaves a day where it was alone leaves no empty row behind, at any grain', (t) => {
  const alone = (completed: string, at: string): Ev => ev('prompt_run.completed', {
    id: id(77, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: W.prompt1, engine_id: W.engineA, status: 'succeeded',
    completed_at: completed, mentions: [{ entity_type: 'brand', name: 'Acme', position: 2 }, { entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 1 }],
    citations: [{ url: URLS[0]!, title: 'T' }],
  }, at);
  // Alone on 2026-03-10 (its day, ISO week and month), then re-analysed onto 2026-01-05.
  const events = [alone('2026-03-10T09:00:00Z', '2026-03-11T00:00:00Z'), alone('2026-01-05T09:00:00Z', '2026-03-12T00:00:00Z')];
  const left: string[] = [];
  const byDeltas = digestOf(t, events, [1], (db) => {
    for (const table of ['agg_prompt_week', 'agg_prompt_month', 'agg_competitor_week', 'agg_competitor_month', 'agg_engine_day', 'agg_cited_week', 'agg_cited_month', 'agg_cited_engine_week', 'agg_cited_engine_month']) {
      const n = db.prepare(`SELECT count(*) FROM ${table} WHERE day >= '2026-03-01'`).pluck().get() as number;
      if (n > 0) left.push(`${table}: ${n}`);
    }
  });
  t.same(left, [], 'no row of March is left');
  t.equal(byDeltas, digestOf(t, events, [1], recomputeBySql), 'the rows the SQL oracle computes from the runs');
  t.end();
});

/**
 * Entity events that change what counts (migration 008's engine-day sums hold counted runs only):
 * a prompt deleted, restored or moved to another project, a competitor deleted, an engine and a
 * prompt first seen after their runs. Whatever the order and batching, the sums are what the
 * oracle counts from the final rows.
 */
function countingHistory(seed: number): Ev[] {
  const rng = mulberry32(seed);
  const engineC = id(3, 'cccccccc');
  const prompt3 = id(3, 'ffffffff');
  const runs = history(seed).all;
  const late = (n: number, engine: string, prompt: string): Ev => ev('prompt_run.completed', {
    id: id(n, '66666666'), run_group_id: W.group, project_id: W.project, prompt_id: prompt, engine_id: engine, status: 'succeeded',
    completed_at: `${pick(rng, DAYS)}T12:00:00Z`, mentions: [{ entity_type: 'brand', name: 'Acme', position: 1 + n % 5 }, { entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 2 }],
    citations: [{ url: URLS[n % URLS.length]!, title: `Late ${n}` }],
  }, '2026-01-07T00:00:00Z');
  const at = (minute: number): string => `2026-01-08T00:${String(minute).padStart(2, '0')}:00Z`;
  const promptEv = (prompt: string, project: string, minute: number): Ev =>
    ev('prompt.upserted', { id: prompt, project_id: project, text: 'moved anvil', segment_ids: [], active: true }, at(minute));
  const entity: Ev[] = [
    ev('prompt.deleted', { id: W.prompt2, project_id: W.project }, at(1)),
    ...(seed % 2 === 0 ? [promptEv(W.prompt2, W.project, 2)] : []), // restored in even seeds
    ev('competitor.deleted', { id: W.competitor, project_id: W.project }, at(3)),
    ...(seed % 3 === 0 ? [ev('competitor.upserted', { id: W.competitor, project_id: W.project, name: 'Wile', domain: 'wile.com', aliases: [] }, at(4))] : []),
    promptEv(W.prompt1, W.otherProject, 5), // moved away ...
    ...(seed % 2 === 1 ? [promptEv(W.prompt1, W.project, 6)] : []), // ... and back in odd seeds
    ev('engine.upserted', { id: engineC, name: 'Gemini', provider: 'google' }, at(7)),
    promptEv(prompt3, W.project, 8),
  ];
  return [...runs, late(1, engineC, W.prompt1), late(2, engineC, prompt3), late(3, W.engineA, prompt3), ...entity];
}

t.test('what counts changes (prompts deleted, restored, moved; a competitor deleted; an engine and a prompt after their runs): the engine-day sums and cited URLs follow, whatever the order and batching', (t) => {
  for (const seed of [1, 2, 3, 6]) {
    const events = countingHistory(seed);
    const rng = mulberry32(seed * 104729);
    const expected = digestOf(t, events, [events.length]);
    t.equal(digestOf(t, events, [events.length], recomputeBySql), expected, `seed ${seed}: the rows the SQL oracle counts`);
    t.equal(digestOf(t, events, [1]), expected, `seed ${seed}: one event per batch`);
    t.equal(digestOf(t, shuffled(rng, events), [3, 1, 7, 2]), expected, `seed ${seed}: shuffled, in uneven batches`);
    t.equal(digestOf(t, [...shuffled(rng, events), ...shuffled(rng, events)], [5]), expected, `seed ${seed}: shuffled, twice over`);
  }
  t.end();
});

t.test('a competitor deleted or restored counts the engine-day sums again, and leaves the cited-URL roll-ups alone (they count runs, not mentions)', (t) => {
  const events = history(5).all;
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  projector.applyBatch(asSource(events, 'test', 1000));
  projector.settle();
  // Every statement that drops a cited roll-up row (a project counted again drops them all) is seen here.
  // The cited roll-ups are lists of a period's row (migration 013): counting them again writes the row again.
  db.exec('CREATE TEMP TABLE dropped (period TEXT)');
  db.exec("CREATE TEMP TRIGGER dropped_cited AFTER UPDATE OF cited_engines ON main.rollups WHEN OLD.cited_engines <> '[]' BEGIN INSERT INTO dropped VALUES (OLD.day); END");
  db.exec("CREATE TEMP TRIGGER dropped_period AFTER DELETE ON main.rollups WHEN OLD.cited_engines <> '[]' BEGIN INSERT INTO dropped VALUES (OLD.day); END");
  const dropped = (): number => db.prepare('SELECT count(*) FROM dropped').pluck().get() as number;
  const engineDays = (): unknown => db.prepare('SELECT sum(competitor_runs) FROM agg_engine_day WHERE project_id = ?').pluck().get(W.project);
  const before = engineDays();
  t.ok((before as number) > 0, 'competitor mentions count in the engine-day sums');

  projector.applyBatch(asSource([ev('competitor.deleted', { id: W.competitor, project_id: W.project }, '2026-01-08T00:00:00Z')], 'test', 2000));
  t.equal(engineDays(), 0, 'the engine-day sums lost the deleted competitor');
  t.equal(dropped(), 0, 'no cited roll-up row was dropped and written again');
  projector.applyBatch(asSource([ev('competitor.upserted', { id: W.competitor, project_id: W.project, name: 'Wile', domain: 'wile.com', aliases: [] }, '2026-01-08T00:01:00Z')], 'test', 2001));
  t.equal(engineDays(), before, 'restored: its mentions count again');
  t.equal(dropped(), 0, 'and the cited roll-ups were still left alone');
  projector.settle();
  const afterCompetitor = digest(db);
  recomputeBySql(db);
  t.equal(digest(db), afterCompetitor, 'what the SQL oracle counts');

  projector.applyBatch(asSource([ev('prompt.deleted', { id: W.prompt2, project_id: W.project }, '2026-01-08T00:02:00Z')], 'test', 2002));
  t.ok(dropped() > 0, 'a prompt deleted does count the cited roll-ups again (its runs leave them)');
  t.end();
});

t.test('a project counted again over weeks of history (a prompt deleted, then restored) is what the oracle counts, day after day', (t) => {
  const rng = mulberry32(42);
  const runs: Ev[] = [];
  for (let d = 0; d < 40; d += 1) {
    const day = new Date(Date.UTC(2026, 0, 20 + d)).toISOString().slice(0, 10); // 2026-01-20 .. 2026-02-28: weeks and a month across
    for (let n = 0; n < 3; n += 1) {
      runs.push(ev('prompt_run.completed', {
        id: id(1000 + d * 10 + n, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: pick(rng, [W.prompt1, W.prompt2]),
        engine_id: pick(rng, [W.engineA, W.engineB]), status: 'succeeded', completed_at: `${day}T${pick(rng, ['09', '12'])}:00:00Z`, mentions: [],
        citations: URLS.filter(() => rng() < 0.6).map((url) => ({ url, title: pick(rng, ['T0', 'T1']) })),
      }, '2026-03-01T00:00:00Z'));
    }
  }
  const deleted = ev('prompt.deleted', { id: W.prompt2, project_id: W.project }, '2026-03-02T00:00:00Z');
  const restored = ev('prompt.upserted', { id: W.prompt2, project_id: W.project, text: 'back', segment_ids: [], active: true }, '2026-03-03T00:00:00Z');
  const left: string[] = [];
  const afterDelete = digestOf(t, [...runs, deleted], [runs.length, 1], (db) => {
    for (const table of ['agg_cited_week', 'agg_cited_month', 'agg_cited_engine_week']) {
      const n = db.prepare(`SELECT count(*) FROM ${table} WHERE instr(prompt_ids, ?) > 0`).pluck().get(W.prompt2) as number;
      if (n > 0) left.push(`${table}: ${n}`);
    }
  });
  t.same(left, [], 'the deleted prompt is in no cited row');
  t.equal(afterDelete, digestOf(t, [...runs, deleted], [runs.length, 1], recomputeBySql), 'deleted: the rows the SQL oracle counts from the runs');
  t.equal(digestOf(t, [...runs, deleted, restored], [runs.length, 1, 1]), digestOf(t, [...runs, deleted, restored], [runs.length + 2], recomputeBySql), 'restored: the same');
  t.end();
});

/** 40 days of runs (2026-01-20 .. 2026-02-28: weeks and a month across), three a day, in day order as a replay reads them. */
function daysOfRuns(seed: number): Ev[] {
  const rng = mulberry32(seed);
  const runs: Ev[] = [];
  for (let d = 0; d < 40; d += 1) {
    const day = new Date(Date.UTC(2026, 0, 20 + d)).toISOString().slice(0, 10);
    for (let n = 0; n < 3; n += 1) {
      runs.push(ev('prompt_run.completed', {
        id: id(3000 + d * 10 + n, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: pick(rng, [W.prompt1, W.prompt2]),
        engine_id: pick(rng, [W.engineA, W.engineB]), status: 'succeeded', completed_at: `${day}T${pick(rng, ['09', '12'])}:00:00Z`,
        mentions: [{ entity_type: 'brand', name: 'Acme', position: 1 + n }, ...(rng() < 0.5 ? [{ entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 2 }] : [])],
        citations: URLS.filter(() => rng() < 0.6).map((url) => ({ url, title: pick(rng, ['T0', 'T1']) })),
      }, '2026-03-01T00:00:00Z'));
    }
  }
  return runs;
}

/** Every ranged body of the project the roll-ups serve, over ranges whose weeks and months are whole or cut. */
function rangedBodies(db: Db): string[] {
  const store = new ReadStore(db);
  const bodies: string[] = [];
  const ranges: Array<[string, string]> = [['2026-01-20', '2026-02-28'], ['2026-01-26', '2026-02-22'], ['2026-02-01', '2026-02-28'], ['2026-02-23', '2026-03-01']];
  for (const name of ['visibility', 'timeseries', 'segment-analytics', 'competitor-rankings', 'citations', 'referrers', 'warm-leads', 'daily-scores']) {
    const e = ENDPOINTS.find((x) => x.name === name)!;
    for (const [startDate, endDate] of ranges) {
      for (const interval of ['day', 'week', 'month'] as const) {
        for (const engineIds of [null, [W.engineA]]) {
          const args = readArgs({ runGroupId: '', engineIds, limit: 1000, startDate, endDate, interval });
          bodies.push(`${name} ${startDate}..${endDate} ${interval} ${engineIds?.length ?? 'all'}: ${JSON.stringify(db.transaction(() => e.build(store, args))())}`);
        }
      }
    }
  }
  return bodies;
}

t.test('the latest week and month wait in memory: answers over them are the same bytes meanwhile, and settling leaves what the oracle counts', (t) => {
  const runs = daysOfRuns(7);
  const { db: oneBatch, projector: p1 } = freshDb(t);
  p1.applyBatch(asSource(world()));
  applyIn(p1, runs, [runs.length]);
  p1.settle();
  const expected = rangedBodies(oneBatch);

  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  applyIn(projector, runs, [9]); // three days a batch, in day order
  const pending = db.prepare("SELECT grain || ' ' || day FROM rollup_pending ORDER BY grain, day").pluck().all();
  t.same(pending, ['month 2026-02-01', 'week 2026-02-23'], 'the latest week and month are pending; those the batches moved past were written once');
  const waiting = db.prepare("SELECT count(*) FROM agg_prompt_week WHERE day = '2026-02-23'").pluck().get() as number;
  t.equal(waiting, 0, 'the pending week has no roll-up rows yet');
  t.same(rangedBodies(db), expected, 'every ranged body, while pending');

  projector.settle();
  t.same(db.prepare('SELECT count(*) FROM rollup_pending').pluck().get(), 0, 'settled: nothing pending');
  t.same(rangedBodies(db), expected, 'every ranged body, settled');
  t.equal(digest(db), digest(oneBatch), 'the digest of one batch');
  recomputeBySql(db);
  t.equal(digest(db), digest(oneBatch), 'and of the SQL oracle');
  t.end();
});

t.test("memory is not the truth: a writer that is gone (killed), or another writer meanwhile, makes the waiting periods count again from their runs", (t) => {
  const runs = daysOfRuns(8);
  const expected = digestOf(t, runs, [runs.length]);
  // A writer applies two thirds and is gone without settling (its sums in memory are lost; the marks stay).
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  applyIn(projector, runs.slice(0, 80), [12]);
  t.ok((db.prepare('SELECT count(*) FROM rollup_pending').pluck().get() as number) > 0, 'it left periods pending');
  // The next writer (a new Projector: nothing in memory) applies the rest and settles.
  const next = new Projector(db);
  applyIn(next, runs.slice(80), [12], 80);
  next.settle();
  t.same(db.prepare('SELECT count(*) FROM rollup_pending').pluck().get(), 0, 'settled');
  t.equal(digest(db), expected, 'the digest of one writer');

  // Two writers on two connections, taking turns: each one's sums lack the other's runs.
  const { db: dbA, projector: a, file: fileA } = freshDb(t);
  a.applyBatch(asSource(world()));
  const dbB = openDb(fileA, { fast: true });
  const b = new Projector(dbB);
  for (let i = 0, turn = 0; i < runs.length; i += 10, turn += 1) {
    (turn % 2 === 0 ? a : b).applyBatch(asSource(runs.slice(i, i + 10), 'test', 1000 + i));
  }
  b.settle();
  a.settle();
  t.equal(digest(dbA), expected, 'the digest of one writer, whichever settles last');
  dbB.close();
  t.end();
});

t.test('what counts changes while periods wait: runs in a pending month are found (a new engine, a deleted prompt and competitor)', (t) => {
  const engineC = id(3, 'cccccccc');
  const run = (n: number, engine: string, prompt: string): Ev => ev('prompt_run.completed', {
    id: id(n, '66666666'), run_group_id: W.group, project_id: W.project, prompt_id: prompt, engine_id: engine, status: 'succeeded',
    completed_at: '2026-02-10T12:00:00Z', mentions: [{ entity_type: 'brand', name: 'Acme', position: 2 }, { entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: 1 }],
    citations: [{ url: URLS[n % URLS.length]!, title: `T${n}` }],
  }, '2026-02-11T00:00:00Z');
  const runs = [run(1, engineC, W.prompt1), run(2, W.engineA, W.prompt2), run(3, W.engineB, W.prompt1)];
  const cases: Array<[string, Ev]> = [
    ['an engine seen after its runs', ev('engine.upserted', { id: engineC, name: 'Gemini', provider: 'google' }, '2026-02-12T00:00:00Z')],
    ['a prompt deleted', ev('prompt.deleted', { id: W.prompt2, project_id: W.project }, '2026-02-12T00:00:00Z')],
    ['a competitor deleted', ev('competitor.deleted', { id: W.competitor, project_id: W.project }, '2026-02-12T00:00:00Z')],
  ];
  for (const [what, change] of cases) {
    const events = [...runs, change];
    // The runs in one batch (February pending), the change in the next.
    t.equal(digestOf(t, events, [runs.length, 1]), digestOf(t, events, [events.length], recomputeBySql), `${what}: what the SQL oracle counts`);
  }
  t.end();
});
