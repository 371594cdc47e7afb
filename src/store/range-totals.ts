import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { addDelta, isZero, zeroMention, type MentionDelta } from './contributions';

/**
 * range_totals and range_hit_totals (migration 025): per pair (and per prompt and competitor) and per
 * day it has runs, the sums of every day up to it. A batch's moves of slice_days (its runs summed per
 * row, slice-sums.ts) are summed again per key and day; a day's move is added to its row and to every later row of its key (none when the
 * runs come in day order, as a live stream's do), its row made from the day before's when it has
 * none, and deleted when its day's runs fall to 0, so the rows are the same whatever the batching.
 */

/**
 * The statements of one table: write a key's row whose totals are known (after its last row, or its
 * last row again), add to the rows after a day (returning them), add a day's move to its row or make
 * it from the day before's (returning the row), drop a day's row when its day has no runs.
 */
interface TotalStatements {
  append: Statement;
  /** APPEND_ROWS rows written in one statement. */
  appendMany: Statement;
  addAfter: Statement;
  upsert: Statement;
  drop: Statement;
}

const SUMS = ['position_sum', 'rr_fixed', 'sentiment_fixed', 'sentiment_n'] as const;

/**
 * Rows written per statement. Rows whose totals are known (appended, or a day's row again when its
 * runs come over two batches) are nearly every row a batch writes (runs come in day order); one
 * statement for many of them, the keys in order, costs less than a statement each.
 */
const APPEND_ROWS = 64;

/** A table's appends of one batch, written APPEND_ROWS at a time; the rest at flush(). */
class Appends {
  private readonly params: Array<number | string> = [];
  private rows = 0;

  constructor(private readonly stmts: TotalStatements, private readonly width: number) {}

  push(key: readonly number[], day: string, sums: readonly number[]): void {
    for (const k of key) this.params.push(k);
    this.params.push(day);
    for (const v of sums) this.params.push(v);
    if (++this.rows < APPEND_ROWS) return;
    this.stmts.appendMany.run(this.params);
    this.params.length = 0;
    this.rows = 0;
  }

  /** Written before any other statement reads or writes the table, and at the batch's end. */
  flush(): void {
    for (let i = 0; i < this.rows; i++) this.stmts.append.run(this.params.slice(i * this.width, (i + 1) * this.width));
    this.params.length = 0;
    this.rows = 0;
  }

  clear(): void {
    this.params.length = 0;
    this.rows = 0;
  }
}

