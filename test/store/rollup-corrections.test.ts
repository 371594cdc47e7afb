// A run sent again later (same id, a later occurred_at, changed facts: its dimensions, or only its
// excerpt) is counted once by its week and its month, whatever the batching: a replay cut into
// batches of any size gives one digest, and a ranged week answers the sum of its days. Before the
// fix, a week whose latest run was superseded (so counted again from its runs) was counted while a
// batch's sums were still being added: the correction, stored already, was in the count and then
// added again as the week's batch sums, so the week had one run too many at most batch sizes.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { replayFiles } from '../../src/ingest';
import { ENDPOINTS, ReadStore } from '../../src/readmodels';
import { digest, type Db } from '../../src/store';
import { addDays } from '../../src/lib/time';
import { ev, id, W, world, writeNdjson, type Ev } from '../helpers/events';
import { freshDb, tmpDir } from '../helpers/db';
import { oracleAggregates } from '../helpers/oracle-aggregates';
import { readArgs } from '../helpers/readmodels';

const FIRST = '2027-03-01'; // a Monday: three ISO weeks of March, then a week across the month's end
const DAYS = 35;
const HOURS = ['01', '09', '22'];

interface Run { n: number; day: string; hour: string }

const runEvent = (r: Run, occurredAt: string, over: Record<string, unknown> = {}): Ev => ev('prompt_run.completed', {
  id: id(r.n, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: r.n % 2 === 0 ? W.prompt1 : W.prompt2,
  engine_id: r.n % 3 === 0 ? W.engineB : W.engineA, status: 'succeeded', completed_at: `${r.day}T${r.hour}:00:00Z`,
  mentions: [{ entity_type: 'brand', name: 'Acme', position: 1 + (r.n % 4) }], citations: [{ url: `https://a.com/${r.n % 5}`, title: 'A' }],
  country: 'US', persona: 'Founder', response_excerpt: 'first analysis', ...over,
}, occurredAt);

/**
 * Three runs a day in day order; some runs are sent again `distance` events after their original, with
 * a later occurred_at and changed facts. The late-evening run of each Sunday is among them: its
 * correction lands in the next week (and the one of 2027-03-31 in April).
 */
function correctedLog(): { events: Ev[]; runs: number } {
  const runs: Run[] = [];
  for (let d = 0; d < DAYS; d += 1) for (const hour of HOURS) runs.push({ n: runs.length + 1, day: addDays(FIRST, d), hour });
  const events: Ev[] = runs.map((r) => runEvent(r, `${r.day}T${r.hour}:00:01Z`));
  const changes: Array<Record<string, unknown>> = [
    { country: 'DE' }, { persona: 'Developer' }, { model: 'gpt-4o-mini' }, { surface: 'app' }, { response_excerpt: 'analysed again' },
  ];
  const corrected = runs.filter((r, i) => (r.hour === '22' && (new Date(`${r.day}T00:00:00Z`).getUTCDay() === 0 || r.day === '2027-03-31')) || i % 17 === 5);
  // Later first: each insertion leaves the places of the earlier originals as they were.
  corrected.reverse().forEach((r, k) => {
    const at = events.findIndex((e) => (e.data as { id: string }).id === id(r.n, '55555555'));
    const distance = [1, 2, 4, 7, 12][k % 5]!;
    const occurred = new Date(Date.parse(`${r.day}T${r.hour}:00:01Z`) + 3 * 3600_000).toISOString();
    events.splice(Math.min(at + 1 + distance, events.length), 0, runEvent(r, occurred, changes[k % changes.length]));
  });
  return { events: [...world(), ...events], runs: runs.length };
}

const visibility = ENDPOINTS.find((e) => e.name === 'visibility')!;
const runCount = (db: Db, startDate: string, endDate: string): number => {
  const store = new ReadStore(db);
  const body = db.transaction(() => visibility.build(store, readArgs({ runGroupId: '', startDate, endDate })))() as { run_count: number };
  return body.run_count;
};

t.test('runs sent again with changed facts are counted once by their weeks and months, whatever the batching', async (t) => {
  const { events, runs } = correctedLog();
  const dir = tmpDir('corrections-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = writeNdjson(path.join(dir, 'corrected.ndjson'), events);

  let first: string | null = null;
  for (const batchSize of [1, 2, 3, 5, 8, 13, 40, 100, 10_000]) {
    const { db, projector } = freshDb(t);
    const totals = await replayFiles(db, projector, [file], { batchSize });
    t.equal(totals.deadLettered, 0, `batches of ${batchSize}: no dead letters`);
    t.equal(runCount(db, FIRST, addDays(FIRST, DAYS - 1)), runs, `batches of ${batchSize}: every run counted once over the whole range`);
    const wrong: string[] = [];
    for (let w = 0; w < DAYS; w += 7) {
      const start = addDays(FIRST, w);
      let days = 0;
      for (let d = 0; d < 7; d += 1) days += runCount(db, addDays(start, d), addDays(start, d));
      const week = runCount(db, start, addDays(start, 6));
      if (week !== days || days !== 21) wrong.push(`week of ${start}: ${week}, its days ${days}`);
    }
    for (const [start, end] of [['2027-03-01', '2027-03-31'], ['2027-04-01', '2027-04-04']] as Array<[string, string]>) {
      let days = 0;
      for (let d = start; d <= end; d = addDays(d, 1)) days += runCount(db, d, d);
      if (runCount(db, start, end) !== days) wrong.push(`${start}..${end}: ${runCount(db, start, end)}, its days ${days}`);
    }
    t.same(wrong, [], `batches of ${batchSize}: every week and month is the sum of its days (21 runs a week)`);
    const d = digest(db);
    if (first === null) {
      first = d;
      oracleAggregates(db);
      t.equal(digest(db), d, 'one event per batch: the aggregates the SQL oracle counts from the runs');
    } else {
      t.equal(d, first, `batches of ${batchSize}: the digest of one event per batch`);
    }
  }
});
