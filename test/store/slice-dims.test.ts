// slice_dims, slice_pairs and slice_pair_dims (migration 024): what /dimensions counts, over every
// day, in rows that do not grow with the history. The writer keeps them as slice_days summed over its
// days whatever the batching and the corrections, the migration computes the same rows, and the
// counting rule stays the reader's: a deleted prompt's runs leave the count, an engine not known yet
// or another project's prompt counts only once it is, a prompt re-created counts again.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { openDb, Projector, ReadStore, type Db } from '../../src/store';
import { endpoint as dimensions } from '../../src/readmodels/endpoints/dimensions';
import type { Dimensions } from '../../src/readmodels/bodies.gen';
import { asSource, ev, type Ev, id, resent, run, W, world } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { readArgs } from '../helpers/readmodels';
import { migratedAgain } from '../helpers/migrations';

const engineC = id(3, 'cccccccc');
const foreignPrompt = id(9, 'ffffffff');

function events(): Ev[] {
  const a = run({ n: 1, brand: 2, country: 'US', persona: 'Founder' });
  const b = run({ n: 2, country: 'DE', day: '2026-01-31' });
  const c = run({ n: 3, prompt: W.prompt2, engine: W.engineB, country: 'US', model: 'gpt-x', day: '2026-02-02' });
  return [
    ...world(),
    ev('prompt.upserted', { id: foreignPrompt, project_id: W.otherProject, text: 'their anvil', segment_ids: [], active: true }),
    a, b, c,
    run({ n: 4, prompt: W.prompt2, country: 'US', persona: 'CTO', day: '2026-02-03' }),
    run({ n: 5, status: 'failed', country: 'FR' }),
    run({ n: 6, day: '2026-01-06' }), // names no dimension
    run({ n: 7, engine: engineC, country: 'JP', day: '2026-01-07' }), // an engine not known yet
    run({ n: 8, prompt: foreignPrompt, country: 'BR', day: '2026-01-08' }), // another project's prompt
    run({ n: 9, prompt: W.prompt2, engine: W.engineB, country: 'US', model: 'gpt-x', day: '2026-03-09' }),
    // Corrections: another country; failed after all; into another month and persona.
    resent(a, '2026-03-01T00:00:00Z', (x) => { x.country = 'FR'; }),
    resent(b, '2026-03-01T00:00:00Z', (x) => { x.status = 'failed'; }),
    resent(c, '2026-03-01T00:00:00Z', (x) => { x.completed_at = '2026-01-20T12:00:00Z'; x.persona = 'CTO'; }),
  ];
}

function project(file: string, batches: Ev[][]): { db: Db; projector: Projector; apply: (b: Ev[]) => void } {
  const db = openDb(file);
  const projector = new Projector(db);
  let at = 1;
  const apply = (b: Ev[]): void => {
    projector.applyBatch(asSource(b, 'test', at));
    at += b.length;
  };
  for (const b of batches) apply(b);
  projector.settle();
  return { db, projector, apply };
}

/** The three tables by ids and dimension values, in key order. */
function tables(db: Db): unknown[][][] {
  const dims = 'd.country, d.persona, d.model, d.surface';
  return [
    db.prepare(`SELECT p.id, ${dims}, s.runs FROM slice_dims s JOIN keys p ON p.n = s.project JOIN dims d ON d.n = s.dims ORDER BY 1, 2, 3, 4, 5`).raw().all() as unknown[][],
    db.prepare(`SELECT p.id, e.id, q.id, s.runs FROM slice_pairs s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt
      ORDER BY 1, 2, 3`).raw().all() as unknown[][],
    db.prepare(`SELECT p.id, e.id, q.id, ${dims}, s.runs FROM slice_pair_dims s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine
      JOIN keys q ON q.n = s.prompt JOIN dims d ON d.n = s.dims ORDER BY 1, 2, 3, 4, 5, 6, 7`).raw().all() as unknown[][],
  ];
}

/** The same, summed from every day of slice_days (runs naming a dimension). */
function summedDays(db: Db): unknown[][][] {
  const dims = 'd.country, d.persona, d.model, d.surface';
  const from = 'FROM slice_days s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt JOIN dims d ON d.n = s.dims';
  return [
    db.prepare(`SELECT p.id, ${dims}, sum(s.runs) ${from} GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`).raw().all() as unknown[][],
    db.prepare(`SELECT p.id, e.id, q.id, sum(s.runs) ${from} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`).raw().all() as unknown[][],
    db.prepare(`SELECT p.id, e.id, q.id, ${dims}, sum(s.runs) ${from} GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7`).raw().all() as unknown[][],
  ];
}

