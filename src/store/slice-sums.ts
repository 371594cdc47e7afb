import type { Db } from './db';
import { addMention, isZero, zeroMention, type MentionDelta } from './contributions';
import { Dims } from './dims';
import { Keys } from './keys';
import type { RunFacts } from './run-store';

/**
 * slice_days and slice_hits (migration 022): every succeeded run's sums per project, day, engine,
 * prompt and dims number (and competitor), whatever counts. A batch adds its runs and takes away the
 * ones it superseded, summed in memory first (one upsert per row the batch moves); a row whose runs
 * fall to 0 is deleted, so the table holds the same rows whatever the batching.
 */

interface Row {
  key: [project: number, day: string, engine: number, prompt: number, dims: number];
  runs: number;
  brand: MentionDelta;
  hits: Map<number, MentionDelta>;
}

export class SliceSums {
  private readonly keys: Keys;
  private readonly dims: Dims;
  /** The batch's moves, by `${project} ${day} ${engine} ${prompt} ${dims}`. */
  private readonly rows = new Map<string, Row>();
  private readonly stmts;

  constructor(db: Db) {
    this.keys = new Keys(db);
    this.dims = new Dims(db);
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
    if (row === undefined) this.rows.set(id, (row = { key: [project, run.day, engine, prompt, dims], runs: 0, brand: zeroMention(), hits: new Map() }));
    row.runs += sign;
    if (run.brand_position !== null) addMention(row.brand, run.brand_position, run.brand_sentiment, sign);
    for (const h of run.competitors) {
      const c = this.keys.numberOf(h.competitor_id);
      let d = row.hits.get(c);
      if (d === undefined) row.hits.set(c, (d = zeroMention()));
      addMention(d, h.position, h.sentiment, sign);
    }
  }

  /** The batch's moves into their rows; rows left without runs deleted. */
  write(): void {
    for (const row of this.rows.values()) {
      const [project, day, engine, prompt, dims] = row.key;
      const b = row.brand;
      let fell = false;
      if (row.runs !== 0 || !isZero(b)) {
        this.stmts.day.run(project, day, engine, prompt, dims, row.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n);
        fell = row.runs < 0;
      }
      for (const [c, d] of row.hits) {
        if (isZero(d)) continue;
        this.stmts.hit.run(project, day, engine, prompt, dims, c, d.runs, d.position_sum, d.rr_fixed, d.sentiment_fixed, d.sentiment_n);
        if (d.runs < 0) fell = true;
      }
      if (fell) {
        this.stmts.dropDay.run(project, day, engine, prompt, dims);
        this.stmts.dropHits.run(project, day, engine, prompt, dims);
      }
    }
    this.rows.clear();
  }

  clear(): void {
    this.rows.clear();
  }

  /** The transaction failed: numbers given in it are not in the tables any more. */
  fail(): void {
    this.rows.clear();
    this.keys.fail();
    this.dims.fail();
  }
}
