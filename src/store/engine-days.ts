import type { Db } from './db';
import { addMention, isZero, zeroMention, type MentionDelta } from './contributions';
import type { RunFacts, RunStore } from './run-store';

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

/** What counts, asked of the entity tables (the caller keeps the answers across batches: aggregates.ts KnownCounting). */
export interface Counting {
  run(projectId: string, engineId: string, promptId: string): boolean;
  competitor(projectId: string, competitorId: string): boolean;
}

function newDay(projectId: string, day: string, engineId: string): EngineDay {
  return { projectId, day, engineId, runs: 0, brand: zeroMention(), competitorRuns: 0, prompts: new Set() };
}

/** A counted, succeeded run's contribution; `trackedCompetitors`: how many tracked competitors it mentions. */
function addSums(d: EngineDay, promptId: string, brandPosition: number | null, brandSentiment: number | null, trackedCompetitors: number): void {
  d.runs += 1;
  if (brandPosition !== null) addMention(d.brand, brandPosition, brandSentiment, 1);
  d.competitorRuns += trackedCompetitors;
  d.prompts.add(promptId);
}

const addRun = (d: EngineDay, run: RunFacts, trackedCompetitors: number): void => addSums(d, run.prompt_id, run.brand_position, run.brand_sentiment, trackedCompetitors);

/** By project, then day, then engine: nested by the runs' own strings, never by a key joined from them (a new string to hash per run). */
type ByDay<T> = Map<string, Map<string, Map<string, T>>>;

function at<T>(m: ByDay<T>, projectId: string, day: string): Map<string, T> {
  let byDay = m.get(projectId);
  if (byDay === undefined) m.set(projectId, (byDay = new Map()));
  let byEngine = byDay.get(day);
  if (byEngine === undefined) byDay.set(day, (byEngine = new Map()));
  return byEngine;
}

/** A row's prompt list as stored, and as a set: a batch that adds no prompt to a day reuses the text. */
interface PromptList {
  ids: Set<string>;
  text: string;
}

/** Days of each project whose prompt lists the writer keeps (the newest it wrote): a day-ordered log or a live stream writes there. */
const DAYS_KEPT = 3;

