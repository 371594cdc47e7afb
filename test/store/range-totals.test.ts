// range_totals and range_hit_totals (migration 025): what the writer keeps per pair (and per prompt
// and competitor) and day is the running total of slice_days / slice_hits up to that day, a row for
// each day with runs, whatever the batching and whatever corrections moved runs back or forth between
// days; exactly what the migration computes; and a range read from them is what its days add up to.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { openDb, Projector, ReadStore, type Db } from '../../src/store';
import { hitTotalNumbers, keyNumbers, pairTotalNumbers, totalsEngines } from '../../src/store/reads';
import { promptSums } from '../../src/readmodels/sums';
import { asSource, type Ev, resent, run, sliceRuns, W, world } from '../helpers/events';
import { projectBatches, tmpDir } from '../helpers/db';
import { migratedAgain } from '../helpers/migrations';

function events(): Ev[] {
  const [a, b, c, d, e] = sliceRuns();
  const f = run({ n: 8, brand: 5, competitor: 4, day: '2026-03-10', engine: W.engineB });
  const g = run({ n: 9, brand: 2, competitor: 2, day: '2026-01-02' });
  return [
    ...world(), a, b, c, d, e, f, g, run({ n: 5, status: 'failed' }), run({ n: 6, brand: 3, sentiment: 0.2, competitor: 6, country: 'US', persona: 'Founder' }),
    // Corrections: forward a month; the brand no longer named; failed after all (a day's only run
    // of its pair); another persona; back a month (before rows already written); the first day's run gone.
    resent(a, '2026-03-01T00:00:00Z', (x) => { x.completed_at = '2026-02-07T09:00:00Z'; x.country = 'FR'; }),
    resent(b, '2026-03-01T00:00:00Z', (x) => { x.mentions = []; }),
    resent(c, '2026-03-01T00:00:00Z', (x) => { x.status = 'failed'; }),
    resent(e, '2026-03-01T00:00:00Z', (x) => { x.persona = 'Founder'; }),
    resent(d, '2026-03-01T00:00:00Z', (x) => { x.completed_at = '2026-01-20T12:00:00Z'; }),
    resent(f, '2026-03-12T00:00:00Z', (x) => { x.completed_at = '2026-01-03T12:00:00Z'; }),
    resent(g, '2026-03-12T00:00:00Z', (x) => { x.status = 'failed'; }),
  ];
}

const SUMS = ['position_sum', 'rr_fixed', 'sentiment_fixed', 'sentiment_n'];

/** The running-total rows by ids, in key order. */
function totals(db: Db, table: 'range_totals' | 'range_hit_totals'): unknown[][] {
  const pair = table === 'range_totals';
  return db.prepare(`SELECT p.id, ${pair ? 'e.id, q.id' : 'q.id, c.id'}, s.day, s.runs, ${pair ? 's.brand_runs, ' : ''}${SUMS.map((c) => `s.${c}`).join(', ')}
    FROM ${table} s JOIN keys p ON p.n = s.project ${pair ? 'JOIN keys e ON e.n = s.engine' : 'JOIN keys c ON c.n = s.competitor'} JOIN keys q ON q.n = s.prompt
    ORDER BY 1, 2, 3, 4`).raw().all() as unknown[][];
}

/** The day rows summed up to each day with runs, as the running totals should hold them. */
function runningDays(db: Db, table: 'slice_days' | 'slice_hits'): unknown[][] {
  const pair = table === 'slice_days';
  const cols = ['runs', ...(pair ? ['brand_runs'] : []), ...SUMS];
  return db.prepare(`SELECT k1, k2, k3, day, ${cols.map((c) => `sum(${c}) OVER w`).join(', ')} FROM (
      SELECT p.id AS k1, ${pair ? 'e.id AS k2, q.id AS k3' : 'q.id AS k2, c.id AS k3'}, s.day, ${cols.map((c) => `sum(s.${c}) AS ${c}`).join(', ')}
      FROM ${table} s JOIN keys p ON p.n = s.project ${pair ? 'JOIN keys e ON e.n = s.engine' : 'JOIN keys c ON c.n = s.competitor'} JOIN keys q ON q.n = s.prompt
      GROUP BY 1, 2, 3, 4)
    WINDOW w AS (PARTITION BY k1, k2, k3 ORDER BY day) ORDER BY 1, 2, 3, 4`).raw().all() as unknown[][];
}

