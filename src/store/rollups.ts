import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { CitedTables } from './cited';
import { addMention, citeOnce, newCited, zeroMention, type Cited, type MentionDelta } from './contributions';
import { periodEnd, periodStart, ROLLED, type RolledGrain } from './periods';
import type { RunFacts, RunStore, StoredCitation, StoredMention } from './runs';

/**
 * The week and month roll-ups (migrations 007, 009), written once per period instead of once per
 * batch (migrations 010, 011).
 *
 * Per project and grain, the latest period a writer has seen is its frontier: marked pending in
 * rollup_pending (readers read its days from the runs instead), its rows left alone, and what the
 * writer adds to it summed in memory (PeriodSums). When a batch reaches a later period, or the writer
 * settles (the end of a replay, a stop), the sums are merged into the rows in one statement per row
 * and the mark goes. A run of an earlier period (late, or out of order) is summed per batch and merged
 * at the batch's end. So a day-ordered log, or a live stream of runs dated now, writes each roll-up
 * row about once per period, not once per batch.
 *
 * Memory is not the truth: the marks and the runs are. Sums that may not be exactly what the rows
 * lack are untrusted, and an untrusted period is counted again from its runs instead of merged: a
 * mark this writer did not make (left by a killed writer), a commit by another connection meanwhile,
 * a failed transaction, a superseded run leaving the period (lists, minimums and maximums do not
 * subtract), a change of what counts. Counting again gives exactly what the merges would have: the
 * same runs go through the same PeriodSums.add.
 */

interface PromptSums { engineId: string; promptId: string; runs: number; brand: MentionDelta }
interface CompetitorSums { engineId: string; promptId: string; competitorId: string; sums: MentionDelta }

/** What a run contributes besides its own columns, found once per run for both grains. */
export interface RunParts {
  competitors: StoredMention[];
  /** Its URLs when the run counts (cited roll-ups hold counted runs only), else none. */
  urls: StoredCitation[];
}

/** One project's roll-up rows of one period and grain, as the sums of the runs added to them. */
export class PeriodSums {
  readonly prompts = new Map<string, PromptSums>();
  readonly competitors = new Map<string, CompetitorSums>();
  readonly cited = new Map<string, Cited>();
  readonly citedByEngine = new Map<string, { engineId: string; cited: Cited }>();
  /** False once rows + sums may not be exactly the period's runs: then it is counted again from them. */
  trusted = true;

  constructor(readonly projectId: string, readonly grain: RolledGrain, readonly period: string) {}

  /** A succeeded run of the period. Keys join uuids and URLs with a space, which neither contains. */
  add(run: RunFacts, parts: RunParts): void {
    const bucket = `${run.engine_id} ${run.prompt_id}`;
    let p = this.prompts.get(bucket);
    if (!p) this.prompts.set(bucket, (p = { engineId: run.engine_id, promptId: run.prompt_id, runs: 0, brand: zeroMention() }));
    p.runs += 1;
    if (run.brand_position !== null) addMention(p.brand, run.brand_position, run.brand_sentiment, 1);
    for (const m of parts.competitors) {
      const key = `${bucket} ${m.competitor_id!}`;
      let c = this.competitors.get(key);
      if (!c) this.competitors.set(key, (c = { engineId: run.engine_id, promptId: run.prompt_id, competitorId: m.competitor_id!, sums: zeroMention() }));
      addMention(c.sums, m.position, m.sentiment, 1);
    }
    for (const u of parts.urls) {
      let c = this.cited.get(u.url);
      if (!c) this.cited.set(u.url, (c = newCited(u.url, u.domain, run.completed_at)));
      citeOnce(c, u, run);
      const key = `${u.url} ${run.engine_id}`;
      let e = this.citedByEngine.get(key);
      if (!e) this.citedByEngine.set(key, (e = { engineId: run.engine_id, cited: newCited(u.url, u.domain, run.completed_at) }));
      citeOnce(e.cited, u, run);
    }
  }
}

interface SumStatements { prompt: Statement; competitor: Statement; dropPrompts: Statement; dropCompetitors: Statement }

