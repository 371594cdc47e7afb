import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { addDelta, addMention, isZero, zeroMention, type MentionDelta } from './contributions';
import { Dims } from './dims';
import { Keys } from './keys';
import { SliceDims } from './slice-dims';
import type { RunFacts } from './run-store';
import type { SliceMove } from './range-totals';
import { SliceValues } from './slice-values';

/**
 * slice_days and slice_hits (migration 022): every succeeded run's sums per project, day, engine,
 * prompt and dims number (and competitor), whatever counts; slice_months and slice_month_hits (023)
 * the same moves per month and country. A batch adds its runs and takes away the
 * ones it superseded, summed in memory first (one upsert per row the batch moves); a row whose runs
 * fall to 0 is deleted, so the table holds the same rows whatever the batching.
 */

interface Row {
  key: [project: number, day: string, engine: number, prompt: number, dims: number];
  /** The dims row's country ('' when none): the month's key (slice_months, migration 023). */
  country: string;
  runs: number;
  brand: MentionDelta;
  hits: Map<number, MentionDelta>;
}

/** A move of slice_months and slice_month_hits: the day rows' moves added per month and country. */
interface MonthRow {
  key: [project: number, month: string, engine: number, prompt: number, country: string];
  runs: number;
  brand: MentionDelta;
  hits: Map<number, MentionDelta>;
}

/** The statements of one level of sums (a day's or a month's): its row, its competitor rows, their deletes. */
interface MoveStatements {
  row: Statement;
  hit: Statement;
  drop: Statement;
  dropHits: Statement;
}

/**
 * One move written: the row's sums and each competitor's added (upserts); a row or competitor
 * whose runs fell is deleted with its competitors (the statements delete only rows at 0 runs), so
 * the table holds the same rows whatever the batching.
 */
function writeMove(m: Pick<MonthRow, 'runs' | 'brand' | 'hits'> & { key: readonly unknown[] }, stmts: MoveStatements): void {
  const b = m.brand;
  let fell = false;
  if (m.runs !== 0 || !isZero(b)) {
    stmts.row.run(...m.key, m.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n);
    fell = m.runs < 0;
  }
  for (const [c, d] of m.hits) {
    if (isZero(d)) continue;
    stmts.hit.run(...m.key, c, d.runs, d.position_sum, d.rr_fixed, d.sentiment_fixed, d.sentiment_n);
    if (d.runs < 0) fell = true;
  }
  if (fell) {
    stmts.drop.run(...m.key);
    stmts.dropHits.run(...m.key);
  }
}

/** The country of a dims key (dims.ts dimsKey), '' when it names none, as the dims row keeps it. */
function countryOf(key: string | null | undefined, seen: Map<string, string>): string {
  if (key === null || key === undefined) return '';
  let c = seen.get(key);
  if (c === undefined) {
    c = (JSON.parse(key) as Array<string | null>)[0] ?? '';
    if (seen.size >= 1000) seen.clear();
    seen.set(key, c);
  }
  return c;
}

export class SliceSums {
  private readonly keys: Keys;
  private readonly dims: Dims;
  /** The batch's moves, by `${project} ${day} ${engine} ${prompt} ${dims}`. */
  private readonly rows = new Map<string, Row>();
  /** The countries of dims keys seen (a project names a few dozen keys). */
  private readonly countries = new Map<string, string>();
  /** The same moves over every day, per dims number and pair (migration 024: /dimensions). */
  private readonly totals: SliceDims;
  private readonly stmts;
  /** The same moves per engine and dimension value (migration 026). */
  private readonly values: SliceValues;

