// The rows signals sums (src/store/reads/signal-rows.ts): a range as month rows and days, a month
// covered mostly taken as its row less the days left out, the current month as its row up to the last
// day with runs, two compared periods' shared month read once for both; whatever the pieces, their
// signed sums per engine, prompt and country are what each period's days give.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { openDb, Projector, ReadStore, type Db } from '../../src/store';
import { pairSpan, signalPieces, signalReads, type DayRange, type SignalRead } from '../../src/store/reads';
import { asSource, run, W, world, type Ev } from '../helpers/events';
import { tmpDir } from '../helpers/db';

const dayCount = (a: string, b: string): number => (Date.parse(b) - Date.parse(a)) / 86_400_000 + 1;
const addDays = (day: string, n: number): string => new Date(Date.parse(day) + n * 86_400_000).toISOString().slice(0, 10);

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

const always = (): boolean => true;
const through = (last: string) => (from: string): boolean => from <= last;

t.test('a range as pieces: whole months, days, and a month less the days it leaves out', async (t) => {
  t.same(signalPieces([{ start: '2026-01-01', end: '2026-02-28' }], always), [
    { kind: 'month', from: '2026-01-01', to: '2026-01-01', signs: [1] }, { kind: 'month', from: '2026-02-01', to: '2026-02-01', signs: [1] },
  ], 'two whole months');
  t.same(signalPieces([{ start: '2026-01-10', end: '2026-01-16' }], always), [{ kind: 'days', from: '2026-01-10', to: '2026-01-16', signs: [1] }], 'a week: its days');
  t.same(signalPieces([{ start: '2026-01-02', end: '2026-01-31' }], always), [
    { kind: 'month', from: '2026-01-01', to: '2026-01-01', signs: [1] }, { kind: 'days', from: '2026-01-01', to: '2026-01-01', signs: [-1] },
  ], 'a month but its first day: the month less that day');
  t.same(signalPieces([{ start: '2026-02-01', end: '2026-02-10' }], through('2026-02-10')), [{ kind: 'month', from: '2026-02-01', to: '2026-02-01', signs: [1] }],
    'the current month from its first day, no runs after the end: its row');
  t.same(signalPieces([{ start: '2026-02-01', end: '2026-02-10' }], always), [{ kind: 'days', from: '2026-02-01', to: '2026-02-10', signs: [1] }],
    'the same with runs after the end: its days');
  t.same(signalPieces([{ start: '2026-01-30', end: '2026-02-02' }], through('2026-02-02')), [
    { kind: 'days', from: '2026-01-30', to: '2026-01-31', signs: [1] }, { kind: 'days', from: '2026-02-01', to: '2026-02-02', signs: [1] },
  ], 'two ragged days, then two days of the current month (fewer rows than its month row)');
  t.same(signalPieces([{ start: '2026-01-02', end: '2026-01-31' }], (from) => from !== '2026-01-01'), [
    { kind: 'month', from: '2026-01-01', to: '2026-01-01', signs: [1] },
  ], 'a day left out with no runs is not read');
});

t.test('two periods as pieces, each read once for both', async (t) => {
  t.same(signalPieces([{ start: '2026-01-17', end: '2026-02-15' }, { start: '2025-12-18', end: '2026-01-16' }], through('2026-02-15')), [
    { kind: 'days', from: '2025-12-18', to: '2025-12-31', signs: [0, 1] },
    { kind: 'month', from: '2026-01-01', to: '2026-01-01', signs: [0, 1] },
    { kind: 'days', from: '2026-01-17', to: '2026-01-31', signs: [1, -1] },
    { kind: 'month', from: '2026-02-01', to: '2026-02-01', signs: [1, 0] },
  ], '30 days against the 30 before: the month they share is its row for the one, its other days added to the other and taken from the first');
  t.same(signalPieces([{ start: '2026-01-10', end: '2026-01-20' }, { start: '2026-01-15', end: '2026-01-25' }], always), [
    { kind: 'days', from: '2026-01-10', to: '2026-01-14', signs: [1, 0] },
    { kind: 'days', from: '2026-01-15', to: '2026-01-20', signs: [1, 1] },
    { kind: 'days', from: '2026-01-21', to: '2026-01-25', signs: [0, 1] },
  ], 'overlapping periods: the days they share read once for both');
  t.same(signalPieces([{ start: '2026-01-05', end: '2026-01-31' }, { start: '2026-01-01', end: '2026-01-02' }], always), [
    { kind: 'month', from: '2026-01-01', to: '2026-01-01', signs: [1, 0] },
    { kind: 'days', from: '2026-01-01', to: '2026-01-02', signs: [-1, 1] },
    { kind: 'days', from: '2026-01-03', to: '2026-01-04', signs: [-1, 0] },
  ], 'a month row less the days of the other period and of neither');
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
  const byKey = (out: Map<string, number>, reads: readonly SignalRead[], hits: boolean, months: boolean, side: number): void => {
    for (const { signs, columns: [pair, where, third, fourth] } of reads) {
      const sign = signs[side]!;
      for (let i = 0; i < pair.length; i++) {
        const country = months ? (where[i] as string) : countryOf.get(where[i] as number) ?? '';
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
  /** Each period's signed sums from one pass of signalReads over them all. */
  const fromPieces = (periods: readonly DayRange[]): { sums: Array<Array<[string, number]>>; subtracted: boolean } => {
    const outs = periods.map(() => new Map<string, number>());
    let subtracted = false;
    for (const [kind, read] of signalReads(store, W.project, periods, span)) {
      outs.forEach((out, side) => byKey(out, [read], kind === 'dayHits' || kind === 'monthHits', kind === 'months' || kind === 'monthHits', side));
      subtracted ||= read.signs.some((x) => x < 0);
    }
    return { sums: outs.map(nonZero), subtracted };
  };
  let ranges = 0;
  let subtracted = 0;
  let compared = 0;
  const customs: DayRange[] = [{ start: '2026-01-10', end: '2026-02-05' }, { start: '2025-12-25', end: '2026-01-02' }, { start: '2026-02-20', end: '2026-03-31' }];
  for (const start of bounds) {
    for (const end of bounds) {
      if (end < start) continue;
      const one = fromPieces([{ start, end }]);
      if (one.subtracted) subtracted += 1;
      t.same(one.sums[0], fromDays(start, end), `${start}..${end}`);
      ranges += 1;
      // Against the period before (as long, ending the day before) and periods that overlap it or not.
      const length = dayCount(start, end);
      for (const before of [{ start: addDays(start, -length), end: addDays(start, -1) }, ...customs]) {
        const two = fromPieces([{ start, end }, before]);
        t.same(two.sums, [fromDays(start, end), fromDays(before.start, before.end)], `${start}..${end} against ${before.start}..${before.end}`);
        compared += 1;
      }
    }
  }
  t.ok(compared > 500, `${compared} pairs of periods`);
  t.ok(subtracted > 0, 'some ranges took a month row less its days');
  t.ok(ranges > 100, `${ranges} ranges`);
});
