// slice_months and slice_month_hits (migration 023): what the writer keeps per month, engine, prompt
// and country is the sum of slice_days / slice_hits over the month's days, whatever the batching and
// whatever corrections moved runs between days, months and countries, and exactly what the
// migration computes from the day rows.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ReadStore, type Db } from '../../src/store';
import { dimsMatching, runTallies, sliceHitsOfDays, sliceMentionsOfDays, sliceSumsOfDays } from '../../src/store/reads';
import { type Ev, resent, run, sliceRuns, W, world } from '../helpers/events';
import { projectBatches, tmpDir } from '../helpers/db';
import { migratedAgain } from '../helpers/migrations';

function events(): Ev[] {
  const [a, b, c, d, e] = sliceRuns();
  return [
    ...world(), a, b, c, d, e, run({ n: 5, status: 'failed' }), run({ n: 6, brand: 3, sentiment: 0.2, competitor: 6, country: 'US', persona: 'Founder' }),
    // Corrections: into the next month and another country; the brand no longer named; failed after
    // all; another persona of the same country (the month row keeps its runs); back a month.
    resent(a, '2026-03-01T00:00:00Z', (x) => { x.completed_at = '2026-02-07T09:00:00Z'; x.country = 'FR'; }),
    resent(b, '2026-03-01T00:00:00Z', (x) => { x.mentions = []; }),
    resent(c, '2026-03-01T00:00:00Z', (x) => { x.status = 'failed'; }),
    resent(e, '2026-03-01T00:00:00Z', (x) => { x.persona = 'Founder'; }),
    resent(d, '2026-03-01T00:00:00Z', (x) => { x.completed_at = '2026-01-20T12:00:00Z'; }),
  ];
}

const SUMS = 'runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n';

/** The month rows by ids, in key order. */
function months(db: Db, table: 'slice_months' | 'slice_month_hits'): unknown[][] {
  const hits = table === 'slice_month_hits';
  return db.prepare(`SELECT p.id, s.month, e.id, q.id, s.country, ${hits ? 'c.id,' : 'brand_runs,'} ${SUMS.split(', ').map((c) => `s.${c}`).join(', ')}
    FROM ${table} s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt
    ${hits ? 'JOIN keys c ON c.n = s.competitor' : ''} ORDER BY 1, 2, 3, 4, 5, 6`).raw().all() as unknown[][];
}

/** The day rows summed per month and country, as the month rows should hold them. */
function summedDays(db: Db, table: 'slice_days' | 'slice_hits'): unknown[][] {
  const hits = table === 'slice_hits';
  return db.prepare(`SELECT p.id, substr(s.day, 1, 8) || '01', e.id, q.id, coalesce(d.country, ''), ${hits ? 'c.id,' : 'sum(s.brand_runs),'}
      ${SUMS.split(', ').map((c) => `sum(s.${c})`).join(', ')}
    FROM ${table} s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt LEFT JOIN dims d ON d.n = s.dims
    ${hits ? 'JOIN keys c ON c.n = s.competitor GROUP BY 1, 2, 3, 4, 5, 6' : 'GROUP BY 1, 2, 3, 4, 5'} ORDER BY 1, 2, 3, 4, 5, 6`).raw().all() as unknown[][];
}

