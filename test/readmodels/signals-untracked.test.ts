// Signals when a tracked competitor is named by no run: it has no number in the store, yet it keeps
// its place in every slice (0 mentions), and the brand's change is found as on any other world.
import t from 'tap';
import { ENDPOINTS, type ReadArgs } from '../../src/readmodels';
import { ReadStore } from '../../src/store';
import type { Signals } from '../../src/readmodels/bodies.gen';
import { freshDb } from '../helpers/db';
import { asSource, W } from '../helpers/events';
import { periods, plantedWorld } from '../helpers/webhooks';

t.test('a tracked competitor no run names: 0 of n in each slice, and the brand\'s jump is a signal', async (t) => {
  const env = freshDb(t);
  env.projector.applyBatch(asSource(plantedWorld(2, 18)));
  const store = new ReadStore(env.db);
  t.equal(env.db.prepare('SELECT count(*) FROM slice_hits').pluck().get(), 0, 'no run names a competitor');
  const p = periods();
  const signals = ENDPOINTS.find((e) => e.name === 'signals')!;
  const args = { projectId: W.project, startDate: p.start, endDate: p.end, engineIds: null, limit: 100, windowDays: 7, compareStartDate: null, compareEndDate: null };
  const body = env.db.transaction(() => signals.build(store, args as unknown as ReadArgs))() as Signals;
  // 4 slices (engine all/A x segment all/S), the brand and the one tracked competitor in each.
  t.equal(body.slices_tested, 8, 'every slice tested, the competitor\'s too');
  t.equal(body.signals.length, 4, 'the brand\'s jump in each of its slices');
  t.ok(body.signals.every((s) => s.entity_type === 'brand' && s.current.mentioned === 18 && s.previous.mentioned === 2), 'with its counts');
});