function sumStatements(db: Db, grain: RolledGrain): SumStatements {
  const add = `runs = runs + excluded.runs, position_sum = position_sum + excluded.position_sum, rr_fixed = rr_fixed + excluded.rr_fixed,
    sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed, sentiment_n = sentiment_n + excluded.sentiment_n`;
  return {
    prompt: db.prepare(`INSERT INTO agg_prompt_${grain} (project_id, day, engine_id, prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, day, engine_id, prompt_id) DO UPDATE SET brand_runs = brand_runs + excluded.brand_runs, ${add}`),
    competitor: db.prepare(`INSERT INTO agg_competitor_${grain} (project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, day, engine_id, prompt_id, competitor_id) DO UPDATE SET ${add}`),
    dropPrompts: db.prepare(`DELETE FROM agg_prompt_${grain} WHERE project_id = ? AND day = ?`),
    dropCompetitors: db.prepare(`DELETE FROM agg_competitor_${grain} WHERE project_id = ? AND day = ?`),
  };
}

/** The parts of a stored run the roll-ups add (its URLs only if it counts now): for periods counted again. */
export type PartsOf = (run: RunFacts) => RunParts;

/** The frontier sums of one project, per grain. */
type Frontiers = Partial<Record<RolledGrain, PeriodSums>>;

export class Rollups {
  private readonly sums: Record<RolledGrain, SumStatements>;
  private readonly cited: CitedTables;
  private readonly stmts;
  /** By project: the frontier of each grain, marked pending. In step with rollup_pending while `synced`. */
  private readonly frontiers = new Map<string, Frontiers>();
  /** The batch's sums of periods that are not a frontier (yet), by project, grain and period. */
  private readonly batch = new Map<string, PeriodSums>();
  /** Sums the batch added to: untrusted if its transaction fails. */
  private readonly touched = new Set<PeriodSums>();
  private synced = false;

  constructor(db: Db, private readonly runs: RunStore) {
    this.sums = { week: sumStatements(db, 'week'), month: sumStatements(db, 'month') };
    this.cited = new CitedTables(db);
    this.stmts = {
      mark: db.prepare('INSERT OR IGNORE INTO rollup_pending (project_id, grain, day) VALUES (?, ?, ?)'),
      unmark: db.prepare('DELETE FROM rollup_pending WHERE project_id = ? AND grain = ? AND day = ?'),
      marked: db.prepare('SELECT project_id, grain, day FROM rollup_pending'),
    };
  }

  /**
   * At the start of each transaction. `othersWrote`: another connection committed since this
   * writer's last transaction, so its sums may lack runs: all untrusted. After a failure, or at
   * first, the frontiers are taken from the marks again (a mark without sums: untrusted).
   */
  begin(othersWrote: boolean): void {
    this.batch.clear();
    this.touched.clear();
    if (othersWrote) for (const f of this.frontiers.values()) for (const s of Object.values(f)) s.trusted = false;
    if (this.synced && !othersWrote) return;
    const marks = new Map<string, Frontiers>();
    for (const m of this.stmts.marked.all() as Array<{ project_id: string; grain: RolledGrain; day: string }>) {
      let f = marks.get(m.project_id);
      if (!f) marks.set(m.project_id, (f = {}));
      const known = this.frontiers.get(m.project_id)?.[m.grain];
      if (known?.period === m.day) f[m.grain] = known;
      else {
        const fresh = new PeriodSums(m.project_id, m.grain, m.day);
        fresh.trusted = false; // its runs so far were added by another writer, or by one that is gone
        f[m.grain] = fresh;
      }
    }
    this.frontiers.clear();
    for (const [p, f] of marks) this.frontiers.set(p, f);
    this.synced = true;
  }

  /** The transaction failed: what it added to the sums is not in the database. */
  fail(): void {
    for (const s of this.touched) s.trusted = false;
    this.synced = false;
  }

  /** A succeeded run's contribution to its week and month. */
  add(run: RunFacts, parts: RunParts): void {
    for (const grain of ROLLED) {
      const s = this.sumsOf(run.project_id, grain, periodStart(run.day, grain));
      s.add(run, parts);
      this.touched.add(s);
    }
  }

  /** A superseded run left the week and month of `day`: they are counted again from their runs. */
  left(projectId: string, day: string): void {
    for (const grain of ROLLED) this.sumsOf(projectId, grain, periodStart(day, grain)).trusted = false;
  }

  /**
   * The batch's end: per project and grain the latest period is the frontier (kept in memory,
   * marked); every other sums is merged into its rows (or counted again), and a frontier passed is unmarked.
   */
  finish(partsOf: PartsOf): void {
    for (const s of this.batch.values()) {
      let f = this.frontiers.get(s.projectId);
      if (!f) this.frontiers.set(s.projectId, (f = {}));
      const frontier = f[s.grain];
      if (frontier && frontier.period > s.period) {
        this.write(s, partsOf);
        continue;
      }
      if (frontier) {
        this.write(frontier, partsOf);
        this.stmts.unmark.run(s.projectId, s.grain, frontier.period);
      }
      f[s.grain] = s;
      this.stmts.mark.run(s.projectId, s.grain, s.period);
    }
    this.batch.clear();
  }

