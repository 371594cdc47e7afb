// The trend's day points rendered by the writer (migration 012, src/store/trend-days.ts): what a cold
// build of /visibility/timeseries sends when no day of the project is stale must be, byte for byte,
// the body build() computes, after whatever changed the days: runs landing, superseded runs, a
// prompt deleted (the project counted again), an engine renamed (points list engines by name), and
// a database migrated from 011. A stale day makes the read compute the body instead.
import t, { type Test } from 'tap';
import { DEMO_OPTIONS, generateWorld } from '../../fixtures/world';
import { ENDPOINTS, ReadStore, type ReadArgs } from '../../src/readmodels';
import type { Db, Projector } from '../../src/store';
import { TrendDays } from '../../src/store/trend-days';
import { BodySchemas } from '../../src/serve/bodies/bodies';
import { asSource, ev, run, W, world } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { readArgs } from '../helpers/readmodels';

const trend = ENDPOINTS.find((e) => e.name === 'timeseries')!;
const schemas = new BodySchemas();

function args(projectId: string, over: Partial<ReadArgs> = {}): ReadArgs {
  return readArgs({ accountId: '', projectId, runGroupId: '', limit: 0, ...over });
}

/** text() and build() of one request in one snapshot, as buildReady reads them. */
function both(db: Db, a: ReadArgs): { text: string | null; built: string } {
  const store = new ReadStore(db);
  return db.transaction(() => ({ text: trend.text!(store, a), built: JSON.stringify(trend.build(store, a)) }))();
}

const staleDays = (db: Db): number => db.prepare('SELECT count(*) FROM trend_days_stale').pluck().get() as number;

/** The stored text serves the request and is build()'s bytes, which match the schema. */
function sameAsBuilt(tt: Test, db: Db, a: ReadArgs, what: string): void {
  const { text, built } = both(db, a);
  tt.equal(text, built, `${what}: the stored points are build()'s bytes`);
  tt.equal(schemas.check('timeseries', JSON.parse(built)), null, `${what}: the body matches schemas/api/timeseries.json`);
}

function apply(projector: Projector, events: Array<ReturnType<typeof ev> | string>, at: number): void {
  projector.applyBatch(asSource(events, 'test', at));
}

t.test('a generated world, batches of any size: every project\'s stored trend is the computed one', async (tt) => {
  const lines = [...generateWorld({ ...DEMO_OPTIONS, seed: 1212, days: 24 })];
  for (const size of [1, 97, 5000]) {
    const { db, projector } = freshDb(tt);
    for (let i = 0; i < lines.length; i += size) apply(projector, lines.slice(i, i + size), 1 + i);
    projector.settle();
    tt.equal(staleDays(db), 0, `batches of ${size}: no day left stale`);
    const projects = db.prepare('SELECT DISTINCT project_id FROM agg_engine_day ORDER BY 1').pluck().all() as string[];
    tt.ok(projects.length >= 3, 'several projects with runs');
    for (const p of projects) {
      sameAsBuilt(tt, db, args(p), `batches of ${size}, ${p}`);
      const latest = db.prepare('SELECT max(day) FROM agg_engine_day WHERE project_id = ?').pluck().get(p) as string;
      const first = db.prepare('SELECT min(day) FROM agg_engine_day WHERE project_id = ?').pluck().get(p) as string;
      sameAsBuilt(tt, db, args(p, { startDate: first, endDate: latest }), `batches of ${size}, ${p}, a range`);
    }
    tt.equal(both(db, args(projects[0]!, { interval: 'week' })).text, null, 'a week\'s points are computed (no stored text)');
  }
});