  constructor(db: Db) {
    this.keys = new Keys(db);
    this.dims = new Dims(db);
    this.totals = new SliceDims(db);
    this.values = new SliceValues(db);
    this.stmts = {
      day: db.prepare(`INSERT INTO slice_days (project, day, engine, prompt, dims, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project, day, engine, prompt, dims) DO UPDATE SET runs = runs + excluded.runs, brand_runs = brand_runs + excluded.brand_runs,
          position_sum = position_sum + excluded.position_sum, rr_fixed = rr_fixed + excluded.rr_fixed,
          sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed, sentiment_n = sentiment_n + excluded.sentiment_n`),
      hit: db.prepare(`INSERT INTO slice_hits (project, day, engine, prompt, dims, competitor, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project, day, engine, prompt, dims, competitor) DO UPDATE SET runs = runs + excluded.runs,
          position_sum = position_sum + excluded.position_sum, rr_fixed = rr_fixed + excluded.rr_fixed,
          sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed, sentiment_n = sentiment_n + excluded.sentiment_n`),
      month: db.prepare(`INSERT INTO slice_months (project, month, engine, prompt, country, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project, month, engine, prompt, country) DO UPDATE SET runs = runs + excluded.runs, brand_runs = brand_runs + excluded.brand_runs,
          position_sum = position_sum + excluded.position_sum, rr_fixed = rr_fixed + excluded.rr_fixed,
          sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed, sentiment_n = sentiment_n + excluded.sentiment_n`),
      monthHit: db.prepare(`INSERT INTO slice_month_hits (project, month, engine, prompt, country, competitor, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project, month, engine, prompt, country, competitor) DO UPDATE SET runs = runs + excluded.runs,
          position_sum = position_sum + excluded.position_sum, rr_fixed = rr_fixed + excluded.rr_fixed,
          sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed, sentiment_n = sentiment_n + excluded.sentiment_n`),
      dropMonth: db.prepare('DELETE FROM slice_months WHERE project = ? AND month = ? AND engine = ? AND prompt = ? AND country = ? AND runs = 0'),
      dropMonthHits: db.prepare('DELETE FROM slice_month_hits WHERE project = ? AND month = ? AND engine = ? AND prompt = ? AND country = ? AND runs = 0'),
      dropDay: db.prepare('DELETE FROM slice_days WHERE project = ? AND day = ? AND engine = ? AND prompt = ? AND dims = ? AND runs = 0'),
      dropHits: db.prepare('DELETE FROM slice_hits WHERE project = ? AND day = ? AND engine = ? AND prompt = ? AND dims = ? AND runs = 0'),
    };
  }

  /** A succeeded run's sums added (sign 1) or taken away (sign -1, a run its batch superseded). */
  add(run: RunFacts, sign: 1 | -1): void {
    const project = this.keys.numberOf(run.project_id);
    const engine = this.keys.numberOf(run.engine_id);
    const prompt = this.keys.numberOf(run.prompt_id);
    const dims = this.dims.numberOf(project, run.dims) ?? 0;
    const id = `${project} ${run.day} ${engine} ${prompt} ${dims}`;
    let row = this.rows.get(id);
    if (row === undefined) {
      const country = dims === 0 ? '' : countryOf(run.dims, this.countries);
      this.rows.set(id, (row = { key: [project, run.day, engine, prompt, dims], country, runs: 0, brand: zeroMention(), hits: new Map() }));
    }
    row.runs += sign;
    if (run.brand_position !== null) addMention(row.brand, run.brand_position, run.brand_sentiment, sign);
    for (const h of run.competitors) {
      const c = this.keys.numberOf(h.competitor_id);
      let d = row.hits.get(c);
      if (d === undefined) row.hits.set(c, (d = zeroMention()));
      addMention(d, h.position, h.sentiment, sign);
    }
  }

  /** The batch's moves so far, one a slice_days row (the running totals are summed from them: range-totals.ts). */
  moves(): Iterable<SliceMove> {
    return this.rows.values();
  }

  /** The batch's moves into their rows, the days' and the months'; rows left without runs deleted. */
  write(): void {
    const months = new Map<string, MonthRow>();
    for (const row of this.rows.values()) {
      const [project, day, engine, prompt] = row.key;
      const month = `${day.slice(0, 8)}01`;
      const id = `${project} ${month} ${engine} ${prompt} ${row.country}`;
      let m = months.get(id);
      if (m === undefined) months.set(id, (m = { key: [project, month, engine, prompt, row.country], runs: 0, brand: zeroMention(), hits: new Map() }));
      m.runs += row.runs;
      addDelta(m.brand, row.brand);
      for (const [c, d] of row.hits) {
        let h = m.hits.get(c);
        if (h === undefined) m.hits.set(c, (h = zeroMention()));
        addDelta(h, d);
      }
    }
    const day = { row: this.stmts.day, hit: this.stmts.hit, drop: this.stmts.dropDay, dropHits: this.stmts.dropHits };
    for (const row of this.rows.values()) writeMove(row, day);
    const month = { row: this.stmts.month, hit: this.stmts.monthHit, drop: this.stmts.dropMonth, dropHits: this.stmts.dropMonthHits };
    for (const m of months.values()) writeMove(m, month);
    this.totals.write(this.rows.values());
    this.values.write(this.rows.values());
    this.rows.clear();
  }

  clear(): void {
    this.rows.clear();
    this.totals.clear();
  }

  /** The transaction failed: numbers given in it are not in the tables any more. */
  fail(): void {
    this.rows.clear();
    this.totals.clear();
    this.keys.fail();
    this.dims.fail();
    this.values.fail();
  }
}