export class EngineDays {
  private readonly deltas: ByDay<EngineDay> = new Map();
  /** Rows counted again after the batch, from the runs: those a superseded run left. */
  private readonly again: ByDay<true> = new Map();
  /**
   * The prompt lists of rows this writer wrote lately, as committed (forgotten whenever that may not
   * hold: a failed transaction, another writer's commit, a row counted again), so that adding to a
   * row does not read and split its list first.
   */
  private readonly lists: ByDay<PromptList> = new Map();
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
      put: db.prepare(`INSERT OR REPLACE INTO agg_engine_day (project_id, day, engine_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed,
          sentiment_n, competitor_runs, prompt_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      drop: db.prepare('DELETE FROM agg_engine_day WHERE project_id = ? AND day = ? AND engine_id = ?'),
      dropProject: db.prepare('DELETE FROM agg_engine_day WHERE project_id = ?'),
      dropDays: db.prepare('DELETE FROM agg_engine_day WHERE project_id = ? AND day BETWEEN ? AND ?'),
      dayEdges: db.prepare('SELECT min(day), max(day) FROM agg_engine_day WHERE project_id = ?').raw(true),
    };
  }

  /** A transaction starts; `othersWrote`: another connection committed since this writer's last one (its lists may be stale). */
  begin(othersWrote: boolean): void {
    this.clear();
    if (othersWrote) this.lists.clear();
  }

  /** The transaction failed: the lists it wrote are not in the table. */
  fail(): void {
    this.clear();
    this.lists.clear();
  }

  clear(): void {
    this.deltas.clear();
    this.again.clear();
  }

  /** A superseded run left its row: counted again after the batch (its other runs' sums stay exact, its prompt list may shrink). */
  left(run: RunFacts): void {
    at(this.again, run.project_id, run.day).set(run.engine_id, true);
  }

  /** A counted, succeeded run of the batch; `trackedCompetitors`: how many tracked competitors it mentions. */
  add(run: RunFacts, trackedCompetitors: number): void {
    if (this.again.get(run.project_id)?.get(run.day)?.has(run.engine_id)) return; // counted again from the runs, this one among them
    const byEngine = at(this.deltas, run.project_id, run.day);
    let d = byEngine.get(run.engine_id);
    if (!d) byEngine.set(run.engine_id, (d = newDay(run.project_id, run.day, run.engine_id)));
    addRun(d, run, trackedCompetitors);
  }

  /** The batch's sums into their rows (the prompt lists united with the stored ones), then the rows to count again. */
  write(counting: Counting, competitorsOf: (run: RunFacts) => number): void {
    for (const [projectId, byDay] of this.deltas) {
      for (const [day, byEngine] of byDay) {
        for (const d of byEngine.values()) if (!this.again.get(projectId)?.get(day)?.has(d.engineId)) this.add1(d);
      }
      this.forgetOldDays(projectId);
    }
    for (const [projectId, byDay] of this.again) {
      for (const [day, byEngine] of byDay) {
        for (const engineId of byEngine.keys()) {
          this.lists.get(projectId)?.get(day)?.delete(engineId);
          this.stmts.drop.run(projectId, day, engineId);
          const d = newDay(projectId, day, engineId);
          this.runs.eachSucceededRun(projectId, day, day, (run) => {
            if (run.engine_id === engineId && counting.run(projectId, run.engine_id, run.prompt_id)) addRun(d, run, competitorsOf(run));
          });
          if (!isEmpty(d)) this.replace(d);
        }
      }
    }
    this.clear();
  }

  /**
   * Every row of a project counted again from its runs (what counts in it changed): the caller feeds
   * its counted runs in day order (RunStore.eachSucceeded), and a day's rows are written when the next begins.
   */
  recounter(projectId: string): { add(day: string, engineId: string, promptId: string, brandPosition: number | null, brandSentiment: number | null, trackedCompetitors: number): void; finish(): void } {
    this.stmts.dropProject.run(projectId);
    this.lists.delete(projectId);
    const open = new Map<string, EngineDay>();
    let current = '';
    const flush = (): void => {
      for (const d of open.values()) if (!isEmpty(d)) this.replace(d);
      open.clear();
    };
    return {
      add: (day, engineId, promptId, brandPosition, brandSentiment, trackedCompetitors) => {
        if (day !== current) {
          flush();
          current = day;
        }
        let d = open.get(engineId);
        if (!d) open.set(engineId, (d = newDay(projectId, day, engineId)));
        addSums(d, promptId, brandPosition, brandSentiment, trackedCompetitors);
      },
      finish: () => {
        flush();
        this.lists.delete(projectId);
      },
    };
  }

  /**
   * The project's rows of the days from..to (inclusive) counted again from its runs: one slice of a
   * recount (aggregates.ts recountStep), after the batch's own sums are written.
   */
  recountDays(projectId: string, from: string, to: string, counting: Counting): void {
    this.stmts.dropDays.run(projectId, from, to);
    this.lists.delete(projectId);
    const rows = new Map<string, EngineDay>();
    this.runs.eachSucceededIn(projectId, from, to, (_id, completedAt, f) => {
      const { engineId, promptId, brandPosition, brandSentiment } = f;
      if (!counting.run(projectId, engineId, promptId)) return;
      let tracked = 0;
      for (const [competitorId] of f.hits) if (counting.competitor(projectId, competitorId)) tracked += 1;
      const day = completedAt.slice(0, 10);
      const key = `${day} ${engineId}`;
      let d = rows.get(key);
      if (d === undefined) rows.set(key, (d = newDay(projectId, day, engineId)));
      addSums(d, promptId, brandPosition, brandSentiment, tracked);
    });
    for (const d of rows.values()) if (!isEmpty(d)) this.replace(d);
  }

  /** The first and last day the project has rows of (null when none). */
  dayEdges(projectId: string): [string | null, string | null] {
    return this.stmts.dayEdges.get(projectId) as [string | null, string | null];
  }

  /** A batch's sums added to a row, its prompt list the union of the stored one and the batch's. */
  private add1(d: EngineDay): void {
    if (isEmpty(d)) return;
    const byEngine = at(this.lists, d.projectId, d.day);
    let list = byEngine.get(d.engineId);
    if (list === undefined) {
      const stored = this.stmts.prompts.get(d.projectId, d.day, d.engineId) as string | undefined;
      list = stored ? { ids: new Set(stored.split(',')), text: stored } : { ids: new Set(), text: '' };
      byEngine.set(d.engineId, list);
    }
    let grew = false;
    for (const id of d.prompts) {
      if (list.ids.has(id)) continue;
      list.ids.add(id);
      grew = true;
    }
    if (grew) list.text = [...list.ids].sort().join(',');
    const b = d.brand;
    this.stmts.add.run(d.projectId, d.day, d.engineId, d.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n, d.competitorRuns, list.text);
  }

  /** A row written whole (counted again from the runs). */
  private replace(d: EngineDay): void {
    const b = d.brand;
    const text = [...d.prompts].sort().join(',');
    this.stmts.put.run(d.projectId, d.day, d.engineId, d.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n, d.competitorRuns, text);
  }

  /** Only the newest DAYS_KEPT days' lists of a project are kept. */
  private forgetOldDays(projectId: string): void {
    const byDay = this.lists.get(projectId);
    if (byDay === undefined || byDay.size <= DAYS_KEPT) return;
    const days = [...byDay.keys()].sort();
    for (const day of days.slice(0, days.length - DAYS_KEPT)) byDay.delete(day);
  }
}

const isEmpty = (d: EngineDay): boolean => d.runs === 0 && d.competitorRuns === 0 && isZero(d.brand);
