import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { EngineDays, type Counting } from './engine-days';
import { Rollups } from './rollups';
import { RangeTotals } from './range-totals';
import { SliceSums } from './slice-sums';
import type { RunFacts, RunStore } from './run-store';
import { addDays } from '../lib/time';
import { periodStart } from './periods';

export { RR_SCALE, SENTIMENT_SCALE } from './contributions';

interface GroupDelta { run_group_id: string; project_id: string; runs: number; succeeded: number; failed: number }

/**
 * What counts (COUNTED_RUNS: a known engine, a non-deleted prompt of the run's project; a tracked
 * competitor), asked of the entity tables once per id and kept across batches: a prompt, competitor
 * or engine the writer sees change is forgotten (asked again when next needed), and everything when
 * the writer's memory may be wrong (another writer committed, a transaction failed).
 */
class KnownCounting implements Counting {
  private readonly engines = new Map<string, boolean>();
  /** By project, then id. */
  private readonly prompts = new Map<string, Map<string, boolean>>();
  private readonly competitors = new Map<string, Map<string, boolean>>();
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      promptCounts: db.prepare('SELECT 1 FROM prompts WHERE id = ? AND project_id = ? AND deleted = 0').pluck(),
      engineKnown: db.prepare('SELECT 1 FROM engines WHERE id = ?').pluck(),
      competitorTracked: db.prepare('SELECT 1 FROM competitors WHERE id = ? AND project_id = ? AND deleted = 0').pluck(),
    };
  }

  run(projectId: string, engineId: string, promptId: string): boolean {
    let engine = this.engines.get(engineId);
    if (engine === undefined) this.engines.set(engineId, (engine = this.stmts.engineKnown.get(engineId) !== undefined));
    return engine && KnownCounting.ask(this.prompts, projectId, promptId, this.stmts.promptCounts);
  }

  competitor(projectId: string, competitorId: string): boolean {
    return KnownCounting.ask(this.competitors, projectId, competitorId, this.stmts.competitorTracked);
  }

  forget(table: 'prompt' | 'competitor', projectId: string, id: string): void {
    (table === 'prompt' ? this.prompts : this.competitors).get(projectId)?.delete(id);
  }

  forgetEngine(engineId: string): void {
    this.engines.delete(engineId);
  }

  clear(): void {
    this.engines.clear();
    this.prompts.clear();
    this.competitors.clear();
  }

  private static ask(m: Map<string, Map<string, boolean>>, projectId: string, id: string, stmt: Statement): boolean {
    let byId = m.get(projectId);
    if (byId === undefined) m.set(projectId, (byId = new Map()));
    let yes = byId.get(id);
    if (yes === undefined) byId.set(id, (yes = stmt.get(id, projectId) !== undefined));
    return yes;
  }
}

/** A ref a stored run makes (run_refs, migration 011): which prompts, engines and competitors a project's runs name. */
type RefKind = 'prompt' | 'engine' | 'competitor';
/**
 * Days a recount slice covers: a fortnight of a busy project (15 prompts x 5 engines: ~1,000 runs) is
 * about as much work as a batch of events, so a change of what counts delays no batch much.
 */
const SLICE_DAYS = 14;
/** A batch's time for recount slices: one slice at least while any is left, another only when one like the last still fits. */
export const RECOUNT_MS_PER_BATCH = 20;

/** Refs known to be in run_refs already (by project, then kind), kept so that a batch writes only new ones; bounded. */
const REFS_KEPT = 100_000;
type KnownRefs = Record<RefKind, Set<string>>;

/**
 * What a batch's runs move, besides their own rows (run-store.ts):
 * - agg_run_group: counts per run group and project, added per batch (a superseded run subtracts);
 * - agg_engine_day: the counted sums per project, day and engine (engine-days.ts);
 * - the week and month roll-ups (rollups.ts), written once per period;
 * - slice_days and slice_hits: every succeeded run's sums per day, engine, prompt and dimensions, whatever counts (slice-sums.ts),
 *   with them, per month and country (023) and per engine and one dimension's value (026: slice-values.ts),
 *   and its runs per dims number and pair over every day (slice-dims.ts: /dimensions);
 * - range_totals and range_hit_totals: the same sums as running totals per pair (and prompt x competitor) and day (range-totals.ts);
 * - run_refs: what the runs name, so a change of what counts knows whether stored runs are concerned.
 * Runs are collected as the batch applies them and summed at its end, when the entity tables hold
 * the batch's own changes: what counts is what the batch leaves. Nothing reads a bucket back, so
 * applying a run costs the same however many runs its day already holds.
 */
