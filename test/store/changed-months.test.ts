// Which months of a project's runs changed, and at which project version (migration 017): what an
// incremental export rewrites. A late run marks its own (old) month; a run moved to another day marks
// both months; other projects' and other kinds' changes mark nothing of this project.
import t from 'tap';
import { openReadStore, projectVersions } from '../../src/store';
import { monthsChangedAfter } from '../../src/store/reads';
import { asSource, ev, run, W, world } from '../helpers/events';
import { freshDb } from '../helpers/db';

t.test('a batch marks the months of the runs it added, replaced or moved, at the project version', async (t) => {
  const { projector, file } = freshDb(t);
  const store = openReadStore(file);
  t.teardown(() => store.close());
  const version = (): number => store.snapshot(() => { const v = projectVersions(store, W.project); return v.version - v.kinds.engines; });
  const changed = (after: number): string[] => store.snapshot(() => monthsChangedAfter(store, W.project, after));

  projector.applyBatch(asSource([...world(), run({ n: 1, day: '2026-01-05' }), run({ n: 2, day: '2026-02-10' })]));
  const v1 = version();
  t.same(changed(0), ['2026-01', '2026-02'], 'the first runs mark their months');
  t.same(changed(v1), [], 'nothing changed after the current version');

  // A late run in an old month, and forum and setup changes (versioned per kind, not per month).
  projector.applyBatch(asSource([
    run({ n: 3, day: '2025-12-31' }),
    ev('forum_post.discovered', { id: '99999999-0000-4000-8000-000000000001', project_id: W.project, platform: 'reddit', url: 'https://reddit.com/r/x/1', title: 'x', discovered_at: '2026-03-01T00:00:00Z', relevance: 0.5, intent: 'high', matched_terms: ['acme'] }, '2026-03-01T00:00:01Z'),
  ], 'test', 100));
  const v2 = version();
  t.ok(v2 > v1, 'the project moved');
  t.same(changed(v1), ['2025-12'], 'only the late run\'s month changed since v1 (the forum post marks none)');

  // The same run again with a newer version and another day: it leaves January for March.
  const moved = run({ n: 1, day: '2026-03-02' });
  moved.occurred_at = '2026-03-02T12:00:05Z';
  moved.event_id = '77777777-0000-4000-8000-000000000001';
  projector.applyBatch(asSource([moved], 'test', 200));
  t.same(changed(v2), ['2026-01', '2026-03'], 'a moved run marks the month it left and the month it joined');

  // A duplicate changes nothing.
  projector.applyBatch(asSource([moved], 'test', 300));
  t.same(changed(version()), [], 'a duplicate marks nothing');
  t.same(store.snapshot(() => monthsChangedAfter(store, W.otherProject, 0)), [], 'another project has no marks');
});
