import type { Db } from './db';
import { citeFacts } from './contributions';
import { PeriodSums } from './period-sums';
import { RollupRows } from './rollup-rows';
import { periodEnd, periodStart, ROLLED, type RolledGrain } from './periods';
import type { RunFacts, RunStore } from './run-store';
import { addDays } from '../lib/time';

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
 * same runs go through the same PeriodSums.add. It is done at the batch's end (finish), never while
 * the batch's runs are being summed: the runs table holds the whole batch already, so a count made
 * halfway would include runs that are then added to the period's sums as well.
 */

/** Whether a run counts (COUNTED_RUNS), as the batch's entity tables say. */
export type CountsRun = (run: RunFacts) => boolean;

/**
 * A project's sums in memory. Per grain its frontier: the latest period seen, marked pending, with
 * the sums of its runs so far. A run of both frontiers (nearly every run of a day-ordered log or of a
 * live stream) is added once, to `cell` (the days the frontier week and month share), which is
 * folded into both when either frontier moves on: one accumulation per run, not one per grain.
 * Runs of earlier periods (late, out of order) are summed per batch and period in `batch`.
 */
interface ProjectSums {
  frontier: Partial<Record<RolledGrain, PeriodSums>>;
  cell: PeriodSums | null;
  batch: Record<RolledGrain, Map<string, PeriodSums>>;
}

const newProjectSums = (): ProjectSums => ({ frontier: {}, cell: null, batch: { week: new Map(), month: new Map() } });

export class Rollups {
  private readonly rows: RollupRows;
  private readonly stmts;
  /** By project. The frontiers are in step with rollup_pending while `synced`. */
  private readonly projects = new Map<string, ProjectSums>();
  /** Projects with sums of the batch's own. */
  private readonly inBatch = new Set<ProjectSums>();
  /** Sums the batch added to: untrusted if its transaction fails. */
  private readonly touched = new Set<PeriodSums>();
  private synced = false;

  constructor(db: Db, private readonly runs: RunStore) {
    this.rows = new RollupRows(db);
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
    for (const p of this.inBatch) for (const grain of ROLLED) p.batch[grain].clear();
    this.inBatch.clear();
    this.touched.clear();
    if (othersWrote) for (const p of this.projects.values()) this.untrustFrontiers(p);
    if (this.synced && !othersWrote) return;
    const known = new Map(this.projects);
    this.projects.clear();
    for (const m of this.stmts.marked.all() as Array<{ project_id: string; grain: RolledGrain; day: string }>) {
      const p = this.projectSums(m.project_id);
      const had = known.get(m.project_id);
      const kept = had?.frontier[m.grain];
      if (kept?.period === m.day) {
        p.frontier[m.grain] = kept;
        if (had!.cell) this.untrustFrontiers(p); // the cell's runs may be in one grain's period only now
      } else {
        const fresh = new PeriodSums(m.project_id, m.grain, m.day);
        fresh.trusted = false; // its runs so far were added by another writer, or by one that is gone
        p.frontier[m.grain] = fresh;
      }
    }
    this.synced = true;
  }

  /** The transaction failed: what it added to the sums is not in the database. */
  fail(): void {
    for (const s of this.touched) s.trusted = false;
    this.synced = false;
  }

  /** A succeeded run's contribution to its week and month. */
  add(run: RunFacts, counted: boolean): void {
    const p = this.projectSums(run.project_id);
    const week = periodStart(run.day, 'week');
    const month = periodStart(run.day, 'month');
    this.advance(p, run.project_id, 'week', week);
    this.advance(p, run.project_id, 'month', month);
    const fw = p.frontier.week!;
    const fm = p.frontier.month!;
    if (week === fw.period && month === fm.period) {
      if (p.cell === null) p.cell = new PeriodSums(run.project_id, 'week', week);
      p.cell.add(run, counted);
      this.touched.add(p.cell);
      return;
    }
    // Earlier than a frontier (a late run): into the frontier it shares, and the batch's sums of the rest.
    for (const [grain, period, frontier] of [['week', week, fw], ['month', month, fm]] as const) {
      const s = period === frontier.period ? frontier : this.batchSums(p, run.project_id, grain, period);
      s.add(run, counted);
      this.touched.add(s);
    }
  }

  /**
   * A superseded run left the week and month of `day`: they are counted again from their runs. (A
   * period later than the frontier becomes it, as a run of it would: one period never has both
   * frontier and batch sums.)
   */
  left(projectId: string, day: string): void {
    const p = this.projectSums(projectId);
    for (const grain of ROLLED) {
      const period = periodStart(day, grain);
      this.advance(p, projectId, grain, period);
      const frontier = p.frontier[grain];
      if (frontier?.period === period) {
        frontier.trusted = false;
        if (p.cell) p.cell.trusted = false; // folded into this frontier, maybe
      } else {
        this.batchSums(p, projectId, grain, period).trusted = false;
      }
    }
  }