function statements(db: Db, table: string, keyColumns: readonly string[], sums: readonly string[]): TotalStatements {
  const key = keyColumns.map((c) => `${c} = ?`).join(' AND ');
  const previous = `SELECT ${sums.join(', ')} FROM ${table} WHERE ${key} AND day < ? ORDER BY day DESC LIMIT 1`;
  const columns = `${keyColumns.join(', ')}, day, ${sums.join(', ')}`;
  const row = `(${[...keyColumns, 'day', ...sums].map(() => '?').join(', ')})`;
  const setTotals = `ON CONFLICT (${keyColumns.join(', ')}, day) DO UPDATE SET ${sums.map((c) => `${c} = excluded.${c}`).join(', ')}`;
  return {
    // A new row, or the key's last row (a day's runs arrive over several batches) set to its totals.
    append: db.prepare(`INSERT INTO ${table} (${columns}) VALUES ${row} ${setTotals}`),
    appendMany: db.prepare(`INSERT INTO ${table} (${columns}) VALUES ${Array.from({ length: APPEND_ROWS }, () => row).join(', ')} ${setTotals}`),
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
 * One key's move of one day written (a key's days in order, oldest first). A day after the key's
 * last row, or more runs on its day (its totals known: as a live stream's runs come), is one insert
 * or update; any other day's move is added to its row, made from the day before's when it has none,
 * and to every later row of its key.
 */
function writeDay(id: string, key: readonly number[], day: string, values: readonly number[], stmts: TotalStatements, lasts: Map<string, Last>, appends: Appends): void {
  const runs = values[0]!;
  const last = lasts.get(id);
  if (last !== undefined && (day > last.day || (day === last.day && runs >= 0))) {
    // After the last row, or more runs of its day (a day's runs arrive over several batches).
    // The last row's totals moved in place: this writer's own copy.
    const sums = last.sums;
    for (let i = 0; i < sums.length; i++) sums[i] = sums[i]! + values[i]!;
    // A new row, or its day's row set to the totals: one multi-row statement takes both.
    appends.push(key, day, sums);
    last.day = day;
    return;
  }
  // The long way reads the key's rows: every append before it written first.
  appends.flush();
  const later = stmts.addAfter.all(...values, ...key, day) as Array<[string, ...number[]]>;
  const row = stmts.upsert.get(...key, day, ...values, ...key, day, ...values) as number[];
  const dropped = runs < 0 && stmts.drop.run(...key, day, ...key, day).changes > 0;
  const newest = later.reduce<[string, ...number[]] | null>((a, r) => (a === null || r[0] > a[0] ? r : a), null);
  if (newest !== null) lasts.set(id, { day: newest[0], sums: newest.slice(1) as number[] });
  else if (!dropped) lasts.set(id, { day, sums: row });
  else lasts.delete(id);
}

/** A batch's move of slice_days with its competitors' (slice-sums.ts: summed per row from the batch's runs). */
export interface SliceMove {
  readonly key: readonly [project: number, day: string, engine: number, prompt: number, dims: number];
  readonly runs: number;
  readonly brand: MentionDelta;
  readonly hits: ReadonlyMap<number, MentionDelta>;
}

/** A competitor's move in one slice row. */
interface HitMove {
  project: number;
  prompt: number;
  competitor: number;
  day: string;
  d: MentionDelta;
}

const byPairDay = (a: SliceMove, b: SliceMove): number => a.key[0] - b.key[0] || a.key[2] - b.key[2] || a.key[3] - b.key[3] || (a.key[1] < b.key[1] ? -1 : a.key[1] > b.key[1] ? 1 : 0);
const byHitDay = (a: HitMove, b: HitMove): number => a.project - b.project || a.prompt - b.prompt || a.competitor - b.competitor || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0);

/** Keys whose last row is kept in memory (a 1,000-prompt x 8-engine project has 8,000 pairs, and ~5 competitors a prompt). */
const LASTS_KEPT = 200_000;

export class RangeTotals {
  /** Each key's last row, as far as this writer knows (the keys it wrote since another connection last did). */
  private readonly lasts = new Map<string, Last>();
  private readonly stmts;
  private readonly appends;

  constructor(db: Db) {
    this.stmts = {
      pair: statements(db, 'range_totals', ['project', 'engine', 'prompt'], ['runs', 'brand_runs', ...SUMS]),
      hit: statements(db, 'range_hit_totals', ['project', 'prompt', 'competitor'], ['runs', ...SUMS]),
    };
    // A row: 3 key columns, the day and its sums.
    this.appends = { pair: new Appends(this.stmts.pair, 3 + 1 + 6), hit: new Appends(this.stmts.hit, 3 + 1 + 5) };
  }

  /** A transaction starts; `othersWrote`: another connection committed since (the last rows known may have moved). */
  begin(othersWrote: boolean): void {
    if (othersWrote) this.lasts.clear();
  }

  /**
   * The batch's moves into the running totals: slice_days' moves (the batch's runs, added and taken
   * away, summed per row) summed again per key and day. Sorted by key and day rather than summed in
   * maps by a string key: no object per run, and consecutive rows share the table's pages.
   */
  write(moves: Iterable<SliceMove>): void {
    // Forgotten past a bound, as Keys does: a key not known is written the long way once.
    if (this.lasts.size > LASTS_KEPT) this.lasts.clear();
    const pairs: SliceMove[] = [];
    const hits: HitMove[] = [];
    for (const m of moves) {
      pairs.push(m);
      for (const [competitor, d] of m.hits) hits.push({ project: m.key[0], prompt: m.key[3], competitor, day: m.key[1], d });
    }
    pairs.sort(byPairDay);
    for (let i = 0; i < pairs.length;) {
      const [project, day, engine, prompt] = pairs[i]!.key;
      let runs = 0;
      const b = zeroMention();
      for (; i < pairs.length; i++) {
        const k = pairs[i]!.key;
        if (k[0] !== project || k[2] !== engine || k[3] !== prompt || k[1] !== day) break;
        runs += pairs[i]!.runs;
        addDelta(b, pairs[i]!.brand);
      }
      if (runs === 0 && isZero(b)) continue;
      writeDay(`p ${project} ${engine} ${prompt}`, [project, engine, prompt], day, [runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n],
        this.stmts.pair, this.lasts, this.appends.pair);
    }
    this.appends.pair.flush();
    hits.sort(byHitDay);
    for (let i = 0; i < hits.length;) {
      const { project, prompt, competitor, day } = hits[i]!;
      const b = zeroMention();
      for (; i < hits.length; i++) {
        const h = hits[i]!;
        if (h.project !== project || h.prompt !== prompt || h.competitor !== competitor || h.day !== day) break;
        addDelta(b, h.d);
      }
      // A competitor row's runs are its mentions: the brand sums' runs column.
      if (isZero(b)) continue;
      writeDay(`c ${project} ${prompt} ${competitor}`, [project, prompt, competitor], day, [b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n],
        this.stmts.hit, this.lasts, this.appends.hit);
    }
    this.appends.hit.flush();
  }

  clear(): void {
    this.appends.pair.clear();
    this.appends.hit.clear();
  }

  /** The transaction failed: the last rows known may not be in the tables any more. */
  fail(): void {
    this.clear();
    this.lasts.clear();
  }
}
