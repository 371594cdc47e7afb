// The writer's derived tables of 024-025 when a batch moves more keys than one multi-row statement
// holds (range-totals.ts and slice-dims.ts write 64 rows a statement, the rest one by one): the same
// rows whatever the batching, in day order or with corrections into the past, and the running
// totals still the days added up.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Db } from '../../src/store';
import { type Ev, id, resent, run, W, world } from '../helpers/events';
import { projectBatches, tmpDir } from '../helpers/db';

const PROMPTS = 70;
const DAYS = ['2026-01-05', '2026-01-06', '2026-01-08'];
const COUNTRIES = ['US', 'DE', 'FR'];

function events(): Ev[] {
  const runs: Ev[] = [];
  let n = 0;
  for (const day of DAYS) {
    for (let p = 0; p < PROMPTS; p++) {
      for (const engine of [W.engineA, W.engineB]) {
        n += 1;
        runs.push(run({ n, day, engine, prompt: id(100 + p, 'ffffffff'), brand: 1 + (n % 4), sentiment: (n % 5) / 10, competitor: 1 + (n % 3), country: COUNTRIES[n % 3] }));
      }
    }
  }
  // Corrections into the past and out of it, for many keys at once: a third of the last day's runs
  // moved to the first day, another third failed after all.
  const last = runs.slice(-2 * PROMPTS);
  const corrections = last.flatMap((e, i) => {
    if (i % 3 === 0) return [resent(e, '2026-03-01T00:00:00Z', (x) => { x.completed_at = '2026-01-05T18:00:00Z'; x.country = 'JP'; })];
    if (i % 3 === 1) return [resent(e, '2026-03-01T00:00:00Z', (x) => { x.status = 'failed'; })];
    return [];
  });
  return [...world(), ...runs, ...corrections];
}

/** A table's rows in key order (every table here is keyed by its first 2-4 columns; the key numbers are the same in each file: the same events). */
const rows = (db: Db, table: string): unknown[][] => {
  const keyColumns = table === 'slice_dims' ? 2 : table === 'slice_pairs' ? 3 : table === 'slice_days' ? 5 : 4;
  return db.prepare(`SELECT * FROM ${table} ORDER BY ${Array.from({ length: keyColumns }, (_, i) => i + 1).join(', ')}`).raw().all() as unknown[][];
};

/** slice_days summed per pair and day, added up over the days, as range_totals should hold them. */
function runningDays(db: Db): unknown[][] {
  return db.prepare(`SELECT project, engine, prompt, day, sum(r) OVER w, sum(b) OVER w, sum(p) OVER w FROM (
      SELECT project, engine, prompt, day, sum(runs) AS r, sum(brand_runs) AS b, sum(position_sum) AS p FROM slice_days GROUP BY 1, 2, 3, 4)
    WINDOW w AS (PARTITION BY project, engine, prompt ORDER BY day) ORDER BY 1, 2, 3, 4`).raw().all() as unknown[][];
}

t.test('batches moving more keys than a statement holds leave the rows one event a batch leaves', async (t) => {
  const dir = tmpDir('writer-many-keys-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = events();
  const worldEnd = world().length;
  const one = projectBatches(path.join(dir, 'one.db'), [all]);
  const each = projectBatches(path.join(dir, 'each.db'), all.map((e) => [e]));
  // A day's runs over two batches (the second adds to rows the first appended), then the corrections alone.
  const split = worldEnd + PROMPTS;
  const chunks = projectBatches(path.join(dir, 'chunks.db'), [all.slice(0, split), all.slice(split, all.length - 2 * 47), all.slice(all.length - 2 * 47)]);
  t.teardown(() => { one.close(); each.close(); chunks.close(); });

  const pairs = rows(one, 'range_totals');
  t.ok(pairs.length > 3 * 64, `more rows than a statement holds: ${pairs.length}`);
  t.ok(rows(one, 'range_hit_totals').length > 64, 'and competitor rows');
  t.ok(rows(one, 'slice_pair_dims').length > 64, 'and pair x dims rows');
  for (const table of ['range_totals', 'range_hit_totals', 'slice_dims', 'slice_pairs', 'slice_pair_dims', 'slice_days']) {
    t.same(rows(one, table), rows(each, table), `${table}: one batch or one event a batch`);
    t.same(rows(chunks, table), rows(each, table), `${table}: three batches or one event a batch`);
  }
  for (const [name, db] of [['one batch', one], ['three batches', chunks], ['one event a batch', each]] as const) {
    t.same(rows(db, 'range_totals').map((r) => r.slice(0, 7)), runningDays(db), `${name}: the pairs' totals are their days added up`);
  }
  // The corrections left a third of the last day's runs, each its own pair: those pairs' rows only.
  t.equal(pairs.filter((r) => r[3] === '2026-01-08').length, Math.floor((2 * PROMPTS) / 3), "the last day's rows: the pairs with a run left");
});