  /** Every frontier merged into its rows (or counted again) and unmarked: nothing pending (a writer's last step). */
  settle(partsOf: PartsOf): void {
    for (const [projectId, f] of this.frontiers) {
      for (const s of Object.values(f)) {
        this.write(s, partsOf);
        this.stmts.unmark.run(projectId, s.grain, s.period);
      }
    }
    this.frontiers.clear();
  }

  /**
   * A project's cited rows counted again from its runs (what counts in it changed): the caller feeds
   * its counted runs in completion order (RunStore.history) with their URLs, and a period's rows are
   * written once the runs have passed it, so a year of a busy project holds a month at a time. A
   * period with sums in memory gets the fresh count as its cited sums instead (its rows are dropped
   * with the rest), so that rows + sums stay the period's runs.
   */
  citedRecounter(projectId: string): { add(run: RunFacts, urls: StoredCitation[]): void; finish(): void } {
    this.cited.dropProject(projectId);
    const held = new Map<string, PeriodSums>();
    for (const s of [...Object.values(this.frontiers.get(projectId) ?? {}), ...this.batch.values()]) {
      if (s.projectId !== projectId) continue;
      s.cited.clear();
      s.citedByEngine.clear();
      held.set(`${s.grain} ${s.period}`, s);
    }
    const open = new Map<RolledGrain, PeriodSums>();
    const flush = (s: PeriodSums): void => {
      const into = held.get(`${s.grain} ${s.period}`);
      if (!into) return this.writeCited(s);
      for (const [k, v] of s.cited) into.cited.set(k, v);
      for (const [k, v] of s.citedByEngine) into.citedByEngine.set(k, v);
    };
    return {
      add: (run, urls) => {
        if (urls.length === 0) return;
        for (const grain of ROLLED) {
          const period = periodStart(run.day, grain);
          let s = open.get(grain);
          if (s?.period !== period) {
            if (s) flush(s);
            open.set(grain, (s = new PeriodSums(projectId, grain, period)));
          }
          s.add(run, { competitors: [], urls });
        }
      },
      finish: () => {
        for (const s of open.values()) flush(s);
      },
    };
  }

  private sumsOf(projectId: string, grain: RolledGrain, period: string): PeriodSums {
    const frontier = this.frontiers.get(projectId)?.[grain];
    if (frontier?.period === period) return frontier;
    const key = `${projectId} ${grain} ${period}`;
    let s = this.batch.get(key);
    if (!s) this.batch.set(key, (s = new PeriodSums(projectId, grain, period)));
    return s;
  }

  /** Sums into their rows: merged when trusted, else the period's rows dropped and counted again from its runs. */
  private write(s: PeriodSums, partsOf: PartsOf): void {
    let sums = s;
    if (!s.trusted) {
      const g = this.sums[s.grain];
      g.dropPrompts.run(s.projectId, s.period);
      g.dropCompetitors.run(s.projectId, s.period);
      this.cited.dropPeriod(s.grain, s.projectId, s.period);
      sums = new PeriodSums(s.projectId, s.grain, s.period);
      for (const run of this.runs.succeeded(s.projectId, s.period, periodEnd(s.period, s.grain))) sums.add(run, partsOf(run));
    }
    const g = this.sums[sums.grain];
    for (const p of sums.prompts.values()) {
      const b = p.brand;
      g.prompt.run(sums.projectId, sums.period, p.engineId, p.promptId, p.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n);
    }
    for (const c of sums.competitors.values()) {
      const m = c.sums;
      g.competitor.run(sums.projectId, sums.period, c.engineId, c.promptId, c.competitorId, m.runs, m.position_sum, m.rr_fixed, m.sentiment_fixed, m.sentiment_n);
    }
    this.writeCited(sums);
  }

  private writeCited(s: PeriodSums): void {
    for (const c of s.cited.values()) this.cited.put(s.grain, s.projectId, s.period, c, null);
    for (const e of s.citedByEngine.values()) this.cited.put(s.grain, s.projectId, s.period, e.cited, e.engineId);
  }
}

/** How many periods are pending in a database (0 before migration 010, which a read-only open does not apply). */
export function pendingPeriods(db: Db): number {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rollup_pending'").pluck().get() !== undefined;
  return exists ? (db.prepare('SELECT count(*) FROM rollup_pending').pluck().get() as number) : 0;
}