export class Aggregator {
  private readonly added: RunFacts[] = [];
  private readonly removed: RunFacts[] = [];
  /** By run group, then project. */
  private readonly group = new Map<string, Map<string, GroupDelta>>();
  private readonly known: KnownCounting;
  /** Prompts and competitors whose project or deleted flag changed in the batch, engines first seen. */
  private readonly countingChanges = new Map<string, { table: 'prompt' | 'competitor'; projectId: string; id: string }>();
  private readonly newEngines = new Set<string>();
  private readonly engineDays: EngineDays;
  private readonly rollups: Rollups;
  private readonly slices: SliceSums;
  private readonly totals: RangeTotals;
  private readonly knownRefs = new Map<string, KnownRefs>();
  private knownCount = 0;
  private readonly stmts;

  constructor(db: Db, private readonly runs: RunStore) {
    this.engineDays = new EngineDays(db, runs);
    this.rollups = new Rollups(db, runs);
    this.slices = new SliceSums(db);
    this.totals = new RangeTotals(db);
    this.known = new KnownCounting(db);
    this.stmts = {
      addRef: db.prepare('INSERT OR IGNORE INTO run_refs (kind, ref_id, project_id) VALUES (?, ?, ?)'),
      hasRef: db.prepare('SELECT 1 FROM run_refs WHERE kind = ? AND ref_id = ? AND project_id = ?').pluck(),
      refProjects: db.prepare("SELECT project_id FROM run_refs WHERE kind = 'engine' AND ref_id = ?").pluck(),
      addGroup: db.prepare(`INSERT INTO agg_run_group (run_group_id, project_id, prompt_run_count, succeeded_count, failed_count)
        VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (run_group_id, project_id) DO UPDATE SET prompt_run_count = prompt_run_count + excluded.prompt_run_count,
          succeeded_count = succeeded_count + excluded.succeeded_count, failed_count = failed_count + excluded.failed_count`),
      dropEmptyGroup: db.prepare('DELETE FROM agg_run_group WHERE run_group_id = ? AND project_id = ? AND prompt_run_count = 0'),
      startRecount: db.prepare(`INSERT INTO recounts (project_id, cited, next_day) VALUES (?, ?, '')
        ON CONFLICT (project_id) DO UPDATE SET cited = max(cited, excluded.cited), next_day = ''`),
      recounts: db.prepare('SELECT project_id, cited, next_day FROM recounts ORDER BY project_id').raw(true),
      recounted: db.prepare('UPDATE recounts SET next_day = ? WHERE project_id = ?'),
      recountDone: db.prepare('DELETE FROM recounts WHERE project_id = ?'),
    };
  }

  /** A transaction starts; `othersWrote`: another connection committed since this writer's last one (its sums may lack runs). */
  begin(othersWrote: boolean): void {
    this.clear();
    if (othersWrote) this.known.clear();
    this.engineDays.begin(othersWrote);
    this.rollups.begin(othersWrote);
    this.totals.begin(othersWrote);
  }

  /** The transaction failed: nothing it wrote stands, so what memory learned from it is forgotten. */
  fail(): void {
    this.known.clear();
    this.rollups.fail();
    this.engineDays.fail();
    this.slices.fail();
    this.totals.fail();
    this.knownRefs.clear();
    this.knownCount = 0;
    this.clear();
  }

  /**
   * A prompt or competitor changed project or deleted flag (or is new): the runs or mentions that
   * count in `projectId` may change, so its engine-day sums (and for a prompt its cited URLs) are counted again at the flush.
   */
  countingChanged(table: 'prompt' | 'competitor', projectId: string, id: string): void {
    this.known.forget(table, projectId, id);
    this.countingChanges.set(`${table} ${projectId} ${id}`, { table, projectId, id });
  }

  /** An engine seen for the first time: runs stored before it start to count. */
  engineAdded(engineId: string): void {
    this.known.forgetEngine(engineId);
    this.newEngines.add(engineId);
  }

  /** A run now stored: its contribution joins the batch's sums. */
  add(run: RunFacts): void {
    this.added.push(run);
    this.countGroup(run, 1);
  }

  /** A run replaced or moved: its stored contribution leaves. */
  remove(run: RunFacts): void {
    this.removed.push(run);
    this.countGroup(run, -1);
  }