  /** The batch's end: the sums of earlier periods are merged into their rows (or counted again). */
  finish(): void {
    for (const p of this.inBatch) {
      for (const grain of ROLLED) {
        for (const s of p.batch[grain].values()) this.write(s);
        p.batch[grain].clear();
      }
    }
    this.inBatch.clear();
  }

  /** Every frontier merged into its rows (or counted again) and unmarked: nothing pending (a writer's last step). */
  settle(): void {
    for (const p of this.projects.values()) {
      this.foldCell(p);
      for (const s of Object.values(p.frontier)) {
        this.write(s);
        this.stmts.unmark.run(s.projectId, s.grain, s.period);
      }
    }
    this.projects.clear();
  }

  /**
   * A project's cited rows counted again from its runs (what counts in it changed): the caller feeds
   * its counted runs in completion order (RunStore.eachSucceeded) with their URLs, and a period's
   * row is written once the runs have passed it (its other lists as they are), so a year of a busy
   * project holds a month at a time. A run is cited once, into the days its week and month share,
   * and those are folded into both. A period with sums in memory gets the fresh count as its cited
   * sums instead, so that row + sums stay the period's runs; every stored period the runs do not
   * reach (or whose sums are held) loses its cited rows.
   */
  citedRecounter(projectId: string): { add(runId: string, at: string, engineId: string, promptId: string, cited: ReadonlyArray<[string, string | null]>): void; finish(): void } {
    const p = this.projects.get(projectId);
    const held = (grain: RolledGrain, period: string): PeriodSums | undefined =>
      p && (p.frontier[grain]?.period === period ? p.frontier[grain] : p.batch[grain].get(period));
    if (p) {
      p.cell?.urls.clear(); // its periods (the frontiers) get their full count below
      for (const grain of ROLLED) for (const s of [p.frontier[grain], ...p.batch[grain].values()]) s?.urls.clear();
    }
    const stale = new Set(this.rows.periodsOf(projectId).map(([grain, day]) => `${grain} ${day}`));
    const open: Partial<Record<RolledGrain, PeriodSums>> = {};
    let cell: PeriodSums | null = null;
    const flush = (s: PeriodSums): void => {
      const into = held(s.grain, s.period);
      if (into) {
        into.urls = s.urls;
        return;
      }
      stale.delete(`${s.grain} ${s.period}`);
      this.writeCited(s);
    };
    const foldCell = (): void => {
      if (cell === null) return;
      for (const grain of ROLLED) open[grain]!.absorb(cell);
      cell = null;
    };
    return {
      add: (runId, at, engineId, promptId, cited) => {
        if (cited.length === 0) return;
        const day = at.slice(0, 10);
        const week = periodStart(day, 'week');
        const month = periodStart(day, 'month');
        if (cell !== null && (open.week!.period !== week || open.month!.period !== month)) foldCell();
        for (const [grain, period] of [['week', week], ['month', month]] as const) {
          const s = open[grain];
          if (s?.period === period) continue;
          if (s) flush(s);
          open[grain] = new PeriodSums(projectId, grain, period);
        }
        cell ??= new PeriodSums(projectId, 'week', week);
        citeFacts(cell.urls, cited, engineId, at, promptId, runId);
      },
      finish: () => {
        foldCell();
        for (const grain of ROLLED) if (open[grain]) flush(open[grain]);
        // Periods with cited rows the runs no longer reach, and periods held in memory: their stored cited rows go.
        for (const key of stale) {
          const [grain, day] = key.split(' ') as [RolledGrain, string];
          this.writeCited(new PeriodSums(projectId, grain, day));
        }
      },
    };
  }

  /**
   * What counts changed in the project: the sums held in memory were added under the old rule, so they
   * are counted again from the runs when written (a recount's slices pass them by: recountPeriods).
   */
  untrust(projectId: string): void {
    const p = this.projects.get(projectId);
    if (p === undefined) return;
    this.untrustFrontiers(p);
    for (const grain of ROLLED) for (const s of p.batch[grain].values()) s.trusted = false;
  }

