import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { isZero, zeroMention, type MentionDelta } from './contributions';

/**
 * slice_values and slice_value_months (migration 026): the moves of slice_days added per engine and
 * one dimension's value (0: every run; 1 country, 2 persona, 3 model), without the prompt. Written
 * from the batch's day moves
 * (slice-sums.ts), in its transaction; a row whose runs fall to 0 is deleted, so the tables hold the
 * same rows whatever the batching.
 */

/** A move of slice_days, as slice-sums.ts sums a batch's runs. */
export interface DayMove {
  key: readonly [project: number, day: string, engine: number, prompt: number, dims: number];
  runs: number;
  brand: MentionDelta;
}

interface ValueMove {
  key: [project: number, period: string, engine: number, dimension: number, value: string];
  runs: number;
  brand: MentionDelta;
}

/** The moves of one project, period and engine, per dimension (0-3) by value. */
interface Period {
  project: number;
  period: string;
  engine: number;
  byValue: Array<Map<string, ValueMove>>;
}

const newPeriod = (project: number, period: string, engine: number): Period => ({ project, period, engine, byValue: [new Map(), new Map(), new Map(), new Map()] });

function addMove(p: Period, dimension: number, value: string, runs: number, brand: MentionDelta): void {
  const byValue = p.byValue[dimension]!;
  let v = byValue.get(value);
  if (v === undefined) byValue.set(value, (v = { key: [p.project, p.period, p.engine, dimension, value], runs: 0, brand: zeroMention() }));
  v.runs += runs;
  const b = v.brand;
  b.runs += brand.runs; b.position_sum += brand.position_sum; b.rr_fixed += brand.rr_fixed;
  b.sentiment_fixed += brand.sentiment_fixed; b.sentiment_n += brand.sentiment_n;
}

/** The dimensions' values of no dims row: the run names none. */
const NO_VALUES: readonly string[] = ['', '', ''];

const upsert = (table: string, period: string): string => `INSERT INTO ${table} (project, ${period}, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (project, dimension, ${period}, engine, value) DO UPDATE SET runs = runs + excluded.runs, brand_runs = brand_runs + excluded.brand_runs,
    position_sum = position_sum + excluded.position_sum, rr_fixed = rr_fixed + excluded.rr_fixed,
    sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed, sentiment_n = sentiment_n + excluded.sentiment_n`;

export class SliceValues {
  /** Each dims number's [country, persona, model] (a project names a few hundred combinations). */
  private readonly values = new Map<number, readonly string[]>();
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      dimsValues: db.prepare('SELECT country, persona, model FROM dims WHERE n = ?').raw(),
      day: db.prepare(upsert('slice_values', 'day')),
      month: db.prepare(upsert('slice_value_months', 'month')),
      dropDay: db.prepare('DELETE FROM slice_values WHERE project = ? AND day = ? AND engine = ? AND dimension = ? AND value = ? AND runs = 0'),
      dropMonth: db.prepare('DELETE FROM slice_value_months WHERE project = ? AND month = ? AND engine = ? AND dimension = ? AND value = ? AND runs = 0'),
    };
  }

  private valuesOf(dims: number): readonly string[] {
    if (dims === 0) return NO_VALUES;
    let v = this.values.get(dims);
    if (v === undefined) {
      v = (this.stmts.dimsValues.get(dims) as string[] | undefined) ?? NO_VALUES;
      if (this.values.size >= 10_000) this.values.clear();
      this.values.set(dims, v);
    }
    return v;
  }

  /** The batch's day moves added per engine and value, by day and then by month; written. */
  write(moves: Iterable<DayMove>): void {
    // Per (project, day, engine): a map per dimension by value. One string key a move (the values
    // are the dims rows' strings, whose hashes the maps keep), and the months summed from the days.
    const days = new Map<string, Period>();
    for (const m of moves) {
      if (m.runs === 0 && isZero(m.brand)) continue;
      const [project, day, engine, , dims] = m.key;
      const id = `${project} ${day} ${engine}`;
      let d = days.get(id);
      if (d === undefined) days.set(id, (d = newPeriod(project, day, engine)));
      const values = this.valuesOf(dims);
      addMove(d, 0, '', m.runs, m.brand);
      for (let k = 0; k < 3; k++) addMove(d, k + 1, values[k]!, m.runs, m.brand);
    }
    const months = new Map<string, Period>();
    for (const d of days.values()) {
      const month = `${d.period.slice(0, 8)}01`;
      const id = `${d.project} ${month} ${d.engine}`;
      let p = months.get(id);
      if (p === undefined) months.set(id, (p = newPeriod(d.project, month, d.engine)));
      d.byValue.forEach((byValue, k) => { for (const v of byValue.values()) addMove(p!, k, v.key[4], v.runs, v.brand); });
      for (const byValue of d.byValue) for (const v of byValue.values()) this.move(v, this.stmts.day, this.stmts.dropDay);
    }
    for (const p of months.values()) for (const byValue of p.byValue) for (const v of byValue.values()) this.move(v, this.stmts.month, this.stmts.dropMonth);
  }

  private move(v: ValueMove, row: Statement, drop: Statement): void {
    const b = v.brand;
    if (v.runs === 0 && isZero(b)) return;
    row.run(...v.key, v.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n);
    if (v.runs < 0) drop.run(...v.key);
  }

  /** The transaction failed: nothing kept refers to its rows (dims numbers it gave are gone). */
  fail(): void {
    this.values.clear();
  }
}