  /**
   * Writes the batch's sums, once per row moved (roll-ups: once per period), then forgets them. A
   * project whose counting changed is counted again at once in one pass over its runs, or, when
   * `sliced` (a live writer, whose next batch must not wait), listed to be counted a slice a batch
   * (recountStep): about 1.6 times that pass in all (each run is read for its days, its week and its
   * month), but no batch pays more than a slice or two (~20-40 ms).
   */
  flush(sliced: boolean): void {
    const counting = this.known;
    const counts = (run: RunFacts): boolean => counting.run(run.project_id, run.engine_id, run.prompt_id);
    const trackedOf = (run: RunFacts): number => {
      let n = 0;
      for (const m of run.competitors) if (counting.competitor(run.project_id, m.competitor_id)) n += 1;
      return n;
    };
    this.rollups.counts = counts;
    this.noteRefs();
    const recount = this.projectsToRecount();
    for (const run of this.removed) {
      if (run.status !== 'succeeded') continue;
      this.engineDays.left(run);
      this.rollups.left(run.project_id, run.day);
      this.slices.add(run, -1);
    }
    for (const run of this.added) {
      if (run.status !== 'succeeded') continue;
      const counted = counts(run);
      this.slices.add(run, 1);
      this.rollups.add(run, counted);
      if (counted && !recount.engineDays.has(run.project_id)) this.engineDays.add(run, trackedOf(run));
    }
    this.engineDays.write(counting, trackedOf);
    // The running totals from the same moves, before slices.write() forgets them.
    this.totals.write(this.slices.moves());
    this.slices.write();
    for (const projectId of recount.engineDays) {
      if (!sliced) {
        this.recountProject(projectId, recount.cited.has(projectId), counting);
        continue;
      }
      // Counted again a slice at a time, from this batch on (recountStep): every day of the project, so its runs of this batch too.
      this.stmts.startRecount.run(projectId, recount.cited.has(projectId) ? 1 : 0);
      if (recount.cited.has(projectId)) this.rollups.untrust(projectId);
    }
    this.rollups.finish();
    for (const byProject of this.group.values()) {
      for (const g of byProject.values()) {
        if (g.runs === 0 && g.succeeded === 0 && g.failed === 0) continue;
        this.stmts.addGroup.run(g.run_group_id, g.project_id, g.runs, g.succeeded, g.failed);
        if (g.runs < 0) this.stmts.dropEmptyGroup.run(g.run_group_id, g.project_id);
      }
    }
    this.clear();
  }

  /** Every pending week and month written or counted again (a writer's last step), in a transaction of its own (begun). */
  settle(): void {
    this.recountStep(Infinity); // also gives the roll-ups the counting rule they count periods again with
    this.rollups.settle();
  }

  /**
   * A project's engine-day rows, and its cited URLs when `cited`, counted again from its runs in one
   * pass over its history (what counts in it changed: a prompt deleted or moved, an engine first seen).
   */
  private recountProject(projectId: string, cited: boolean, counting: Counting): void {
    const days = this.engineDays.recounter(projectId);
    const urls = cited ? this.rollups.citedRecounter(projectId) : null;
    this.runs.eachSucceeded(projectId, (id, completedAt, f) => {
      const { engineId, promptId, brandPosition, brandSentiment } = f;
      if (!counting.run(projectId, engineId, promptId)) return;
      let tracked = 0;
      for (const [competitorId] of f.hits) if (counting.competitor(projectId, competitorId)) tracked += 1;
      days.add(completedAt.slice(0, 10), engineId, promptId, brandPosition, brandSentiment, tracked);
      urls?.add(id, completedAt, engineId, promptId, f.cited);
    });
    days.finish();
    urls?.finish();
  }

  /**
   * Counts again slices of the projects whose counting changed (migration 018: recounts), until
   * `budgetMs` has been spent (at least one slice when any is left; Infinity: all of them). A slice is
   * SLICE_DAYS days of engine-day rows, and for a prompt or an engine the cited lists of the weeks and
   * months that start in them. Call after flush(), in the batch's transaction. Returns the projects
   * still listed.
   */
  recountStep(budgetMs: number): number {
    const started = performance.now();
    const counting = this.known;
    this.rollups.counts = (run) => counting.run(run.project_id, run.engine_id, run.prompt_id);
    const listed = this.stmts.recounts.all() as Array<[string, number, string]>;
    let left = listed.length;
    for (const [projectId, cited, nextDay] of listed) {
      const [first, last] = this.recountSpan(projectId, cited === 1);
      let from = nextDay === '' ? first : nextDay;
      let slice = 0;
      while (from !== null && last !== null && from <= last) {
        const t0 = performance.now();
        const to = addDays(from, SLICE_DAYS - 1);
        this.engineDays.recountDays(projectId, from, to, counting);
        if (cited === 1) this.rollups.recountPeriods(projectId, from, to, (engineId, promptId) => counting.run(projectId, engineId, promptId));
        from = addDays(to, 1);
        slice = performance.now() - t0;
        // Another slice only when one more like the last still fits the budget.
        if (performance.now() - started + slice > budgetMs) break;
      }
      if (from === null || last === null || from > last) {
        this.stmts.recountDone.run(projectId);
        left -= 1;
      } else {
        this.stmts.recounted.run(from, projectId);
      }
      if (performance.now() - started + slice > budgetMs) break;
    }
    return left;
  }

