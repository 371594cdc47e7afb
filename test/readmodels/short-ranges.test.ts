// A range of a day or two is read from its day rows by number (sums.ts dayRowSums), a longer one from the
// running totals, a whole ISO week from its roll-up: on each side of those thresholds the report's sums
// are what the range's days add up to, with and without an engine filter, and a range's body is the
// same bytes whichever read answers it.
import path from 'node:path';
import t from 'tap';
import { openDb, Projector, ReadStore, type Db } from '../../src/store';
import { ENDPOINTS, type ReadArgs } from '../../src/readmodels';
import { promptSums } from '../../src/readmodels/sums';
import { queryArgs } from '../../src/serve/request/params';
import { asSource, type Ev, run, W, world } from '../helpers/events';
import { projectBatches, tmpDir } from '../helpers/db';

// 2026-02-02 is a Monday: the week 02-02..02-08 has a roll-up row.
function events(): Ev[] {
  const days = ['2026-01-31', '2026-02-01', '2026-02-02', '2026-02-03', '2026-02-04', '2026-02-06', '2026-02-08', '2026-02-09'];
  const out: Ev[] = [...world()];
  let n = 1;
  days.forEach((day, i) => {
    out.push(run({ n: n++, day, brand: 1 + (i % 3), sentiment: 0.25, competitor: i % 2 ? 2 : undefined, country: 'US' }));
    out.push(run({ n: n++, day, engine: W.engineB, prompt: W.prompt2, brand: i % 2 ? undefined : 4, competitor: 1 + (i % 4), persona: 'CTO' }));
    out.push(run({ n: n++, day, engine: W.engineB, competitor: 3 }));
    if (i % 3 === 0) out.push(run({ n: n++, day, prompt: W.prompt2, status: 'failed', brand: 1 }));
  });
  return out;
}

const SUMS = 'sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)';

/** The range's days added up in SQL: [engine, prompt, runs, mentioned, ...] and [prompt, competitor, mentioned, ...], in id order. */
function daysAddedUp(db: Db, start: string, end: string, engine: string | null): { brand: unknown[][]; competitors: unknown[][] } {
  const only = engine === null ? '' : ' AND e.id = ?';
  const bind = engine === null ? [W.project, start, end] : [W.project, start, end, engine];
  return {
    brand: db.prepare(`SELECT e.id, p.id, sum(s.runs), sum(s.brand_runs), ${SUMS} FROM slice_days s JOIN keys e ON e.n = s.engine JOIN keys p ON p.n = s.prompt
      WHERE s.project = (SELECT n FROM keys WHERE id = ?) AND s.day BETWEEN ? AND ?${only} GROUP BY 1, 2 ORDER BY 1, 2`).raw().all(...bind) as unknown[][],
    competitors: db.prepare(`SELECT c.id, p.id, sum(s.runs), ${SUMS} FROM slice_hits s JOIN keys e ON e.n = s.engine JOIN keys p ON p.n = s.prompt JOIN keys c ON c.n = s.competitor
      WHERE s.project = (SELECT n FROM keys WHERE id = ?) AND s.day BETWEEN ? AND ?${only} GROUP BY 1, 2 ORDER BY 1, 2`).raw().all(...bind) as unknown[][],
  };
}

