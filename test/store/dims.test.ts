// A run's dimensions are numbered per project (migration 015): a filter reads only its own
// project's combinations, however many other projects' runs name (one account cannot slow another's
// filtered reads by sending many distinct models or personas).
import t from 'tap';
import { openReadStore } from '../../src/store';
import { dimsByNumber, dimsMatching } from '../../src/store/reads';
import { asSource, run, W, world, type Ev } from '../helpers/events';
import { freshDb } from '../helpers/db';

/** A run of the other account's project. */
const elsewhere = (n: number, model: string): Ev => {
  const e = run({ n, country: 'US', model });
  e.data.project_id = W.otherProject;
  return e;
};

t.test('dims numbers are per project', async (t) => {
  const { db, projector, file } = freshDb(t);
  const mine = [run({ n: 1, country: 'US', persona: 'Founder' }), run({ n: 2, country: 'DE', persona: 'Founder' }), run({ n: 3, country: 'US', persona: 'Founder' })];
  const theirs = Array.from({ length: 40 }, (_, i) => elsewhere(100 + i, `model-${i}`));
  projector.applyBatch(asSource([...world(), ...mine, ...theirs]));
  projector.settle();
  t.equal(db.prepare('SELECT count(*) FROM dims').pluck().get(), 42, 'every combination of both projects is numbered');
  const store = openReadStore(file);
  t.teardown(() => store.close());
  const own = store.snapshot(() => dimsByNumber(store, W.project));
  t.same([...own.values()].sort(), [['DE', 'Founder', null, null], ['US', 'Founder', null, null]], 'a project reads only the combinations its runs name');
  const us = store.snapshot(() => dimsMatching(store, W.project, ['US'], null, null));
  t.equal(us.length, 1, 'country=US matches one combination of this project, not the other project\'s 40');
  t.equal(store.snapshot(() => dimsMatching(store, W.otherProject, ['US'], null, null)).length, 40, 'and the other project its own');
  t.equal(db.prepare('SELECT count(*) FROM runs WHERE dims = ?').pluck().get(us[0]), 2, 'the two US runs of this project carry that number');
});
