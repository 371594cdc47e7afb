// run_ids, the deferred index of run ids (src/store/run-index.ts): a writer keeps the runs it inserted
// in memory and indexes them together. Whatever happens to that memory (the writer gone, another
// writer meanwhile, a transaction undone), a run is never stored twice and a newer version always
// replaces the older one.
import t from 'tap';
import { openDb, Projector, type Db } from '../../src/store';
import { asSource, ev, id, W, world } from '../helpers/events';
import { freshDb } from '../helpers/db';

const runId = id(1, '55555555');
const version = (brand: number, at: string) => ev('prompt_run.completed', {
  id: runId, run_group_id: W.group, project_id: W.project, prompt_id: W.prompt1, engine_id: W.engineA, status: 'succeeded',
  completed_at: '2026-01-05T12:00:00Z', mentions: [{ entity_type: 'brand', name: 'Acme', position: brand }], citations: [],
}, at);
const v1 = version(3, '2026-01-06T00:00:00Z');
const v2 = version(1, '2026-01-07T00:00:00Z');

const rows = (db: Db): unknown[] => db.prepare('SELECT id, brand_position FROM prompt_runs WHERE id = ?').all(runId);
const indexed = (db: Db): unknown => db.prepare('SELECT count(*) FROM run_ids WHERE id = ?').pluck().get(runId);
const through = (db: Db): unknown => db.prepare("SELECT value FROM store_meta WHERE key = 'run_ids_through'").pluck().get();

t.test('a run is indexed when its writer settles; until then its writer finds it in memory', (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  projector.applyBatch(asSource([v1], 'test', 100));
  t.equal(indexed(db), 0, 'not in run_ids yet');
  t.same(projector.applyBatch(asSource([v1], 'test', 101)).duplicate, 1, 'the same event again: a duplicate');
  projector.applyBatch(asSource([v2], 'test', 102));
  t.same(rows(db), [{ id: runId, brand_position: 1 }], 'the newer version replaced the row');
  projector.settle();
  t.equal(indexed(db), 1, 'indexed at the settle');
  t.equal(through(db), db.prepare('SELECT max(rowid) FROM runs').pluck().get(), 'through the last run');
  t.end();
});

t.test('a writer gone before indexing (killed): the next one indexes its runs first, and supersedes them', (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  projector.applyBatch(asSource([v1], 'test', 100)); // and the writer is gone: its memory with it
  const next = new Projector(db);
  t.same(next.applyBatch(asSource([v1], 'test', 101)).duplicate, 1, 'v1 again is a duplicate');
  next.applyBatch(asSource([v2], 'test', 102));
  t.same(rows(db), [{ id: runId, brand_position: 1 }], 'one row, the newer version');
  t.equal(indexed(db), 1, 'indexed by the next writer when it began');
  t.end();
});

t.test('two writers taking turns on two connections: neither stores a run the other stored', (t) => {
  const { db, projector: a, file } = freshDb(t);
  a.applyBatch(asSource(world()));
  const other = openDb(file, { fast: true });
  t.teardown(() => other.close());
  const b = new Projector(other);
  a.applyBatch(asSource([v1], 'test', 100)); // pending in a's memory only
  t.same(b.applyBatch(asSource([v1], 'test', 101)).duplicate, 1, 'b sees a\'s run (a committed: b indexes it first)');
  b.applyBatch(asSource([v2], 'test', 102));
  t.same(a.applyBatch(asSource([v1], 'test', 103)).stale, 1, 'a sees b\'s newer version: its v1 is stale');
  t.same(rows(db), [{ id: runId, brand_position: 1 }], 'one row, the newer version');
  // A run b stores first: a knows nothing of it in memory, and must find it all the same.
  const other2 = ev('prompt_run.completed', { ...v1.data, id: id(2, '55555555') }, '2026-01-06T00:00:00Z');
  b.applyBatch(asSource([other2], 'test', 104));
  t.same(a.applyBatch(asSource([other2], 'test', 105)).duplicate, 1, 'a finds b\'s new run (b committed: a indexes it first)');
  t.same(db.prepare('SELECT count(*) FROM prompt_runs').pluck().get(), 2, 'two runs, two rows');
  b.settle();
  a.settle();
  t.same(db.prepare('SELECT count(*) AS n, count(DISTINCT id) AS ids FROM run_ids').get(), { n: 2, ids: 2 }, 'indexed once each');
  t.end();
});

t.test('a batch undone (a handler fails and the batch is applied again with savepoints): its run is stored once', (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON terms WHEN NEW.value = 'boom' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
  const boom = ev('term.upserted', { id: id(1, '33333333'), project_id: W.project, value: 'boom', kind: 'brand' });
  const r = projector.applyBatch(asSource([v1, boom], 'test', 100));
  t.same([r.applied, r.deadLettered], [1, 1], 'the run applied, the term dead-lettered');
  t.same(projector.applyBatch(asSource([v1], 'test', 102)).duplicate, 1, 'the run again: a duplicate');
  t.same(db.prepare('SELECT count(*) FROM prompt_runs').pluck().get(), 1, 'one row');
  projector.settle();
  t.equal(indexed(db), 1);
  t.end();
});
