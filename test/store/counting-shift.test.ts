// A change of what counts in a project with months of runs: a prompt deleted, restored,
// moved to another project and back, a competitor deleted and restored, each after the runs, makes
// the writer count the project's engine-day rows and cited roll-ups again (src/store/aggregates.ts
// recountProject). The result must be exactly what a projection that saw the same changes
// before any run leaves (no recount at all: every run counted as it arrives): the same digest, so
// the same engine-day rows, trend days and roll-ups.
import t from 'tap';
import { DEMO_OPTIONS, generateWorld, type WorldOptions } from '../../fixtures/world';
import { digest, type Db } from '../../src/store';
import { asSource, type Ev } from '../helpers/events';
import { freshDb } from '../helpers/db';

const WORLD: WorldOptions = {
  ...DEMO_OPTIONS, seed: 43, accounts: 1, projectsPerAccount: 2, sharedProjects: 0, engines: 3, enginesPerProject: 3,
  promptsPerProject: 4, competitorsPerProject: 3, forumPostsPerProject: 0, runsPerPromptPerDay: 1, days: 100, endDay: '2026-04-10',
};

const at = (n: number): string => new Date(Date.UTC(2030, 0, 1) + n * 1000).toISOString();
const change = (n: number, type: string, data: Record<string, unknown>): Ev =>
  ({ event_id: `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`, type, schema_version: 1, occurred_at: at(n), data }) as Ev;

/** The changes, in the order they are made: each a batch of its own after the runs. */
function changes(events: Ev[]): Ev[][] {
  const prompts = events.filter((e) => e.type === 'prompt.upserted').map((e) => e.data as Record<string, unknown>);
  const competitor = events.find((e) => e.type === 'competitor.upserted')!.data as Record<string, unknown>;
  const [p1, p2] = [prompts[0]!, prompts[1]!];
  const projects = [...new Set(prompts.map((p) => p.project_id))];
  const other = projects.find((id) => id !== p2.project_id)!;
  let n = 0;
  return [
    [change(++n, 'prompt.deleted', { id: p1.id, project_id: p1.project_id })],
    [change(++n, 'prompt.upserted', p1)],
    [change(++n, 'prompt.deleted', { id: p1.id, project_id: p1.project_id })],
    [change(++n, 'prompt.upserted', { ...p2, project_id: other })],
    [change(++n, 'prompt.upserted', p2)],
    [change(++n, 'prompt.upserted', { ...p2, project_id: other }), change(++n, 'competitor.deleted', { id: competitor.id, project_id: competitor.project_id })],
    [change(++n, 'competitor.upserted', competitor), change(++n, 'prompt.deleted', { id: prompts[2]!.id, project_id: prompts[2]!.project_id })],
  ];
}

function project(t: { teardown(fn: () => void): void }, batches: Ev[][]): Db {
  const { db, projector } = freshDb(t);
  let position = 0;
  for (const batch of batches) {
    for (let i = 0; i < batch.length; i += 500) {
      projector.applyBatch(asSource(batch.slice(i, i + 500), 'test', position));
      position += Math.min(500, batch.length - i);
    }
  }
  projector.settle();
  return db;
}

t.test('changes of what counts after the runs leave what the same changes before them leave', (t) => {
  const events = [...generateWorld(WORLD)].map((line) => JSON.parse(line) as Ev);
  const steps = changes(events);
  for (let k = 1; k <= steps.length; k += 1) {
    const made = steps.slice(0, k);
    const after = project(t, [events, ...made]);
    const before = project(t, [made.flat(), events]);
    t.equal(digest(after), digest(before), `after ${k} change batch(es)`);
  }
  t.end();
});