t.test('the running totals are the days added up, whatever the batching and the corrections, and the migration computes them', async (t) => {
  const dir = tmpDir('range-totals-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = events();
  const one = projectBatches(path.join(dir, 'one.db'), [all]);
  const each = projectBatches(path.join(dir, 'each.db'), all.map((e) => [e]));
  // Halves: the second half's corrections move runs of days the first wrote, and to days before them.
  const half = projectBatches(path.join(dir, 'half.db'), [all.slice(0, 12), all.slice(12)]);
  t.teardown(() => { one.close(); each.close(); half.close(); });
  for (const [name, db] of [['one batch', one], ['one event a batch', each], ['two batches', half]] as const) {
    t.same(totals(db, 'range_totals'), runningDays(db, 'slice_days'), `${name}: the pairs' totals are their days added up`);
    t.same(totals(db, 'range_hit_totals'), runningDays(db, 'slice_hits'), `${name}: the competitors' totals are their days added up, over every engine`);
  }
  t.same(totals(each, 'range_totals'), totals(one, 'range_totals'), 'one batch or one event a batch: the same rows');
  t.same(totals(half, 'range_hit_totals'), totals(one, 'range_hit_totals'), 'one batch or two: the same competitor rows');

  const pairs = totals(one, 'range_totals');
  t.ok(pairs.length >= 4, 'rows on several days');
  t.notOk(pairs.some((r) => r[3] === '2026-01-02'), 'the day whose only run failed after all has no row');
  t.ok(pairs.some((r) => r[1] === W.engineB && r[3] === '2026-01-03'), 'the run moved back to January is there');
  t.notOk(pairs.some((r) => r[1] === W.engineB && r[3] === '2026-03-10'), 'and not on its old day');
  t.equal(totals(one, 'range_hit_totals').filter((r) => r[3] === '2026-01-02').length, 0, 'nor does that day have competitor rows');

  const migrated = migratedAgain(one, 24);
  t.teardown(() => migrated.close());
  t.same(totals(migrated, 'range_totals'), totals(each, 'range_totals'), "migration 025 gives the writer's rows");
  t.same(totals(migrated, 'range_hit_totals'), totals(each, 'range_hit_totals'), "migration 025 gives the writer's competitor rows");
});

t.test('two writers taking turns on one file leave the rows one writer leaves', async (t) => {
  const dir = tmpDir('range-totals-two-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = events();
  const one = projectBatches(path.join(dir, 'one.db'), [all]);
  // Each writer's last rows go stale when the other commits: it must not append from them.
  const file = path.join(dir, 'two.db');
  const a = openDb(file);
  const b = openDb(file);
  t.teardown(() => { one.close(); a.close(); b.close(); });
  const writers = [new Projector(a), new Projector(b)];
  all.forEach((e, i) => writers[i % 2]!.applyBatch(asSource([e], 'test', i + 1)));
  for (const w of writers) w.settle();
  t.same(totals(a, 'range_totals'), totals(one, 'range_totals'), 'the pairs\' totals');
  t.same(totals(a, 'range_hit_totals'), totals(one, 'range_hit_totals'), 'the competitors\' totals');
});

t.test('a range read from the running totals is what its days add up to', async (t) => {
  const dir = tmpDir('range-totals-read-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = projectBatches(path.join(dir, 'w.db'), events().map((e) => [e]));
  t.teardown(() => db.close());
  const store = new ReadStore(db);
  const sorted = <T>(rows: Iterable<T>): T[] => [...rows].map((r) => JSON.stringify(r)).sort().map((r) => JSON.parse(r) as T);
  t.same(sorted(totalsEngines(store, W.project)), [W.engineA, W.engineB].sort(), 'the engines with runs');
  t.same(totalsEngines(store, W.otherProject), [], 'none for a project without runs');
  const engines = [W.engineA, W.engineB];
  const prompts = [W.prompt1, W.prompt2];
  // The reads are keyed by number: asked and answered by id here, as the days below are.
  const numberOf = keyNumbers(store, [...engines, ...prompts, W.competitor]);
  const idOf = new Map([...numberOf].map(([id, n]) => [n, id]));
  const numbers = (ids: string[]): number[] => ids.map((id) => numberOf.get(id)!);
  const byIds = <R extends [number, number, ...number[]]>(rows: R[]): unknown[][] => rows.map(([a, b, ...sums]) => [idOf.get(a), idOf.get(b), ...sums]);
  const pairTotals = (start: string, end: string, es: string[], ps: string[]): unknown[][] => byIds(pairTotalNumbers(store, W.project, start, end, numbers(es), numbers(ps)));
  const hitTotals = (start: string, end: string, ps: string[], cs: string[]): unknown[][] => byIds(hitTotalNumbers(store, W.project, start, end, numbers(ps), numbers(cs)));
  for (const [start, end] of [['2026-01-01', '2026-01-31'], ['2026-01-03', '2026-01-03'], ['2026-01-04', '2026-02-06'], ['2026-02-07', '2026-12-31'],
    ['2025-01-01', '2025-12-31'], ['2026-02-04', '2026-02-06'], ['2025-11-01', '2026-03-31']] as const) {
    const range = `${start}..${end}`;
    const days = db.prepare(`SELECT e.id, p.id, sum(s.runs), sum(s.brand_runs), ${SUMS.map((c) => `sum(s.${c})`).join(', ')} FROM slice_days s
      JOIN keys e ON e.n = s.engine JOIN keys p ON p.n = s.prompt WHERE s.project = (SELECT n FROM keys WHERE id = ?) AND s.day BETWEEN ? AND ? GROUP BY 1, 2`)
      .raw().all(W.project, start, end) as unknown[][];
    t.same(sorted(pairTotals(start, end, engines, prompts)), sorted(days), `pairs, ${range}`);
    t.same(sorted(pairTotals(start, end, [W.engineB], [W.prompt1])), sorted(days.filter((r) => r[0] === W.engineB && r[1] === W.prompt1)),
      `only the pairs asked for, ${range}`);
    const hits = db.prepare(`SELECT p.id, c.id, sum(s.runs), ${SUMS.map((c) => `sum(s.${c})`).join(', ')} FROM slice_hits s
      JOIN keys c ON c.n = s.competitor JOIN keys p ON p.n = s.prompt WHERE s.project = (SELECT n FROM keys WHERE id = ?) AND s.day BETWEEN ? AND ? GROUP BY 1, 2`)
      .raw().all(W.project, start, end);
    t.same(sorted(hitTotals(start, end, prompts, [W.competitor])), sorted(hits), `competitors over every engine, ${range}`);
    // The report's sums: the same whether the competitors come from the totals or (an engine filter naming every engine) the same.
    const all = promptSums(store, { projectId: W.project, start, end, engineIds: null, filter: null });
    t.same(promptSums(store, { projectId: W.project, start, end, engineIds: engines, filter: null }), all, `an engine filter naming every engine changes nothing, ${range}`);
    const onlyA = promptSums(store, { projectId: W.project, start, end, engineIds: [W.engineA], filter: null });
    t.same(onlyA.brand, all.brand.filter((r) => r.engine_id === W.engineA), `one engine: its pairs, ${range}`);
  }
});
