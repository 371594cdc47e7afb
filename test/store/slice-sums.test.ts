// slice_days and slice_hits (migration 022): what the writer keeps per day, engine, prompt and
// dimensions is the sum of the stored succeeded runs, whatever the batching and whatever corrections
// superseded runs on the way, and exactly what the migration computes from the runs.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Db } from '../../src/store';
import { type Ev, resent, run, W, world } from '../helpers/events';
import { projectBatches, tmpDir } from '../helpers/db';
import { migratedAgain } from '../helpers/migrations';

function events(): Ev[] {
  const a = run({ n: 1, brand: 2, sentiment: 0.35, competitor: 3, country: 'US', persona: 'Founder' });
  const b = run({ n: 2, brand: 7, sentiment: -0.1, country: 'DE' });
  const c = run({ n: 3, competitor: 1, day: '2026-01-06', engine: W.engineB });
  const d = run({ n: 4, brand: 1, day: '2026-01-06', prompt: W.prompt2, model: 'gpt-x' });
  return [
    ...world(), a, b, c, d, run({ n: 5, status: 'failed' }), run({ n: 6, brand: 3, sentiment: 0.2, competitor: 6, country: 'US', persona: 'Founder' }),
    // Corrections: another day and country; the brand no longer named; failed after all; moved to another prompt and back.
    resent(a, '2026-02-01T00:00:00Z', (x) => { x.completed_at = '2026-01-07T09:00:00Z'; x.country = 'FR'; }),
    resent(b, '2026-02-01T00:00:00Z', (x) => { x.mentions = []; }),
    resent(c, '2026-02-01T00:00:00Z', (x) => { x.status = 'failed'; }),
    resent(d, '2026-02-01T00:00:00Z', (x) => { x.prompt_id = W.prompt1; }),
    resent(d, '2026-02-02T00:00:00Z', (x) => { x.prompt_id = W.prompt2; x.persona = 'CTO'; }),
  ];
}

/** The rows by ids and values (numbers depend on what was seen first), in key order. */
function rows(db: Db, table: 'slice_days' | 'slice_hits'): unknown[][] {
  return (db.prepare(`SELECT p.id, s.day, e.id, q.id, d.country, d.persona, d.model, ${table === 'slice_hits' ? 'c.id,' : ''} s.*
    FROM ${table} s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt LEFT JOIN dims d ON d.n = s.dims
    ${table === 'slice_hits' ? 'JOIN keys c ON c.n = s.competitor' : ''} ORDER BY 1, 2, 3, 4, 5, 6, 7${table === 'slice_hits' ? ', 8' : ''}`).raw().all() as unknown[][])
    .map((r) => r.filter((_, i) => i < (table === 'slice_hits' ? 8 : 7) || i >= (table === 'slice_hits' ? 14 : 12)));
}

t.test('the writer sums every stored succeeded run, whatever the batching and the corrections', async (t) => {
  const dir = tmpDir('slice-sums-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = events();
  const one = projectBatches(path.join(dir, 'one.db'), [all]);
  const each = projectBatches(path.join(dir, 'each.db'), all.map((e) => [e]));
  t.teardown(() => { one.close(); each.close(); });
  for (const table of ['slice_days', 'slice_hits'] as const) t.same(rows(each, table), rows(one, table), `${table}: one batch or one event a batch`);

  const days = rows(one, 'slice_days');
  // Runs 1 (moved to 01-07, FR), 2 (brand gone), 4 (back on prompt 2, CTO) and 6 remain succeeded; 3 failed; 5 failed.
  t.equal(days.reduce((n, r) => n + (r[7] as number), 0), 4, 'four succeeded runs');
  t.equal(days.filter((r) => r[1] === '2026-01-05').reduce((n, r) => n + (r[8] as number), 0), 1, 'on 01-05 only run 6 names the brand');
  t.notOk(rows(one, 'slice_hits').some((r) => r[1] === '2026-01-06'), 'the failed correction of run 3 took its hit away');
  t.notOk(days.some((r) => (r[7] as number) <= 0), 'no row is left without runs');

  // The migration computes the same rows from the runs.
  const migrated = migratedAgain(one, 21);
  t.teardown(() => migrated.close());
  for (const table of ['slice_days', 'slice_hits'] as const) t.same(rows(migrated, table), rows(each, table), `${table}: migration 022 gives the writer's rows`);
});
