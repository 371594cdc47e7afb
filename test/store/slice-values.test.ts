// slice_values and slice_value_months (migration 026): what the writer keeps per day or
// month, engine and one dimension's value is the sum of slice_days over its prompts and dims, whatever
// the batching and the corrections, and what the migration computes; a read of them, with the prompts
// that do not count taken away, gives what slice_days' counted rows give.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ReadStore, type Db } from '../../src/store';
import { sliceValueSums, uncountedPrompts, type ValueDimension, type ValueGrouping } from '../../src/store/reads';
import { type Ev, id, resent, run, sliceRuns, W, world } from '../helpers/events';
import { projectBatches, tmpDir } from '../helpers/db';
import { migratedAgain } from '../helpers/migrations';

/** A prompt no upsert names (its runs never count). */
const STRAY = id(9, 'ffffffff');

function events(): Ev[] {
  const [a, b, c, d, e] = sliceRuns();
  return [
    ...world(), a, b, c, d, e, run({ n: 5, status: 'failed' }), run({ n: 6, brand: 3, sentiment: 0.2, competitor: 6, country: 'US', persona: 'Founder' }),
    run({ n: 8, brand: 2, day: '2026-01-20', prompt: W.prompt2, country: 'US', persona: 'CTO', model: 'gpt-x' }),
    run({ n: 9, brand: 1, day: '2026-02-10', prompt: STRAY, country: 'DE', persona: 'CTO' }),
    run({ n: 10, day: '2025-12-30', prompt: W.prompt2, engine: W.engineB, country: 'FR', model: 'sonar' }),
    // Corrections: into the next month and another country; the brand no longer named; failed after
    // all; another persona; back a month.
    resent(a, '2026-03-01T00:00:00Z', (x) => { x.completed_at = '2026-02-07T09:00:00Z'; x.country = 'FR'; }),
    resent(b, '2026-03-01T00:00:00Z', (x) => { x.mentions = []; }),
    resent(c, '2026-03-01T00:00:00Z', (x) => { x.status = 'failed'; }),
    resent(e, '2026-03-01T00:00:00Z', (x) => { x.persona = 'Founder'; }),
    resent(d, '2026-03-01T00:00:00Z', (x) => { x.completed_at = '2026-01-20T12:00:00Z'; }),
  ];
}

const SUMS = ['runs', 'brand_runs', 'position_sum', 'rr_fixed', 'sentiment_fixed', 'sentiment_n'];
const VALUE = ["''", "coalesce(d.country, '')", "coalesce(d.persona, '')", "coalesce(d.model, '')"];

/** The value rows by ids, in key order. */
function values(db: Db, table: 'slice_values' | 'slice_value_months'): unknown[][] {
  const period = table === 'slice_values' ? 'day' : 'month';
  return db.prepare(`SELECT p.id, s.dimension, s.${period}, e.id, s.value, ${SUMS.map((c) => `s.${c}`).join(', ')}
    FROM ${table} s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine ORDER BY 1, 2, 3, 4, 5`).raw().all() as unknown[][];
}

/** slice_days summed per period, engine and value, as the value rows should hold them. */
function summedDays(db: Db, monthly: boolean): unknown[][] {
  return VALUE.flatMap((value, dimension) => db.prepare(`SELECT p.id, ${dimension}, ${monthly ? "substr(s.day, 1, 8) || '01'" : 's.day'}, e.id, ${value},
      ${SUMS.map((c) => `sum(s.${c})`).join(', ')}
    FROM slice_days s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine LEFT JOIN dims d ON d.n = s.dims
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`).raw().all() as unknown[][]);
}