t.test('a short range, a long one and a whole week: the sums of their days, the same bytes whichever read', async (t) => {
  const dir = tmpDir('short-ranges-');
  const one = projectBatches(path.join(dir, 'one.db'), [events()]);
  const each = projectBatches(path.join(dir, 'each.db'), events().map((e) => [e]));
  t.teardown(() => { one.close(); each.close(); });
  const store = new ReadStore(one);
  const eachStore = new ReadStore(each);
  const visibility = ENDPOINTS.find((e) => e.name === 'visibility')!;
  const args = (start: string, end: string, engineIds: string[] | null): ReadArgs => ({
    accountId: W.account, projectId: W.project, runGroupId: '', windowDays: 7, ...queryArgs({}, visibility, 7), startDate: start, endDate: end, engineIds,
  });
  // One day, two (day rows); three, six, eight (running totals); the whole week (its roll-up); a day with no runs.
  const ranges = [['2026-02-03', '2026-02-03'], ['2026-02-01', '2026-02-02'], ['2026-01-31', '2026-02-02'], ['2026-02-03', '2026-02-08'],
    ['2026-02-02', '2026-02-09'], ['2026-02-02', '2026-02-08'], ['2026-02-05', '2026-02-05']] as const;
  for (const [start, end] of ranges) {
    for (const engine of [null, W.engineB]) {
      const range = `${start}..${end}${engine === null ? '' : ', one engine'}`;
      const sums = promptSums(store, { projectId: W.project, start, end, engineIds: engine === null ? null : [engine], filter: null });
      const want = daysAddedUp(one, start, end, engine);
      t.same(sums.brand.map((r) => [r.engine_id, r.prompt_id, r.runs, r.mentioned, r.position_sum, r.rr_fixed, r.sentiment_fixed, r.sentiment_n]), want.brand,
        `the brand's sums per pair are the days', ${range}`);
      t.same(sums.competitors.map((r) => [r.competitor_id, r.prompt_id, r.mentioned, r.position_sum, r.rr_fixed, r.sentiment_fixed, r.sentiment_n]), want.competitors,
        `the competitors' sums per prompt are the days', ${range}`);
      const body = JSON.stringify(visibility.build(store, args(start, end, engine === null ? null : [engine])));
      t.equal(JSON.stringify(visibility.build(eachStore, args(start, end, engine === null ? null : [engine]))), body, `one batch or one event a batch: the same bytes, ${range}`);
    }
  }
  // The two sides of each threshold side by side: a range is the sum of its parts whichever read each part takes.
  const brandOf = (start: string, end: string): number => promptSums(store, { projectId: W.project, start, end, engineIds: null, filter: null }).brand.reduce((n, r) => n + r.mentioned, 0);
  t.equal(brandOf('2026-01-31', '2026-02-02'), brandOf('2026-01-31', '2026-02-01') + brandOf('2026-02-02', '2026-02-02'), 'three days (totals) = two days + one (day rows)');
  t.equal(brandOf('2026-02-02', '2026-02-09'), brandOf('2026-02-02', '2026-02-08') + brandOf('2026-02-09', '2026-02-09'), 'eight days (totals) = the week (roll-up) + a day');
  t.ok(brandOf('2026-02-03', '2026-02-03') > 0 && brandOf('2026-02-05', '2026-02-05') === 0, 'a day with runs has sums, a day without none');
});

t.test("a whole week still pending (a live project's current week, its roll-up not written) is read from the running totals: the same bytes", async (t) => {
  const dir = tmpDir('short-ranges-pending-');
  const upToSunday = events().filter((e) => !JSON.stringify(e).includes('2026-02-09'));
  const settled = projectBatches(path.join(dir, 'settled.db'), [upToSunday]);
  const live = openDb(path.join(dir, 'live.db'));
  t.teardown(() => { settled.close(); live.close(); });
  new Projector(live).applyBatch(asSource(upToSunday, 'test', 1));
  t.ok(live.prepare("SELECT count(*) FROM rollup_pending WHERE grain = 'week' AND day = '2026-02-02'").pluck().get() as number > 0, 'the week is pending on the live file');
  t.equal(settled.prepare("SELECT count(*) FROM rollup_pending").pluck().get(), 0, 'and written on the settled one');
  const visibility = ENDPOINTS.find((e) => e.name === 'visibility')!;
  for (const engineIds of [null, [W.engineB]]) {
    const args: ReadArgs = { accountId: W.account, projectId: W.project, runGroupId: '', windowDays: 7, ...queryArgs({}, visibility, 7), startDate: '2026-02-02', endDate: '2026-02-08', engineIds };
    t.equal(JSON.stringify(visibility.build(new ReadStore(live), args)), JSON.stringify(visibility.build(new ReadStore(settled), args)),
      `pending or written, the week's report is the same bytes${engineIds ? ', one engine' : ''}`);
  }
});