t.test('the totals are the days summed, whatever the batching and the corrections; migration 024 computes them', async (t) => {
  const dir = tmpDir('slice-dims-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = events();
  const one = project(path.join(dir, 'one.db'), [all]).db;
  const each = project(path.join(dir, 'each.db'), all.map((e) => [e])).db;
  t.teardown(() => { one.close(); each.close(); });
  for (const db of [one, each]) t.same(tables(db), summedDays(db), 'the days summed');
  t.same(tables(each), tables(one), 'one batch or one event a batch: the same rows');
  const [byDims, pairs] = tables(one);
  t.notOk(byDims!.some((r) => r[1] === 'DE'), 'the run that failed after all left no row');
  t.notOk(byDims!.some((r) => r[1] === null && r[2] === null && r[3] === null), 'a run naming no dimension is not listed');
  t.equal(pairs!.reduce((n: number, r) => n + (r[3] as number), 0), 6, 'six succeeded runs name a dimension');

  const migrated = migratedAgain(one, 23);
  t.teardown(() => migrated.close());
  t.same(tables(migrated), tables(each), "migration 024 gives the writer's rows");
});

t.test('/dimensions keeps the counting rule: a prompt deleted and re-created, an engine appearing, another project\'s prompt', async (t) => {
  const dir = tmpDir('slice-dims-count-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const w = project(path.join(dir, 'w.db'), [events()]);
  t.teardown(() => w.db.close());
  const store = new ReadStore(w.db);
  const counts = (): Record<string, Record<string, number>> => {
    const b = dimensions.build(store, readArgs()) as Dimensions;
    return {
      countries: Object.fromEntries(b.countries.map((r) => [r.country, r.run_count])),
      personas: Object.fromEntries(b.personas.map((r) => [r.persona, r.run_count])),
      models: Object.fromEntries(b.models.map((r) => [r.model, r.run_count])),
    };
  };
  // Counted: run 1 (FR, Founder), run 3 (US, CTO, gpt-x, on prompt 2 and engine B), run 4 (US, CTO, prompt 2),
  // run 9 (US, gpt-x, prompt 2, engine B). Not: run 7 (engine C not known), run 8 (another project's prompt).
  t.same(counts(), { countries: { FR: 1, US: 3 }, personas: { CTO: 2, Founder: 1 }, models: { 'gpt-x': 2 } }, 'the counted runs');

  w.apply([ev('prompt.deleted', { id: W.prompt2, project_id: W.project }, '2026-04-01T00:00:00Z')]);
  t.same(counts(), { countries: { FR: 1 }, personas: { Founder: 1 }, models: {} }, 'a deleted prompt\'s runs leave the count, while the project is counted again');
  w.projector.settle();
  t.same(counts(), { countries: { FR: 1 }, personas: { Founder: 1 }, models: {} }, 'and once it is counted again');

  w.apply([ev('engine.upserted', { id: engineC, name: 'Gemini', provider: 'google' }, '2026-04-02T00:00:00Z')]);
  t.same(counts(), { countries: { FR: 1, JP: 1 }, personas: { Founder: 1 }, models: {} }, 'an engine appearing: its runs count');

  w.apply([ev('prompt.upserted', { id: W.prompt2, project_id: W.project, text: 'cheap anvil', segment_ids: [], active: true }, '2026-04-03T00:00:00Z')]);
  w.projector.settle();
  t.same(counts(), { countries: { FR: 1, JP: 1, US: 3 }, personas: { CTO: 2, Founder: 1 }, models: { 'gpt-x': 2 } }, 'the prompt re-created: its runs count again');

  w.apply([ev('prompt.upserted', { id: foreignPrompt, project_id: W.project, text: 'their anvil', segment_ids: [], active: true }, '2026-04-04T00:00:00Z')]);
  w.projector.settle();
  t.same(counts().countries, { BR: 1, FR: 1, JP: 1, US: 3 }, 'a prompt moved to the project: its runs count');

  const other = dimensions.build(store, readArgs({ projectId: W.otherProject })) as Dimensions;
  t.same(other.countries, [], 'the other project counts none of them');
});
