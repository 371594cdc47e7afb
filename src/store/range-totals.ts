import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { addMention, isZero, zeroMention, type MentionDelta } from './contributions';
import { Keys } from './keys';
import type { RunFacts } from './run-store';

/**
 * range_totals and range_hit_totals (migration 026): per pair (and per prompt and competitor) and per
 * day it has runs, the sums of every day up to it. A batch's runs are summed per key and day in
 * memory first; a day's move is added to its row and to every later row of its key (none when the
 * runs come in day order, as a live stream's do), its row made from the day before's when it has
 * none, and deleted when its day's runs fall to 0, so the rows are the same whatever the batching.
 */

/** A key's moves by day: the runs (brand: the succeeded runs; competitor: its mentions) and the sums. */
interface Move {
  runs: number;
  brand: MentionDelta;
}

interface Key<K> {
  key: K;
  days: Map<string, Move>;
}

/** The statements of one table: add to a key's rows from a day on, make a day's row, drop it when its day has no runs. */
interface TotalStatements {
  addFrom: Statement;
  make: Statement;
  drop: Statement;
}

const SUMS = ['position_sum', 'rr_fixed', 'sentiment_fixed', 'sentiment_n'] as const;

function statements(db: Db, table: string, keyColumns: readonly string[], sums: readonly string[]): TotalStatements {
  const key = keyColumns.map((c) => `${c} = ?`).join(' AND ');
  const previous = `SELECT ${sums.join(', ')} FROM ${table} WHERE ${key} AND day < ? ORDER BY day DESC LIMIT 1`;
  return {
    addFrom: db.prepare(`UPDATE ${table} SET ${sums.map((c) => `${c} = ${c} + ?`).join(', ')} WHERE ${key} AND day >= ?`),
    // The day's row when the key had none that day: the day before's totals (0 when none) and the day's move.
    make: db.prepare(`INSERT OR IGNORE INTO ${table} (${keyColumns.join(', ')}, day, ${sums.join(', ')})
      SELECT ${keyColumns.map(() => '?').join(', ')}, ?, ${sums.map((c) => `coalesce(p.${c}, 0) + ?`).join(', ')}
      FROM (SELECT 1) LEFT JOIN (${previous}) p`),
    drop: db.prepare(`DELETE FROM ${table} WHERE ${key} AND day = ?
      AND runs = coalesce((SELECT runs FROM ${table} WHERE ${key} AND day < ? ORDER BY day DESC LIMIT 1), 0)`),
  };
}

/** One key's moves written, day by day (each day's move reaches every later row). */
function writeKey(key: readonly number[], days: Map<string, Move>, stmts: TotalStatements, withBrandRuns: boolean): void {
  for (const [day, m] of days) {
    const b = m.brand;
    if (m.runs === 0 && isZero(b)) continue;
    const values = withBrandRuns ? [m.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n]
      : [m.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n];
    stmts.addFrom.run(...values, ...key, day);
    stmts.make.run(...key, day, ...values, ...key, day);
    if (m.runs < 0) stmts.drop.run(...key, day, ...key, day);
  }
}

function moveOf<K>(into: Map<string, Key<K>>, id: string, key: K, day: string): Move {
  let k = into.get(id);
  if (k === undefined) into.set(id, (k = { key, days: new Map() }));
  let m = k.days.get(day);
  if (m === undefined) k.days.set(day, (m = { runs: 0, brand: zeroMention() }));
  return m;
}

export class RangeTotals {
  private readonly keys: Keys;
  /** The batch's moves by `${project} ${engine} ${prompt}`. */
  private readonly pairs = new Map<string, Key<[number, number, number]>>();
  /** The batch's competitor moves by `${project} ${prompt} ${competitor}`. */
  private readonly hits = new Map<string, Key<[number, number, number]>>();
  private readonly stmts;

  constructor(db: Db) {
    this.keys = new Keys(db);
    this.stmts = {
      pair: statements(db, 'range_totals', ['project', 'engine', 'prompt'], ['runs', 'brand_runs', ...SUMS]),
      hit: statements(db, 'range_hit_totals', ['project', 'prompt', 'competitor'], ['runs', ...SUMS]),
    };
  }

  /** A succeeded run's sums added (sign 1) or taken away (sign -1, a run its batch superseded). */
  add(run: RunFacts, sign: 1 | -1): void {
    const project = this.keys.numberOf(run.project_id);
    const engine = this.keys.numberOf(run.engine_id);
    const prompt = this.keys.numberOf(run.prompt_id);
    const m = moveOf(this.pairs, `${project} ${engine} ${prompt}`, [project, engine, prompt], run.day);
    m.runs += sign;
    if (run.brand_position !== null) addMention(m.brand, run.brand_position, run.brand_sentiment, sign);
    for (const h of run.competitors) {
      const c = this.keys.numberOf(h.competitor_id);
      const d = moveOf(this.hits, `${project} ${prompt} ${c}`, [project, prompt, c], run.day);
      // A competitor row's runs are its mentions: the brand sums' runs column.
      addMention(d.brand, h.position, h.sentiment, sign);
    }
  }

  /** The batch's moves into the running totals. */
  write(): void {
    for (const k of this.pairs.values()) writeKey(k.key, k.days, this.stmts.pair, true);
    for (const k of this.hits.values()) {
      for (const m of k.days.values()) m.runs = m.brand.runs;
      writeKey(k.key, k.days, this.stmts.hit, false);
    }
    this.clear();
  }

  clear(): void {
    this.pairs.clear();
    this.hits.clear();
  }

  /** The transaction failed: numbers given in it are not in the tables any more. */
  fail(): void {
    this.clear();
    this.keys.fail();
  }
}
