import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { addMention, isZero, zeroMention, type MentionDelta } from './contributions';
import { Keys } from './keys';
import type { RunFacts } from './run-store';

/**
 * range_totals and range_hit_totals (migration 025): per pair (and per prompt and competitor) and per
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

/**
 * The statements of one table: append a row after the key's last (its totals known), add to one
 * day's row, add to the rows after a day (returning them), add a day's move to its row or make it from the day before's
 * (returning the row), drop a day's row when its day has no runs.
 */
interface TotalStatements {
  append: Statement;
  addOn: Statement;
  addAfter: Statement;
  upsert: Statement;
  drop: Statement;
}

const SUMS = ['position_sum', 'rr_fixed', 'sentiment_fixed', 'sentiment_n'] as const;

function statements(db: Db, table: string, keyColumns: readonly string[], sums: readonly string[]): TotalStatements {
  const key = keyColumns.map((c) => `${c} = ?`).join(' AND ');
  const previous = `SELECT ${sums.join(', ')} FROM ${table} WHERE ${key} AND day < ? ORDER BY day DESC LIMIT 1`;
  const columns = `${keyColumns.join(', ')}, day, ${sums.join(', ')}`;
  return {
    append: db.prepare(`INSERT INTO ${table} (${columns}) VALUES (${[...keyColumns, 'day', ...sums].map(() => '?').join(', ')})`),
    addOn: db.prepare(`UPDATE ${table} SET ${sums.map((c) => `${c} = ${c} + ?`).join(', ')} WHERE ${key} AND day = ?`),
    addAfter: db.prepare(`UPDATE ${table} SET ${sums.map((c) => `${c} = ${c} + ?`).join(', ')} WHERE ${key} AND day > ? RETURNING day, ${sums.join(', ')}`).raw(true),
    // The day's row: its move added, or, when the key had none that day, the day before's totals (0 when none) and the move.
    upsert: db.prepare(`INSERT INTO ${table} (${columns})
      SELECT ${keyColumns.map(() => '?').join(', ')}, ?, ${sums.map((c) => `coalesce(p.${c}, 0) + ?`).join(', ')}
      FROM (SELECT 1) LEFT JOIN (${previous}) p WHERE true
      ON CONFLICT DO UPDATE SET ${sums.map((c) => `${c} = ${c} + ?`).join(', ')} RETURNING ${sums.join(', ')}`).raw(true),
    drop: db.prepare(`DELETE FROM ${table} WHERE ${key} AND day = ?
      AND runs = coalesce((SELECT runs FROM ${table} WHERE ${key} AND day < ? ORDER BY day DESC LIMIT 1), 0)`),
  };
}

/** A key's last row as this writer left it: its day and totals. */
interface Last {
  day: string;
  sums: number[];
}

/**
 * One key's moves written, oldest day first. A day after the key's last row, or more runs on its day
 * (its totals known: as a live stream's runs come), is one insert or update; any other day's move is added to its row, made from the
 * day before's when it has none, and to every later row of its key.
 */
function writeKey(id: string, key: readonly number[], days: Map<string, Move>, stmts: TotalStatements, withBrandRuns: boolean, lasts: Map<string, Last>): void {
  for (const day of [...days.keys()].sort()) {
    const m = days.get(day)!;
    const b = m.brand;
    if (m.runs === 0 && isZero(b)) continue;
    const values = withBrandRuns ? [m.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n]
      : [m.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n];
    const last = lasts.get(id);
    if (last !== undefined && (day > last.day || (day === last.day && m.runs >= 0))) {
      // After the last row, or more runs of its day (a day's runs arrive over several batches).
      const sums = last.sums.map((v, i) => v + values[i]!);
      if (day > last.day) stmts.append.run(...key, day, ...sums);
      else stmts.addOn.run(...values, ...key, day);
      lasts.set(id, { day, sums });
      continue;
    }
    const later = stmts.addAfter.all(...values, ...key, day) as Array<[string, ...number[]]>;
    const row = stmts.upsert.get(...key, day, ...values, ...key, day, ...values) as number[];
    const dropped = m.runs < 0 && stmts.drop.run(...key, day, ...key, day).changes > 0;
    const newest = later.reduce<[string, ...number[]] | null>((a, r) => (a === null || r[0] > a[0] ? r : a), null);
    if (newest !== null) lasts.set(id, { day: newest[0], sums: newest.slice(1) as number[] });
    else if (!dropped) lasts.set(id, { day, sums: row });
    else lasts.delete(id);
  }
}

function moveOf<K>(into: Map<string, Key<K>>, id: string, key: K, day: string): Move {
  let k = into.get(id);
  if (k === undefined) into.set(id, (k = { key, days: new Map() }));
  let m = k.days.get(day);
  if (m === undefined) k.days.set(day, (m = { runs: 0, brand: zeroMention() }));
  return m;
}

/** Keys whose last row is kept in memory (a 1,000-prompt x 8-engine project has 8,000 pairs, and ~5 competitors a prompt). */
const LASTS_KEPT = 200_000;

export class RangeTotals {
  private readonly keys: Keys;
  /** The batch's moves by `${project} ${engine} ${prompt}`. */
  private readonly pairs = new Map<string, Key<[number, number, number]>>();
  /** The batch's competitor moves by `${project} ${prompt} ${competitor}`. */
  private readonly hits = new Map<string, Key<[number, number, number]>>();
  /** Each key's last row, as far as this writer knows (the keys it wrote since another connection last did). */
  private readonly lasts = new Map<string, Last>();
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

  /** A transaction starts; `othersWrote`: another connection committed since (the last rows known may have moved). */
  begin(othersWrote: boolean): void {
    if (othersWrote) this.lasts.clear();
  }

  /** The batch's moves into the running totals. */
  write(): void {
    // Forgotten past a bound, as Keys does: a key not known is written the long way once.
    if (this.lasts.size > LASTS_KEPT) this.lasts.clear();
    for (const [id, k] of this.pairs) writeKey(`p ${id}`, k.key, k.days, this.stmts.pair, true, this.lasts);
    for (const [id, k] of this.hits) {
      for (const m of k.days.values()) m.runs = m.brand.runs;
      writeKey(`c ${id}`, k.key, k.days, this.stmts.hit, false, this.lasts);
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
    this.lasts.clear();
    this.keys.fail();
  }
}
