import type { Statement } from 'better-sqlite3';
import type { Db } from './db';

/**
 * slice_dims, slice_pairs and slice_pair_dims (migration 024): the runs naming a dimension per
 * project and dims number, per pair, and per pair and dims number, over every day, whatever counts.
 * Written from slice_days' moves of a batch (slice-sums.ts), summed per key first (one upsert per
 * row the batch moves, many rows a statement); a row whose runs fall to 0 is deleted, so the tables hold the same rows
 * whatever the batching.
 */
export type DayMove = { readonly key: readonly [project: number, day: string, engine: number, prompt: number, dims: number]; readonly runs: number };

interface Level {
  add: Statement;
  /** ROWS_A_STATEMENT rows added in one statement. */
  addMany: Statement;
  drop: Statement;
  /** The batch's moves by key (slice_dims only: the pairs' levels are summed in key order). */
  moves: Map<string, Moved>;
}

/** Rows upserted per statement: a batch moves ~1,000 rows of each level, and one statement for many costs less. */
const ROWS_A_STATEMENT = 64;

/** Sorted by key: consecutive rows share the table's pages. */
const byKey = (a: Moved, b: Moved): number => {
  for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i]! - b.key[i]!;
  return 0;
};

interface Moved { key: number[]; runs: number }

/** A level's rows (in key order) added, ROWS_A_STATEMENT to a statement; a row at 0 runs then deleted. */
function upsert(l: Level, moved: readonly Moved[]): void {
  const rows = moved.filter((m) => m.runs !== 0);
  let i = 0;
  for (; i + ROWS_A_STATEMENT <= rows.length; i += ROWS_A_STATEMENT) {
    const params: number[] = [];
    for (let j = i; j < i + ROWS_A_STATEMENT; j++) params.push(...rows[j]!.key, rows[j]!.runs);
    l.addMany.run(params);
  }
  for (; i < rows.length; i++) l.add.run(...rows[i]!.key, rows[i]!.runs);
  // After every add: a row whose runs fell to 0 goes.
  for (const m of rows) if (m.runs < 0) l.drop.run(...m.key);
}

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
    // Runs naming no dimension are not listed.
    const named: DayMove[] = [];
    for (const m of moves) if (m.key[4] !== 0 && m.runs !== 0) named.push(m);
    // Sorted by pair and dims number, the days of a row next to each other: a pair's rows and its
    // total are summed in one pass, with no key strings (a row's moves of several days may cancel
    // out: a run moved between days).
    named.sort((a, b) => a.key[0] - b.key[0] || a.key[2] - b.key[2] || a.key[3] - b.key[3] || a.key[4] - b.key[4]);
    const pairRows: Moved[] = [];
    const pairDimsRows: Moved[] = [];
    for (let i = 0; i < named.length;) {
      const [project, , engine, prompt] = named[i]!.key;
      let pairRuns = 0;
      while (i < named.length && named[i]!.key[0] === project && named[i]!.key[2] === engine && named[i]!.key[3] === prompt) {
        const n = named[i]!.key[4];
        let runs = 0;
        for (; i < named.length && named[i]!.key[0] === project && named[i]!.key[2] === engine && named[i]!.key[3] === prompt && named[i]!.key[4] === n; i++) runs += named[i]!.runs;
        pairRuns += runs;
        pairDimsRows.push({ key: [project, engine, prompt, n], runs });
        const id = `${project} ${n}`;
        const d = dims.moves.get(id);
        if (d === undefined) dims.moves.set(id, { key: [project, n], runs });
        else d.runs += runs;
      }
      pairRows.push({ key: [project, engine, prompt], runs: pairRuns });
    }
    upsert(dims, [...dims.moves.values()].sort(byKey));
    dims.moves.clear();
    upsert(pairs, pairRows);
    upsert(pairDims, pairDimsRows);
  }

  clear(): void {
    for (const l of this.levels) l.moves.clear();
  }
}