  /**
   * The days a recount covers: from the earliest of the first run's week and month, the first
   * engine-day row and the first roll-up period (rows the runs no longer reach go too), to the latest.
   */
  private recountSpan(projectId: string, cited: boolean): [string | null, string | null] {
    const [runFirst, runLast] = this.runs.succeededEdges(projectId);
    const [dayFirst, dayLast] = this.engineDays.dayEdges(projectId);
    const [periodFirst, periodLast] = cited ? this.rollups.periodEdges(projectId) : [null, null];
    const firsts = [dayFirst, periodFirst, ...(runFirst === null ? [] : [periodStart(runFirst, 'week'), periodStart(runFirst, 'month')])];
    const lasts = [runLast, dayLast, periodLast];
    const pick = (xs: Array<string | null>, f: (a: string, b: string) => string): string | null =>
      xs.reduce<string | null>((m, x) => (x === null ? m : m === null ? x : f(m, x)), null);
    return [pick(firsts, (a, b) => (a < b ? a : b)), pick(lasts, (a, b) => (a > b ? a : b))];
  }

  private clear(): void {
    this.added.length = 0;
    this.removed.length = 0;
    this.group.clear();
    this.countingChanges.clear();
    this.newEngines.clear();
    this.engineDays.clear();
    this.slices.clear();
    this.totals.clear();
  }

  /** The batch's runs' refs into run_refs (those not known to be there). */
  private noteRefs(): void {
    for (const run of this.added) {
      let known = this.knownRefs.get(run.project_id);
      if (known === undefined) {
        if (this.knownCount >= REFS_KEPT) {
          this.knownRefs.clear();
          this.knownCount = 0;
        }
        this.knownRefs.set(run.project_id, (known = { prompt: new Set(), engine: new Set(), competitor: new Set() }));
      }
      this.noteRef(known, 'prompt', run.prompt_id, run.project_id);
      this.noteRef(known, 'engine', run.engine_id, run.project_id);
      for (const m of run.competitors) this.noteRef(known, 'competitor', m.competitor_id, run.project_id);
    }
  }

  private noteRef(known: KnownRefs, kind: RefKind, id: string, projectId: string): void {
    if (known[kind].has(id)) return;
    known[kind].add(id);
    this.knownCount += 1;
    this.stmts.addRef.run(kind, id, projectId);
  }

  /**
   * Projects whose stored runs a change of what counts reaches: their engine-day sums, and their
   * cited URLs unless only competitors changed (cited URLs count runs, whatever competitors they mention).
   */
  private projectsToRecount(): { engineDays: Set<string>; cited: Set<string> } {
    const s = this.stmts;
    const out = { engineDays: new Set<string>(), cited: new Set<string>() };
    for (const c of this.countingChanges.values()) {
      if (s.hasRef.get(c.table, c.id, c.projectId) === undefined) continue;
      out.engineDays.add(c.projectId);
      if (c.table === 'prompt') out.cited.add(c.projectId);
    }
    for (const engineId of this.newEngines) {
      for (const p of s.refProjects.all(engineId) as string[]) {
        out.engineDays.add(p);
        out.cited.add(p);
      }
    }
    return out;
  }

  private countGroup(run: RunFacts, sign: 1 | -1): void {
    let byProject = this.group.get(run.run_group_id);
    if (!byProject) this.group.set(run.run_group_id, (byProject = new Map()));
    let g = byProject.get(run.project_id);
    if (!g) byProject.set(run.project_id, (g = { run_group_id: run.run_group_id, project_id: run.project_id, runs: 0, succeeded: 0, failed: 0 }));
    g.runs += sign;
    if (run.status === 'succeeded') g.succeeded += sign;
    if (run.status === 'failed') g.failed += sign;
  }
}

/** How many projects are being counted again slice by slice (migration 018; 0 before it, which a read-only open does not apply). */
export function pendingRecounts(db: Db): number {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'recounts'").pluck().get() !== undefined;
  return exists ? (db.prepare('SELECT count(*) FROM recounts').pluck().get() as number) : 0;
}