  /**
   * The project's week and month rows of the periods that start on from..to (inclusive), counted again
   * from their runs (their cited lists: the rest does not depend on what counts): one slice of a
   * recount (aggregates.ts recountStep). A period with sums in memory is left to them (untrusted by
   * untrust(): counted from the runs when written).
   */
  recountPeriods(projectId: string, from: string, to: string, counts: (engineId: string, promptId: string) => boolean): void {
    const p = this.projects.get(projectId);
    const starts = new Set<string>();
    for (const [grain, day] of this.rows.periodsOf(projectId)) if (day >= from && day <= to) starts.add(`${grain} ${day}`);
    for (let day = from; day <= to; day = addDays(day, 1)) for (const grain of ROLLED) if (periodStart(day, grain) === day) starts.add(`${grain} ${day}`);
    for (const key of [...starts].sort()) {
      const [grain, period] = key.split(' ') as [RolledGrain, string];
      const held = p && (p.frontier[grain]?.period === period ? p.frontier[grain] : p.batch[grain].get(period));
      if (held) {
        held.trusted = false;
        continue;
      }
      // Only the cited lists depend on what counts (the others key by prompt and competitor, which readers check).
      const s = new PeriodSums(projectId, grain, period);
      this.runs.eachSucceededIn(projectId, period, periodEnd(period, grain), (id, completedAt, f) => {
        if (counts(f.engineId, f.promptId)) citeFacts(s.urls, f.cited, f.engineId, completedAt, f.promptId, id);
      });
      this.writeCited(s);
    }
  }

  /** The first and last period start the project has rows of (null when none). */
  periodEdges(projectId: string): [string | null, string | null] {
    const days = this.rows.periodsOf(projectId).map(([, day]) => day).sort();
    return [days[0] ?? null, days.at(-1) ?? null];
  }

  /** What counts, as the batch's entity tables say: for periods counted again from their runs. */
  counts: CountsRun = () => false;

  private projectSums(projectId: string): ProjectSums {
    let p = this.projects.get(projectId);
    if (p === undefined) this.projects.set(projectId, (p = newProjectSums()));
    return p;
  }

  /** The frontier of a grain moves to `period` when that is later: the cell is folded first, the old frontier written and unmarked. */
  private advance(p: ProjectSums, projectId: string, grain: RolledGrain, period: string): void {
    const frontier = p.frontier[grain];
    if (frontier !== undefined && frontier.period >= period) return;
    this.foldCell(p);
    if (frontier !== undefined) {
      // An untrusted one is counted from its runs at the batch's end (finish), as the batch's sums are: the
      // runs table already holds every run of the batch, so counted now, the batch's runs of the period not
      // summed yet would be in the count and then added again as the period's batch sums.
      if (frontier.trusted) this.write(frontier);
      else this.batchSumsAre(p, frontier);
      this.stmts.unmark.run(projectId, grain, frontier.period);
    }
    p.frontier[grain] = new PeriodSums(projectId, grain, period);
    this.stmts.mark.run(projectId, grain, period);
  }

  /** The cell's runs into both frontiers (they belong to each). */
  private foldCell(p: ProjectSums): void {
    const cell = p.cell;
    if (cell === null) return;
    for (const grain of ROLLED) {
      const f = p.frontier[grain]!;
      f.absorb(cell);
      this.touched.add(f);
    }
    p.cell = null;
  }

  private untrustFrontiers(p: ProjectSums): void {
    for (const s of Object.values(p.frontier)) s.trusted = false;
    if (p.cell) p.cell.trusted = false;
  }

  /** A former frontier becomes its period's batch sums (it had none: one period never has both). */
  private batchSumsAre(p: ProjectSums, s: PeriodSums): void {
    this.inBatch.add(p);
    p.batch[s.grain].set(s.period, s);
  }

  /** The batch's sums of a period that is not a frontier (made here). */
  private batchSums(p: ProjectSums, projectId: string, grain: RolledGrain, period: string): PeriodSums {
    this.inBatch.add(p);
    let s = p.batch[grain].get(period);
    if (s === undefined) p.batch[grain].set(period, (s = new PeriodSums(projectId, grain, period)));
    return s;
  }

  /** Sums into their period's row: added to it when trusted, else the period counted again from its runs and written whole. */
  private write(s: PeriodSums): void {
    let sums = s;
    if (s.trusted) {
      const withStored = new PeriodSums(s.projectId, s.grain, s.period);
      if (this.rows.addStored(withStored)) {
        withStored.absorb(s);
        sums = withStored;
      }
    } else {
      sums = new PeriodSums(s.projectId, s.grain, s.period);
      this.runs.eachSucceededRun(s.projectId, s.period, periodEnd(s.period, s.grain), (run) => sums.add(run, this.counts(run)));
    }
    this.rows.put(sums);
  }

  /** A period's counted URLs (counted again) written in place of its stored ones, its other lists as they are. */
  private writeCited(s: PeriodSums): void {
    this.rows.putCited(s);
  }
}

/** How many periods are pending in a database (0 before migration 010, which a read-only open does not apply). */
export function pendingPeriods(db: Db): number {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rollup_pending'").pluck().get() !== undefined;
  return exists ? (db.prepare('SELECT count(*) FROM rollup_pending').pluck().get() as number) : 0;
}
