import type { Statement } from 'better-sqlite3';
import type { Db } from './db';

/**
 * slice_dims, slice_pairs and slice_pair_dims (migration 024): the runs naming a dimension per
 * project and dims number, per pair, and per pair and dims number, over every day, whatever counts.
 * Written from slice_days' moves of a batch (slice-sums.ts), summed per key first (one upsert per
 * row the batch moves); a row whose runs fall to 0 is deleted, so the tables hold the same rows
 * whatever the batching.
 */
export type DayMove = { readonly key: readonly [project: number, day: string, engine: number, prompt: number, dims: number]; readonly runs: number };

interface Level {
  add: Statement;
  /** ROWS_A_STATEMENT rows added in one statement. */
  addMany: Statement;
  drop: Statement;
  moves: Map<string, { key: number[]; runs: number }>;
}

/** Rows upserted per statement: a batch moves ~1,000 rows of each level, and one statement for many costs less. */
const ROWS_A_STATEMENT = 64;

/** Sorted by key: consecutive rows share the table's pages. */
const byKey = (a: { key: number[] }, b: { key: number[] }): number => {
  for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i]! - b.key[i]!;
  return 0;
};

export class SliceDims {
  private readonly levels: Level[];

  constructor(db: Db) {
    const upsert = (table: string, columns: string[], rows: number): string => `INSERT INTO ${table} (${columns.join(', ')}, runs)
      VALUES ${Array.from({ length: rows }, () => `(${columns.map(() => '?').join(', ')}, ?)`).join(', ')}
      ON CONFLICT (${columns.join(', ')}) DO UPDATE SET runs = runs + excluded.runs`;
    const level = (table: string, columns: string[]): Level => ({
      add: db.prepare(upsert(table, columns, 1)),
      addMany: db.prepare(upsert(table, columns, ROWS_A_STATEMENT)),
      drop: db.prepare(`DELETE FROM ${table} WHERE ${columns.map((c) => `${c} = ?`).join(' AND ')} AND runs = 0`),
      moves: new Map(),
    });
    this.levels = [
      level('slice_dims', ['project', 'dims']),
      level('slice_pairs', ['project', 'engine', 'prompt']),
      level('slice_pair_dims', ['project', 'engine', 'prompt', 'dims']),
    ];
  }

  /** A batch's day moves (slice_days' keys and runs) into the three tables. */
  write(moves: Iterable<DayMove>): void {
    const [dims, pairs, pairDims] = this.levels as [Level, Level, Level];
    // Summed per row first: a row's moves of several days may cancel out (a run moved between days).
    const add = (l: Level, id: string, key: () => number[], runs: number): void => {
      const m = l.moves.get(id);
      if (m === undefined) l.moves.set(id, { key: key(), runs });
      else m.runs += runs;
    };
    for (const { key: [project, , engine, prompt, n], runs } of moves) {
      if (n === 0 || runs === 0) continue; // runs naming no dimension are not listed
      const pair = `${project} ${engine} ${prompt}`;
      add(dims, `${project} ${n}`, () => [project, n], runs);
      add(pairs, pair, () => [project, engine, prompt], runs);
      add(pairDims, `${pair} ${n}`, () => [project, engine, prompt, n], runs);
    }
    for (const l of this.levels) {
      const rows = [...l.moves.values()].filter((m) => m.runs !== 0).sort(byKey);
      let i = 0;
      for (; i + ROWS_A_STATEMENT <= rows.length; i += ROWS_A_STATEMENT) {
        const params: number[] = [];
        for (let j = i; j < i + ROWS_A_STATEMENT; j++) params.push(...rows[j]!.key, rows[j]!.runs);
        l.addMany.run(params);
      }
      for (; i < rows.length; i++) l.add.run(...rows[i]!.key, rows[i]!.runs);
      // After every add: a row whose runs fell to 0 goes.
      for (const m of rows) if (m.runs < 0) l.drop.run(...m.key);
      l.moves.clear();
    }
  }

  clear(): void {
    for (const l of this.levels) l.moves.clear();
  }
}
