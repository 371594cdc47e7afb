// A change of what counts is counted again a slice at a time (migration 018: recounts). Meanwhile the
// project's engine-day rows and roll-ups are part old, part new, and its readers must not read them:
// every body built while the project is listed must be the body built once the recount is done.
import path from 'node:path';
import t from 'tap';
import { DEMO_OPTIONS, generateWorld, type WorldOptions } from '../../fixtures/world';
import { ReadStore } from '../../src/readmodels';
import { digest, openDb, type Db } from '../../src/store';
import { buildCases } from '../../bench/builds/build-cases';
import { asSource, type Ev } from '../helpers/events';
import { freshDb, tmpDir } from '../helpers/db';
import { exportData } from '../../src/export';
import { parquetFiles } from '../helpers/export';

// Four months, two projects with dimensions and segments: the recount of one takes several slices.
const WORLD: WorldOptions = {
  ...DEMO_OPTIONS, seed: 418, accounts: 1, projectsPerAccount: 2, sharedProjects: 0, engines: 3, enginesPerProject: 3,
  promptsPerProject: 5, competitorsPerProject: 3, forumPostsPerProject: 4, runsPerPromptPerDay: 1, days: 120, endDay: '2026-04-10',
};

const change = (n: number, type: string, data: Record<string, unknown>): Ev =>
  ({ event_id: `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`, type, schema_version: 1, occurred_at: `2030-01-01T00:00:0${n}.000Z`, data }) as Ev;

function replayed(t: { teardown(fn: () => void): void }, events: Ev[]): { db: Db; file: string; apply: (batch: Ev[], settle: boolean) => void } {
  const { db, projector, file } = freshDb(t);
  let position = 0;
  const apply = (batch: Ev[], settle: boolean): void => {
    if (batch.length === 0) projector.applyBatch([]); // a batch with no events: the writer's slices alone
    for (let i = 0; i < batch.length; i += 500) {
      projector.applyBatch(asSource(batch.slice(i, i + 500), 'test', position));
      position += Math.min(500, batch.length - i);
    }
    if (settle) projector.settle();
  };
  apply(events, true);
  return { db, file, apply };
}

t.test('while a project is counted again, every body is the one built after', async (t) => {
  const events = [...generateWorld(WORLD)].map((line) => JSON.parse(line) as Ev);
  const during = replayed(t, events);
  const after = replayed(t, events);
  // The tiers' requests too: group_by by each key (each path of the groups' reads) while a deleted prompt is counted again.
  const cases = [...buildCases(after.db, { onlyRanges: false }), ...buildCases(after.db, { onlyRanges: true }), ...buildCases(after.db, { onlyRanges: false, onlySlices: true }),
    ...buildCases(after.db, { onlyRanges: false, tier: true }).filter((c) => c.name.includes('group_by'))];
  const projectId = cases.find((c) => c.endpoint.scope === 'project')!.args.projectId;
  // A prompt of the busiest project (the one the cases read) deleted, and a competitor of it.
  const prompt = events.find((e) => e.type === 'prompt.upserted' && e.data.project_id === projectId)!.data;
  const competitor = events.find((e) => e.type === 'competitor.upserted' && e.data.project_id === projectId)!.data;
  const batch = [change(1, 'prompt.deleted', { id: prompt.id, project_id: projectId }), change(2, 'competitor.deleted', { id: competitor.id, project_id: projectId })];
  during.apply(batch, false);
  after.apply(batch, true);

  const listed = during.db.prepare('SELECT next_day FROM recounts WHERE project_id = ?').pluck().get(projectId) as string | undefined;
  t.ok(listed !== undefined, `the project is being counted again (next slice from ${listed})`);
  t.equal(after.db.prepare('SELECT count(*) FROM recounts').pluck().get(), 0, 'settled: nothing listed');

  const a = new ReadStore(openDb(during.file, { readonly: true }));
  const b = new ReadStore(openDb(after.file, { readonly: true }));
  t.teardown(() => { a.close(); b.close(); });
  for (const c of cases) {
    const body = (store: ReadStore): string => JSON.stringify(store.snapshot(() => c.endpoint.build(store, c.args)));
    t.equal(body(a), body(b), c.name);
  }

  // An export made meanwhile holds the files of one made after: it never reads rows being counted again.
  const files = async (file: string): Promise<Map<string, Buffer>> => {
    const out = path.join(tmpDir('recount-export-'), 'out');
    await exportData({ db: file, out, projects: [projectId], range: { start: null, end: null }, full: false });
    return parquetFiles(out);
  };
  const [exportedDuring, exportedAfter] = [await files(during.file), await files(after.file)];
  t.same([...exportedDuring.keys()].sort(), [...exportedAfter.keys()].sort(), 'an export meanwhile has the same partitions');
  t.ok([...exportedDuring].every(([f, bytes]) => bytes.equals(exportedAfter.get(f)!)), 'byte for byte');

  // The rest of the recount, batch by batch as a live writer does it: the digest ends as the settled one.
  for (let n = 3; during.db.prepare('SELECT count(*) FROM recounts').pluck().get() !== 0 && n < 100; n += 1) during.apply([], false);
  t.equal(during.db.prepare('SELECT count(*) FROM recounts').pluck().get(), 0, 'later batches finish the recount');
  t.equal(digest(during.db), digest(after.db), 'and leave the digest the settled writer left');
});