t.test('each value row is the sum of its day rows, whatever the batching and the corrections; the migration gives the same', async (t) => {
  const dir = tmpDir('slice-values-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = events();
  const one = projectBatches(path.join(dir, 'one.db'), [all]);
  const each = projectBatches(path.join(dir, 'each.db'), all.map((e) => [e]));
  t.teardown(() => { one.close(); each.close(); });
  for (const db of [one, each]) {
    t.same(values(db, 'slice_values'), summedDays(db, false), 'per day: the day rows summed');
    t.same(values(db, 'slice_value_months'), summedDays(db, true), 'per month: the day rows summed');
  }
  for (const table of ['slice_values', 'slice_value_months'] as const) t.same(values(each, table), values(one, table), `${table}: the same rows whatever the batching`);
  const days = values(one, 'slice_values');
  t.notOk(days.some((r) => (r[5] as number) <= 0), 'no row is left without runs');
  t.notOk(days.some((r) => r[3] === W.engineB && r[2] === '2026-02-02'), 'the run that failed after all left no row');
  t.ok(days.some((r) => r[1] === 1 && r[2] === '2026-02-07' && r[4] === 'FR'), 'the run moved to February counts there, under its new country');

  const migrated = migratedAgain(one, 25);
  t.teardown(() => migrated.close());
  for (const table of ['slice_values', 'slice_value_months'] as const) t.same(values(migrated, table), values(each, table), `migration 026 gives the writer's ${table}`);
});

t.test('a read of the value rows, the prompts that do not count taken away, gives what the counted day rows give', async (t) => {
  const dir = tmpDir('slice-values-read-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = projectBatches(path.join(dir, 'w.db'), [events()]);
  t.teardown(() => db.close());
  const store = new ReadStore(db);
  const sorted = (rows: Iterable<unknown>): unknown[] => [...rows].map((r) => JSON.stringify(r)).sort().map((r) => JSON.parse(r) as unknown);
  const period = { day: 's.day', week: "date(s.day, 'weekday 0', '-6 days')", month: "substr(s.day, 1, 8) || '01'" };
  const expected = (start: string, end: string, g: ValueGrouping, engines: string[], counted: string[]): unknown[] => db.prepare(`SELECT
      ${g.period === null ? "''" : period[g.period]}, ${g.byEngine ? 'e.id' : "''"}, ${VALUE[g.dimension]}, ${SUMS.map((c) => `sum(s.${c})`).join(', ')}
    FROM slice_days s JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt LEFT JOIN dims d ON d.n = s.dims
    WHERE s.project = (SELECT n FROM keys WHERE id = ?) AND s.day BETWEEN ? AND ?
      AND e.id IN (SELECT value FROM json_each(?)) AND q.id IN (SELECT value FROM json_each(?))
    GROUP BY 1, 2, 3`).raw().all(W.project, start, end, JSON.stringify(engines), JSON.stringify(counted));
  // Every prompt counted; prompt 2 deleted (and the stray one, never upserted); only prompt 1 (a segment filter's shape).
  const countings: Array<[string, string[]]> = [['every prompt', [W.prompt1, W.prompt2, STRAY]], ['no stray prompt', [W.prompt1, W.prompt2]], ['prompt 1 alone', [W.prompt1]]];
  const uncounted = uncountedPrompts(store, W.project, [W.prompt1]);
  t.equal(uncounted.length, 2, 'prompt 2 and the stray prompt do not count with prompt 1 alone');
  t.same(uncountedPrompts(store, W.project, [W.prompt1, W.prompt2, STRAY]), [], 'every prompt with runs counted: none to take away');
  for (const [start, end] of [['2026-01-01', '2026-01-31'], ['2025-12-15', '2026-02-03'], ['2026-01-05', '2026-02-10'], ['2025-11-01', '2026-03-31']] as const) {
    for (const [label, counted] of countings) {
      for (const engines of [[W.engineA, W.engineB], [W.engineA]]) {
        for (const p of [null, 'day', 'week', 'month'] as const) {
          for (const dimension of [0, 1, 2, 3] as ValueDimension[]) {
            for (const byEngine of [false, true]) {
              const g: ValueGrouping = { period: p, dimension, byEngine };
              // A group left with no runs once the uncounted prompts are taken away is no row: the expected rows are the counted ones.
              t.same(sorted(sliceValueSums(store, W.project, start, end, g, engines, uncountedPrompts(store, W.project, counted))),
                sorted(expected(start, end, g, engines, counted)),
                `${start}..${end}, ${label}, ${engines.length} engines, by ${p ?? 'range'}, dimension ${dimension}${byEngine ? ', by engine' : ''}`);
            }
          }
        }
      }
    }
  }
});
