import type { Db } from './db';
import { addMention, isZero, listOf, zeroMention, type MentionDelta } from './contributions';
import type { RunFacts, RunStore } from './runs';

/**
 * agg_engine_day (migrations 008, 011): per project, day and engine, the sums of the counted runs
 * (COUNTED_RUNS: a non-deleted prompt of the run's project, a known engine), the runs mentioning
 * tracked competitors, and the distinct prompts of those runs (sorted, comma-separated). The trend,
 * the daily scores and a range's days read these rows. A batch adds its runs' sums, one statement per
 * row; rows a superseded run left, and every row of a project whose counting changed, are counted
 * again from the runs (a list cannot subtract).
 */

interface EngineDay {
  projectId: string;
  day: string;
  engineId: string;
  runs: number;
  brand: MentionDelta;
  competitorRuns: number;
  prompts: Set<string>;
}

/** What counts, asked of the entity tables (memoised per batch by the caller). */
export interface Counting {
  run(projectId: string, engineId: string, promptId: string): boolean;
  competitor(projectId: string, competitorId: string): boolean;
}

const keyOf = (projectId: string, day: string, engineId: string): string => `${projectId} ${day} ${engineId}`;

function newDay(projectId: string, day: string, engineId: string): EngineDay {
  return { projectId, day, engineId, runs: 0, brand: zeroMention(), competitorRuns: 0, prompts: new Set() };
}

/** A counted, succeeded run's contribution; `competitors`: the competitors it mentions, once each. */
function addRun(d: EngineDay, run: RunFacts, trackedCompetitors: number): void {
  d.runs += 1;
  if (run.brand_position !== null) addMention(d.brand, run.brand_position, run.brand_sentiment, 1);
  d.competitorRuns += trackedCompetitors;
  d.prompts.add(run.prompt_id);
}

export class EngineDays {
  private readonly deltas = new Map<string, EngineDay>();
  /** Rows counted again after the batch, from the runs: those a superseded run left. */
  private readonly again = new Map<string, { projectId: string; day: string; engineId: string }>();
  private readonly stmts;

  constructor(db: Db, private readonly runs: RunStore) {
    this.stmts = {
      prompts: db.prepare('SELECT prompt_ids FROM agg_engine_day WHERE project_id = ? AND day = ? AND engine_id = ?').pluck(),
      add: db.prepare(`INSERT INTO agg_engine_day (project_id, day, engine_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n, competitor_runs, prompt_ids)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project_id, day, engine_id) DO UPDATE SET runs = runs + excluded.runs, brand_runs = brand_runs + excluded.brand_runs,
          position_sum = position_sum + excluded.position_sum, rr_fixed = rr_fixed + excluded.rr_fixed,
          sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed, sentiment_n = sentiment_n + excluded.sentiment_n,
          competitor_runs = competitor_runs + excluded.competitor_runs, prompt_ids = excluded.prompt_ids`),
      drop: db.prepare('DELETE FROM agg_engine_day WHERE project_id = ? AND day = ? AND engine_id = ?'),
      dropProject: db.prepare('DELETE FROM agg_engine_day WHERE project_id = ?'),
    };
  }

  clear(): void {
    this.deltas.clear();
    this.again.clear();
  }

  /** A superseded run left its row: counted again after the batch (its other runs' sums stay exact, its prompt list may shrink). */
  left(run: RunFacts): void {
    this.again.set(keyOf(run.project_id, run.day, run.engine_id), { projectId: run.project_id, day: run.day, engineId: run.engine_id });
  }

  /** A counted, succeeded run of the batch; `trackedCompetitors`: how many tracked competitors it mentions. */
  add(run: RunFacts, trackedCompetitors: number): void {
    const key = keyOf(run.project_id, run.day, run.engine_id);
    if (this.again.has(key)) return; // counted again from the runs, this one among them
    let d = this.deltas.get(key);
    if (!d) this.deltas.set(key, (d = newDay(run.project_id, run.day, run.engine_id)));
    addRun(d, run, trackedCompetitors);
  }

  /** The batch's sums into their rows (the prompt lists united with the stored ones), then the rows to count again. */
  write(counting: Counting, competitorsOf: (run: RunFacts) => number): void {
    for (const d of this.deltas.values()) {
      if (this.again.has(keyOf(d.projectId, d.day, d.engineId))) continue;
      const stored = this.stmts.prompts.get(d.projectId, d.day, d.engineId) as string | undefined;
      if (stored) for (const id of stored.split(',')) d.prompts.add(id);
      this.put(d);
    }
    for (const a of this.again.values()) {
      this.stmts.drop.run(a.projectId, a.day, a.engineId);
      const d = newDay(a.projectId, a.day, a.engineId);
      for (const run of this.runs.succeeded(a.projectId, a.day, a.day)) {
        if (run.engine_id === a.engineId && counting.run(a.projectId, run.engine_id, run.prompt_id)) addRun(d, run, competitorsOf(run));
      }
      if (d.runs > 0) this.put(d);
    }
    this.clear();
  }

  /**
   * Every row of a project counted again from its runs (what counts in it changed): the caller feeds
   * its counted runs in day order (RunStore.history), and a day's rows are written when the next begins.
   */
  recounter(projectId: string, trackedOf: (run: RunFacts) => number): { add(run: RunFacts): void; finish(): void } {
    this.stmts.dropProject.run(projectId);
    const open = new Map<string, EngineDay>();
    let day = '';
    const flush = (): void => {
      for (const d of open.values()) this.put(d);
      open.clear();
    };
    return {
      add: (run) => {
        if (run.day !== day) {
          flush();
          day = run.day;
        }
        let d = open.get(run.engine_id);
        if (!d) open.set(run.engine_id, (d = newDay(projectId, run.day, run.engine_id)));
        addRun(d, run, trackedOf(run));
      },
      finish: flush,
    };
  }

  private put(d: EngineDay): void {
    const b = d.brand;
    if (d.runs === 0 && d.competitorRuns === 0 && isZero(b)) return;
    this.stmts.add.run(d.projectId, d.day, d.engineId, d.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n, d.competitorRuns, listOf(d.prompts));
  }
}
