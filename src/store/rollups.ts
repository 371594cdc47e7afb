import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import type { CitedRollups } from './cited';
import { periodEnd, periodStart } from './periods';

/** The grains kept as roll-ups of the day rows (migrations 007, 009), and marked while pending (010). */
export type RolledGrain = 'week' | 'month';
const ROLLED: readonly RolledGrain[] = ['week', 'month'];

/** A period of one project whose roll-up rows are not up to date (rollup_pending). */
interface Pending { project_id: string; grain: RolledGrain; day: string }

interface GrainStatements { dropPrompts: Statement; fillPrompts: Statement; dropCompetitors: Statement; fillCompetitors: Statement }

/** One period's prompt and competitor rows dropped, then summed again from its day rows (as test/oracle-aggregates.sql does). */
function grainStatements(db: Db, grain: RolledGrain): GrainStatements {
  const mention = 'sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)';
  const days = 'WHERE project_id = @project AND day BETWEEN @start AND @end';
  return {
    dropPrompts: db.prepare(`DELETE FROM agg_prompt_${grain} WHERE project_id = @project AND day = @start`),
    fillPrompts: db.prepare(`INSERT INTO agg_prompt_${grain} (project_id, day, engine_id, prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
      SELECT project_id, @start, engine_id, prompt_id, sum(runs), sum(brand_runs), ${mention}
      FROM agg_prompt_day ${days} GROUP BY engine_id, prompt_id`),
    dropCompetitors: db.prepare(`DELETE FROM agg_competitor_${grain} WHERE project_id = @project AND day = @start`),
    fillCompetitors: db.prepare(`INSERT INTO agg_competitor_${grain} (project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
      SELECT project_id, @start, engine_id, prompt_id, competitor_id, sum(runs), ${mention}
      FROM agg_competitor_day ${days} GROUP BY engine_id, prompt_id, competitor_id`),
  };
}

/** Whether a bulk batch leaves a period's roll-up rows alone (its deltas are not written): see PendingRollups.plan. */
export type Waits = (projectId: string, grain: RolledGrain, start: string) => boolean;

/** A bulk batch's decisions, per project and grain: the frontier period, and the pending ones it passes. */
export interface RollupPlan {
  waits: Waits;
  /** After the batch's day rows are written: the frontiers marked, the periods passed counted again. */
  finish(): void;
}

/**
 * Week and month roll-ups brought up to date once per period instead of once per batch (migration
 * 010). Per project and grain, a bulk batch's latest period (or the pending one, if later) is the
 * frontier: its roll-up rows wait, marked pending, while batches add its days; a pending period
 * behind the frontier (the batches have moved past it: a day-ordered replay, a week later) is
 * counted again once from its day rows and unmarked. Any other period the batch touches moves by
 * its deltas as in a batch that is not bulk, so a log in no order costs what it did. So at most one
 * period per project and grain is pending, and settle() counts it again when the writer ends or
 * catches up. Counting a period again gives exactly what the deltas would have: its rows are the sums
 * of its day rows, its cited URLs their merge (cited.ts).
 */
export class PendingRollups {
  private readonly sums: Record<RolledGrain, GrainStatements>;
  private readonly mark: Statement;
  private readonly unmark: Statement;
  private readonly marked: Statement;

  constructor(db: Db, private readonly cited: CitedRollups) {
    this.sums = { week: grainStatements(db, 'week'), month: grainStatements(db, 'month') };
    this.mark = db.prepare('INSERT OR IGNORE INTO rollup_pending (project_id, grain, day) VALUES (?, ?, ?)');
    this.unmark = db.prepare('DELETE FROM rollup_pending WHERE project_id = ? AND grain = ? AND day = ?');
    this.marked = db.prepare('SELECT project_id, grain, day FROM rollup_pending');
  }

  /** What a bulk batch touching these (project, day) pairs leaves waiting; call finish() once its day rows are written. */
  plan(days: Iterable<readonly [projectId: string, day: string]>): RollupPlan {
    // Per project and grain: the pending periods, and the frontier (the latest of those and of the batch's).
    // Maps by project, then a field per grain: waits() runs for every roll-up row of the batch, and builds no key.
    const pending = new Map<string, Record<RolledGrain, Set<string>>>();
    for (const p of this.marked.all() as Pending[]) {
      let of = pending.get(p.project_id);
      if (!of) pending.set(p.project_id, (of = { week: new Set(), month: new Set() }));
      of[p.grain].add(p.day);
    }
    const frontier = new Map<string, Record<RolledGrain, string>>();
    for (const [projectId, day] of days) {
      let f = frontier.get(projectId);
      if (!f) {
        const latest = (grain: RolledGrain): string => [...(pending.get(projectId)?.[grain] ?? [])].reduce((a, b) => (b > a ? b : a), periodStart(day, grain));
        frontier.set(projectId, (f = { week: latest('week'), month: latest('month') }));
      }
      for (const grain of ROLLED) {
        const start = periodStart(day, grain);
        if (start > f[grain]) f[grain] = start;
      }
    }
    return {
      waits: (projectId, grain, start) => frontier.get(projectId)?.[grain] === start || pending.get(projectId)?.[grain].has(start) === true,
      finish: () => {
        for (const [projectId, f] of frontier) {
          for (const grain of ROLLED) {
            const waiting = pending.get(projectId)?.[grain];
            for (const start of waiting ?? []) if (start !== f[grain]) this.countAgain({ project_id: projectId, grain, day: start });
            if (waiting?.has(f[grain]) !== true) this.mark.run(projectId, grain, f[grain]);
          }
        }
      },
    };
  }

  /** Every pending period counted again: the roll-ups are up to date (what a writer leaves when it ends or catches up). */
  settle(): void {
    for (const p of this.marked.all() as Pending[]) this.countAgain(p);
  }

  private countAgain(p: Pending): void {
    const s = this.sums[p.grain];
    const range = { project: p.project_id, start: p.day, end: periodEnd(p.day, p.grain) };
    s.dropPrompts.run(range);
    s.fillPrompts.run(range);
    s.dropCompetitors.run(range);
    s.fillCompetitors.run(range);
    this.cited.countPeriodAgain(p.project_id, p.grain, p.day);
    this.unmark.run(p.project_id, p.grain, p.day);
  }
}

/** How many periods are pending in a database (0 before migration 010, which a read-only open does not apply). */
export function pendingPeriods(db: Db): number {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rollup_pending'").pluck().get() !== undefined;
  return exists ? (db.prepare('SELECT count(*) FROM rollup_pending').pluck().get() as number) : 0;
}
