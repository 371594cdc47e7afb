// The rows signals sums (src/store/reads/signal-rows.ts): a range as month rows and days, a month
// covered mostly taken as its row less the days left out, the current month as its row up to the last
// day with runs; whatever the pieces, their signed sums per engine, prompt and country are what the
// range's days give.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { openDb, Projector, ReadStore, type Db } from '../../src/store';
import { countryCode, pairSpan, signalPieces, signalReads, type SignalRead } from '../../src/store/reads';
import { asSource, run, W, world, type Ev } from '../helpers/events';
import { tmpDir } from '../helpers/db';

/** Every day of a..b. */
function days(a: string, b: string): string[] {
  const out: string[] = [];
  for (let d = Date.parse(a); d <= Date.parse(b); d += 86_400_000) out.push(new Date(d).toISOString().slice(0, 10));
  return out;
}

/** Runs on most days of 2025-12-20..2026-03-10, of two engines and prompts, in three countries or none, naming the brand and a competitor now and then. */
function events(): Ev[] {
  const out: Ev[] = [...world()];
  let n = 0;
  for (const day of days('2025-12-20', '2026-03-10')) {
    if (day.endsWith('3')) continue; // some days without runs
    for (const engine of [W.engineA, W.engineB]) {
      for (const prompt of [W.prompt1, W.prompt2]) {
        n += 1;
        const country = [undefined, 'US', 'DE', 'FR'][n % 4];
        out.push(run({ n, day, engine, prompt, ...(country ? { country } : {}), ...(n % 3 === 0 ? { brand: 1 + (n % 4) } : {}), ...(n % 5 < 2 ? { competitor: 2 } : {}) }));
      }
    }
  }
  return out;
}

t.test('a range as pieces: whole months, days, and a month less the days it leaves out', async (t) => {
  t.same(signalPieces('2026-01-01', '2026-02-28', false), [
    { kind: 'month', from: '2026-01-01', to: '2026-01-01', sign: 1 }, { kind: 'month', from: '2026-02-01', to: '2026-02-01', sign: 1 },
  ], 'two whole months');
  t.same(signalPieces('2026-01-10', '2026-01-16', false), [{ kind: 'days', from: '2026-01-10', to: '2026-01-16', sign: 1 }], 'a week: its days');
  t.same(signalPieces('2026-01-02', '2026-01-31', false), [
    { kind: 'month', from: '2026-01-01', to: '2026-01-01', sign: 1 }, { kind: 'days', from: '2026-01-01', to: '2026-01-01', sign: -1 },
  ], 'a month but its first day: the month less that day');
  t.same(signalPieces('2026-02-01', '2026-02-10', true), [{ kind: 'month', from: '2026-02-01', to: '2026-02-01', sign: 1 }],
    'the current month from its first day, no runs after the end: its row');
  t.same(signalPieces('2026-02-01', '2026-02-10', false), [{ kind: 'days', from: '2026-02-01', to: '2026-02-10', sign: 1 }],
    'the same with runs after the end: its days');
  t.same(signalPieces('2026-01-30', '2026-02-02', true), [
    { kind: 'days', from: '2026-01-30', to: '2026-01-31', sign: 1 }, { kind: 'month', from: '2026-02-01', to: '2026-02-01', sign: 1 },
  ], 'two ragged days, then the current month');
});

function project(file: string, evs: Ev[]): Db {
  const db = openDb(file);
  const projector = new Projector(db);
  projector.applyBatch(asSource(evs, 'test', 1));
  projector.settle();
  return db;
}

t.test("the pieces' signed sums per engine, prompt and country are the range's days", async (t) => {
  const dir = tmpDir('signal-rows-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = project(path.join(dir, 'w.db'), events());
  t.teardown(() => db.close());
  const store = new ReadStore(db);
  const span = pairSpan(store);
  const countryOf = new Map(db.prepare('SELECT n, country FROM dims').raw().all() as Array<[number, string]>);
  const byCode = new Map([...countryOf.values(), ''].map((c) => [countryCode(c), c]));
  const byKey = (out: Map<string, number>, reads: readonly SignalRead[], hits: boolean, months: boolean): void => {
    for (const { sign, columns: [pair, where, third, fourth] } of reads) {
      for (let i = 0; i < pair.length; i++) {
        const country = months ? byCode.get(where[i]!)! : countryOf.get(where[i]!) ?? '';
        const e = Math.floor(pair[i]! / span);
        const p = pair[i]! % span;
        const keys = hits ? [`${e} ${p} ${country} c${third[i]!}`] : [`${e} ${p} ${country} runs`, `${e} ${p} ${country} brand`];
        const values = hits ? [fourth[i]!] : [third[i]!, fourth[i]!];
        keys.forEach((k, j) => out.set(k, (out.get(k) ?? 0) + sign * values[j]!));
      }
    }
  };
  const nonZero = (m: Map<string, number>): Array<[string, number]> => [...m].filter(([, v]) => v !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const fromDays = (start: string, end: string): Array<[string, number]> => {
    const out = new Map<string, number>();
    const add = (k: string, v: number): void => { out.set(k, (out.get(k) ?? 0) + v); };
    const where = "s.project = (SELECT n FROM keys WHERE id = ?) AND s.day BETWEEN ? AND ?";
    for (const [e, p, d, runs, brand] of db.prepare(`SELECT s.engine, s.prompt, s.dims, s.runs, s.brand_runs FROM slice_days s WHERE ${where}`).raw().all(W.project, start, end) as number[][]) {
      const c = countryOf.get(d!) ?? '';
      add(`${e} ${p} ${c} runs`, runs!);
      add(`${e} ${p} ${c} brand`, brand!);
    }
    for (const [e, p, d, comp, runs] of db.prepare(`SELECT s.engine, s.prompt, s.dims, s.competitor, s.runs FROM slice_hits s WHERE ${where}`).raw().all(W.project, start, end) as number[][]) {
      add(`${e} ${p} ${countryOf.get(d!) ?? ''} c${comp}`, runs!);
    }
    return nonZero(out);
  };
  const bounds = ['2025-12-01', '2025-12-20', '2025-12-31', '2026-01-01', '2026-01-02', '2026-01-16', '2026-01-31', '2026-02-01', '2026-02-03', '2026-02-27',
    '2026-02-28', '2026-03-01', '2026-03-05', '2026-03-10', '2026-03-20', '2026-03-31'];
  let ranges = 0;
  let subtracted = 0;
  for (const start of bounds) {
    for (const end of bounds) {
      if (end < start) continue;
      const out = new Map<string, number>();
      let negative = false;
      for (const [kind, read] of signalReads(store, W.project, start, end, span)) {
        byKey(out, [read], kind === 'dayHits' || kind === 'monthHits', kind === 'months' || kind === 'monthHits');
        negative ||= read.sign < 0;
      }
      if (negative) subtracted += 1;
      t.same(nonZero(out), fromDays(start, end), `${start}..${end}`);
      ranges += 1;
    }
  }
  t.ok(subtracted > 0, 'some ranges took a month row less its days');
  t.ok(ranges > 100, `${ranges} ranges`);
});