t.test('each month is the sum of its days per country, whatever the batching and the corrections', async (t) => {
  const dir = tmpDir('slice-months-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = events();
  const one = projectBatches(path.join(dir, 'one.db'), [all]);
  const each = projectBatches(path.join(dir, 'each.db'), all.map((e) => [e]));
  t.teardown(() => { one.close(); each.close(); });
  for (const db of [one, each]) {
    t.same(months(db, 'slice_months'), summedDays(db, 'slice_days'), 'brand: the days summed');
    t.same(months(db, 'slice_month_hits'), summedDays(db, 'slice_hits'), 'competitors: the days summed');
  }
  t.same(months(each, 'slice_months'), months(one, 'slice_months'), 'one batch or one event a batch: the same brand rows');
  t.same(months(each, 'slice_month_hits'), months(one, 'slice_month_hits'), 'one batch or one event a batch: the same competitor rows');

  const brand = months(one, 'slice_months');
  // Run 1 moved to February (FR); run 4 back to January (no country); run 3 failed: February's US
  // engine-B row is gone, and no row is left without runs.
  t.ok(brand.some((r) => r[1] === '2026-02-01' && r[4] === 'FR'), 'the run moved to February counts there, under its new country');
  t.notOk(brand.some((r) => r[1] === '2026-01-01' && r[4] === 'FR'), 'and not in January');
  t.notOk(brand.some((r) => r[2] === W.engineB), 'the run that failed after all left no row');
  t.notOk(brand.some((r) => (r[6] as number) <= 0), 'no row is left without runs');
  t.equal(brand.reduce((n, r) => n + (r[6] as number), 0), 5, 'five succeeded runs');

  // The migration computes the same rows from the day rows.
  const migrated = migratedAgain(one, 22);
  t.teardown(() => migrated.close());
  t.same(months(migrated, 'slice_months'), months(each, 'slice_months'), "migration 023 gives the writer's brand rows");
  t.same(months(migrated, 'slice_month_hits'), months(each, 'slice_month_hits'), "migration 023 gives the writer's competitor rows");
});

t.test('a range read with its whole months from the month rows gives what its days give', async (t) => {
  const dir = tmpDir('slice-months-read-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = projectBatches(path.join(dir, 'w.db'), [events()]);
  t.teardown(() => db.close());
  const store = new ReadStore(db);
  const sorted = <T>(rows: Iterable<T>): T[] => [...rows].map((r) => JSON.stringify(r)).sort().map((r) => JSON.parse(r) as T);
  const us = JSON.stringify(dimsMatching(store, W.project, ['us'], null, null));
  const tracked = [W.competitor];
  t.ok(JSON.parse(us).length > 0, 'the US names dims rows');
  // A whole month alone; two; whole months with ragged edges; ragged only; across a year's end.
  for (const [start, end] of [['2026-01-01', '2026-01-31'], ['2026-01-01', '2026-02-28'], ['2025-12-15', '2026-02-03'], ['2026-01-05', '2026-02-10'],
    ['2026-01-31', '2026-02-01'], ['2025-11-01', '2026-03-31']] as const) {
    const range = `${start}..${end}`;
    for (const dims of [null, us]) {
      const filtered = dims === null ? 'all runs' : 'the US';
      for (const g of [{ period: null, dimensions: [] }, { period: 'month', dimensions: [] }, { period: null, dimensions: ['country'] },
        { period: 'month', dimensions: ['country'] }] as const) {
        t.same(sorted(sliceSumsOfDays(store, W.project, start, end, g, dims, true)), sorted(sliceSumsOfDays(store, W.project, start, end, g, dims, false)),
          `sums by ${g.period ?? 'range'} and ${g.dimensions.join(',') || 'no dimension'}, ${filtered}, ${range}`);
      }
      t.same(sorted(sliceHitsOfDays(store, W.project, start, end, false, dims, true)), sorted(sliceHitsOfDays(store, W.project, start, end, false, dims, false)),
        `competitor sums, ${filtered}, ${range}`);
      t.same(sorted(sliceMentionsOfDays(store, W.project, start, end, 'month', tracked, dims, true)),
        sorted(sliceMentionsOfDays(store, W.project, start, end, 'month', tracked, dims, false)), `mentions by month, ${filtered}, ${range}`);
    }
    // The signals' tallies (always by month where whole) against slice_days grouped by hand.
    const tallies = runTallies(store, W.project, start, end);
    const days = db.prepare(`SELECT e.id, p.id, coalesce(d.country, ''), sum(s.runs), sum(s.brand_runs) FROM slice_days s
      JOIN keys e ON e.n = s.engine JOIN keys p ON p.n = s.prompt LEFT JOIN dims d ON d.n = s.dims
      WHERE s.project = (SELECT n FROM keys WHERE id = ?) AND s.day BETWEEN ? AND ? GROUP BY 1, 2, 3`).raw().all(W.project, start, end);
    t.same(sorted(tallies.runs), sorted(days), `signals' run tallies, ${range}`);
    const hits = db.prepare(`SELECT e.id, p.id, coalesce(d.country, ''), c.id, sum(s.runs) FROM slice_hits s
      JOIN keys e ON e.n = s.engine JOIN keys p ON p.n = s.prompt JOIN keys c ON c.n = s.competitor LEFT JOIN dims d ON d.n = s.dims
      WHERE s.project = (SELECT n FROM keys WHERE id = ?) AND s.day BETWEEN ? AND ? GROUP BY 1, 2, 3, 4`).raw().all(W.project, start, end);
    t.same(sorted(tallies.hits), sorted(hits), `signals' competitor tallies, ${range}`);
  }
});