t.test('runs superseded, a prompt deleted, an engine renamed and added: the points follow', async (tt) => {
  const { db, projector } = freshDb(tt);
  apply(projector, world(), 1);
  apply(projector, [
    run({ n: 1, day: '2026-01-05', brand: 1, sentiment: 0.5, competitor: 2 }),
    run({ n: 2, day: '2026-01-05', engine: W.engineB, brand: 3 }),
    run({ n: 3, day: '2026-01-06', prompt: W.prompt2, brand: 2 }),
    run({ n: 4, day: '2026-01-07', engine: W.engineB, competitor: 1 }),
  ], 100);
  sameAsBuilt(tt, db, args(W.project), 'runs landed');
  const before = both(db, args(W.project)).text!;

  // Run 1 again, a later version: moved to another day, brand gone.
  apply(projector, [run({ n: 1, day: '2026-01-07' })], 200);
  sameAsBuilt(tt, db, args(W.project), 'a run superseded into another day');
  tt.not(both(db, args(W.project)).text, before, 'and the stored points changed with it');

  apply(projector, [ev('prompt.deleted', { id: W.prompt2, project_id: W.project }, '2026-01-10T00:00:00Z')], 300);
  sameAsBuilt(tt, db, args(W.project), 'a prompt deleted: its runs no longer count');

  // ChatGPT -> Zeta: engine B (Perplexity) now comes first inside each point.
  const renamed = both(db, args(W.project)).text!;
  apply(projector, [ev('engine.upserted', { id: W.engineA, name: 'Zeta', provider: 'openai', model: 'gpt-4o' }, '2026-01-11T00:00:00Z')], 400);
  sameAsBuilt(tt, db, args(W.project), 'an engine renamed');
  tt.not(both(db, args(W.project)).text, renamed, 'the points list the engines in their new order');
  tt.equal(staleDays(db), 0, 'nothing left stale');
});

t.test('a stale day: the read computes the body; the next batch renders it', async (tt) => {
  const { db, projector } = freshDb(tt);
  apply(projector, world(), 1);
  apply(projector, [run({ n: 1, brand: 1 }), run({ n: 2, day: '2026-01-06', brand: 2 })], 100);
  // A point that is wrong and marked stale, as a crash of a writer between its trigger and its render
  // cannot leave (one transaction) but a hand-edited or half-migrated file could.
  db.prepare("UPDATE trend_days SET point = '{}' WHERE project_id = ? AND day = '2026-01-05'").run(W.project);
  db.prepare("INSERT INTO trend_days_stale (project_id, day) VALUES (?, '2026-01-05')").run(W.project);
  tt.equal(both(db, args(W.project)).text, null, 'a project with a stale day has no stored text');
  apply(projector, [run({ n: 3, day: '2026-01-06', engine: W.engineB, brand: 4 })], 200);
  sameAsBuilt(tt, db, args(W.project), 'rendered again at the next batch');
  tt.equal(both(db, args(W.otherProject)).text, '[]', 'a project without runs: an empty trend');
});

t.test('a database migrated to 012: every day stale, rendered a bounded number per batch', async (tt) => {
  const { db, projector } = freshDb(tt);
  apply(projector, world(), 1);
  const days = ['2026-01-05', '2026-01-06', '2026-01-07', '2026-01-08', '2026-01-09'];
  apply(projector, days.map((day, i) => run({ n: i + 1, day, brand: 1 + i, competitor: i % 2 ? 3 : null })), 100);
  const want = both(db, args(W.project)).built;
  // What migration 012 leaves on a file of 011: no points, every day of agg_engine_day stale.
  db.exec('DELETE FROM trend_days; INSERT INTO trend_days_stale (project_id, day) SELECT DISTINCT project_id, day FROM agg_engine_day');
  tt.equal(staleDays(db), days.length, 'every day stale');
  tt.equal(both(db, args(W.project)).text, null, 'computed while any is');
  const trendDays = new TrendDays(db);
  tt.equal(db.transaction(() => trendDays.render(2))(), 2, 'a render does at most its limit');
  tt.equal(both(db, args(W.project)).text, null, 'still computed: three days wait');
  tt.equal(db.transaction(() => trendDays.render(2))(), 2);
  tt.equal(db.transaction(() => trendDays.render(2))(), 1);
  tt.equal(both(db, args(W.project)).text, want, 'all rendered: the stored points are the body');
});
