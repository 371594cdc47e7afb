import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { isZero, zeroMention, type MentionDelta } from './contributions';

/**
 * slice_values and slice_value_months (migration 028): the moves of slice_days added per engine and
 * one dimension's value (0: every run; 1 country, 2 persona, 3 model), without the prompt; and
 * slice_prompts, the succeeded runs per project and prompt. Written from the batch's day moves
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
      prompt: db.prepare(`INSERT INTO slice_prompts (project, prompt, runs) VALUES (?, ?, ?)
        ON CONFLICT (project, prompt) DO UPDATE SET runs = runs + excluded.runs`),
      dropPrompt: db.prepare('DELETE FROM slice_prompts WHERE project = ? AND prompt = ? AND runs = 0'),
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

  /** The batch's day moves added per engine and value, by day and by month, and per prompt; written. */
  write(moves: Iterable<DayMove>): void {
    const days = new Map<string, ValueMove>();
    const months = new Map<string, ValueMove>();
    const prompts = new Map<string, [number, number, number]>();
    const into = (to: Map<string, ValueMove>, project: number, period: string, engine: number, dimension: number, value: string, m: DayMove): void => {
      const id = `${project} ${period} ${engine} ${dimension} ${value}`;
      let v = to.get(id);
      if (v === undefined) to.set(id, (v = { key: [project, period, engine, dimension, value], runs: 0, brand: zeroMention() }));
      v.runs += m.runs;
      const b = v.brand;
      b.runs += m.brand.runs; b.position_sum += m.brand.position_sum; b.rr_fixed += m.brand.rr_fixed;
      b.sentiment_fixed += m.brand.sentiment_fixed; b.sentiment_n += m.brand.sentiment_n;
    };
    for (const m of moves) {
      if (m.runs === 0 && isZero(m.brand)) continue;
      const [project, day, engine, prompt, dims] = m.key;
      const month = `${day.slice(0, 8)}01`;
      const values = this.valuesOf(dims);
      into(days, project, day, engine, 0, '', m);
      into(months, project, month, engine, 0, '', m);
      for (let i = 0; i < 3; i++) {
        into(days, project, day, engine, i + 1, values[i]!, m);
        into(months, project, month, engine, i + 1, values[i]!, m);
      }
      const pid = `${project} ${prompt}`;
      const p = prompts.get(pid);
      if (p === undefined) prompts.set(pid, [project, prompt, m.runs]);
      else p[2] += m.runs;
    }
    for (const v of days.values()) this.move(v, this.stmts.day, this.stmts.dropDay);
    for (const v of months.values()) this.move(v, this.stmts.month, this.stmts.dropMonth);
    for (const [project, prompt, runs] of prompts.values()) {
      if (runs === 0) continue;
      this.stmts.prompt.run(project, prompt, runs);
      if (runs < 0) this.stmts.dropPrompt.run(project, prompt);
    }
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
