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
  drop: Statement;
  moves: Map<string, { key: number[]; runs: number }>;
}

export class SliceDims {
  private readonly levels: Level[];

  constructor(db: Db) {
    const level = (table: string, columns: string[]): Level => ({
      add: db.prepare(`INSERT INTO ${table} (${columns.join(', ')}, runs) VALUES (${columns.map(() => '?').join(', ')}, ?)
        ON CONFLICT (${columns.join(', ')}) DO UPDATE SET runs = runs + excluded.runs`),
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
      for (const m of l.moves.values()) {
        if (m.runs === 0) continue;
        l.add.run(...m.key, m.runs);
        if (m.runs < 0) l.drop.run(...m.key);
      }
      l.moves.clear();
    }
  }

  clear(): void {
    for (const l of this.levels) l.moves.clear();
  }
}
