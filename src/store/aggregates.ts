import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { periodStart, type Grain } from './periods';
import { CitedRollups, type CitedAdd, type CitedLeft } from './cited';
import { PendingRollups, type RolledGrain } from './rollups';
import { bestMention, type RunFacts, type StoredCitation, type StoredMention } from './runs';

/**
 * Fixed-point scales of the two fractional sums (migration 005). Integers add exactly in any
 * order, so a row is the same whatever the batching, and a superseded run subtracts to the cent.
 * RR_SCALE is lcm(1..20): 1/position is exact for every position up to 20.
 */
export const RR_SCALE = 232_792_560;
export const SENTIMENT_SCALE = 1_000_000;

/** 1/position in RR_SCALE units. A sum of them stays exact in a double up to 38 million runs at position 1. */
const rrFixed = (position: number): number => Math.round(RR_SCALE / position);
/** Half away from zero, as SQLite's round() (test/oracle-aggregates.sql); Math.round alone rounds -0.5 up. */
const sentimentFixed = (sentiment: number): number => Math.sign(sentiment) * Math.round(Math.abs(sentiment * SENTIMENT_SCALE));

interface MentionDelta { runs: number; position_sum: number; rr_fixed: number; sentiment_fixed: number; sentiment_n: number }
interface PromptDelta { key: BucketKey; runs: number; brand: MentionDelta }
interface CompetitorDelta extends MentionDelta { key: BucketKey; competitor_id: string }
interface UrlAdd { key: BucketKey; url: string; domain: string; runs: number; first_at: string; last_at: string; title: string | null; title_at: string; title_run: string }
interface EngineDelta { key: EngineKey; runs: number; brand: MentionDelta; competitor_runs: number }
type EngineKey = readonly [project_id: string, day: string, engine_id: string];
interface GroupDelta { run_group_id: string; project_id: string; runs: number; succeeded: number; failed: number }
type BucketKey = readonly [project_id: string, day: string, engine_id: string, prompt_id: string];

const ROLLUPS = ['week', 'month'] as const;

const zeroMention = (): MentionDelta => ({ runs: 0, position_sum: 0, rr_fixed: 0, sentiment_fixed: 0, sentiment_n: 0 });
const isZero = (d: MentionDelta): boolean => d.runs === 0 && d.position_sum === 0 && d.rr_fixed === 0 && d.sentiment_fixed === 0 && d.sentiment_n === 0;

/** Adds (sign 1) or takes away (sign -1) one run's best mention of an entity. */
function addMention(d: MentionDelta, position: number, sentiment: number | null, sign: number): void {
  d.runs += sign;
  d.position_sum += sign * position;
  d.rr_fixed += sign * rrFixed(position);
  if (sentiment !== null) {
    d.sentiment_fixed += sign * sentimentFixed(sentiment);
    d.sentiment_n += sign;
  }
}

/** Each tracked competitor of a run once, at its best position. */
function competitorsOf(mentions: StoredMention[]): StoredMention[] {
  const ids = new Set<string>();
  for (const m of mentions) if (m.entity_type === 'competitor' && m.competitor_id) ids.add(m.competitor_id);
  return [...ids].map((id) => bestMention(mentions, (m) => m.entity_type === 'competitor' && m.competitor_id === id)!);
}

/** A citation's title, when it has one: an empty title is none. */
const titleOf = (c: StoredCitation): string | null => c.title || null;

/** Each URL of a run once (its first citation, or the first that has a title). */
function urlsOf(citations: StoredCitation[]): StoredCitation[] {
  const seen = new Map<string, StoredCitation>();
  for (const c of citations) {
    const prev = seen.get(c.url);
    if (!prev || (titleOf(prev) === null && titleOf(c) !== null)) seen.set(c.url, c);
  }
  return [...seen.values()];
}

/** The latest titled citation gives the title; at one instant, the greater run id (any order gives the same). */
function titleWins(at: string, runId: string, overAt: string, overRun: string): boolean {
  return at > overAt || (at === overAt && runId > overRun);
}

function mergeUrl(into: UrlAdd, add: Omit<UrlAdd, 'key' | 'url' | 'domain'>): void {
  into.runs += add.runs;
  if (add.first_at < into.first_at) into.first_at = add.first_at;
  if (add.last_at > into.last_at) into.last_at = add.last_at;
  if (add.title !== null && (into.title === null || titleWins(add.title_at, add.title_run, into.title_at, into.title_run))) {
    into.title = add.title;
    into.title_at = add.title_at;
    into.title_run = add.title_run;
  }
}

function addDelta(into: MentionDelta, d: MentionDelta): void {
  into.runs += d.runs;
  into.position_sum += d.position_sum;
  into.rr_fixed += d.rr_fixed;
  into.sentiment_fixed += d.sentiment_fixed;
  into.sentiment_n += d.sentiment_n;
}

/** A bucket key moved to the period of its day (the week's Monday, the month's 1st). */
function rolledKey(key: BucketKey, grain: Grain): BucketKey {
  return [key[0], periodStart(key[1], grain), key[2], key[3]];
}

/** The batch's day deltas summed per period: a period row moves by exactly its days' deltas. */
function rollUpPrompts(deltas: Iterable<PromptDelta>, grain: Grain): PromptDelta[] {
  const out = new Map<string, PromptDelta>();
  for (const d of deltas) {
    const key = rolledKey(d.key, grain);
    const k = key.join('|');
    let into = out.get(k);
    if (!into) out.set(k, (into = { key, runs: 0, brand: zeroMention() }));
    into.runs += d.runs;
    addDelta(into.brand, d.brand);
  }
  return [...out.values()];
}

function rollUpCompetitors(deltas: Iterable<CompetitorDelta>, grain: Grain): CompetitorDelta[] {
  const out = new Map<string, CompetitorDelta>();
  for (const d of deltas) {
    const key = rolledKey(d.key, grain);
    const k = `${key.join('|')}|${d.competitor_id}`;
    let into = out.get(k);
    if (!into) out.set(k, (into = { key, competitor_id: d.competitor_id, ...zeroMention() }));
    addDelta(into, d);
  }
  return [...out.values()];
}

/** What counts in the engine-day sums (migration 008), asked of the entity tables. */
interface Counting {
  run(projectId: string, engineId: string, promptId: string): boolean;
  competitor(projectId: string, competitorId: string): boolean;
}

/**
 * The batch's day deltas that count, without their prompt and competitor (migration 008): brand
 * sums and tracked-competitor mentions per project, day and engine. `skip`: projects counted again
 * from their rows instead.
 */
function engineDays(prompts: Iterable<PromptDelta>, competitors: Iterable<CompetitorDelta>, counting: Counting, skip: ReadonlySet<string>): EngineDelta[] {
  const out = new Map<string, EngineDelta>();
  const into = (k: BucketKey): EngineDelta | null => {
    const [projectId, day, engineId, promptId] = k;
    if (skip.has(projectId) || !counting.run(projectId, engineId, promptId)) return null;
    const text = `${projectId}|${day}|${engineId}`;
    let d = out.get(text);
    if (!d) out.set(text, (d = { key: [projectId, day, engineId], runs: 0, brand: zeroMention(), competitor_runs: 0 }));
    return d;
  };
  for (const p of prompts) {
    const d = into(p.key);
    if (!d) continue;
    d.runs += p.runs;
    addDelta(d.brand, p.brand);
  }
  for (const c of competitors) {
    const d = into(c.key);
    if (d && counting.competitor(c.key[0], c.competitor_id)) d.competitor_runs += c.runs;
  }
  return [...out.values()];
}

/** Memoised for one batch (the entity tables do not change while its deltas are written). */
function memo<T>(f: (key: string) => T): (key: string) => T {
  const seen = new Map<string, T>();
  return (key) => {
    if (!seen.has(key)) seen.set(key, f(key));
    return seen.get(key)!;
  };
}

/** The same by two keys, without joining them into one string. */
function memo2<T>(f: (a: string, b: string) => T): (a: string, b: string) => T {
  const byFirst = memo((a) => memo((b) => f(a, b)));
  return (a, b) => byFirst(a)(b);
}

interface SumStatements { addPrompt: Statement; dropEmptyPrompt: Statement; addCompetitor: Statement; dropEmptyCompetitor: Statement }

/** Upserts of the brand and competitor sums into the tables of one grain (agg_prompt_day, _week, _month, ...). */
function sumStatements(db: Db, grain: Grain): SumStatements {
  const bucket = 'project_id = ? AND day = ? AND engine_id = ? AND prompt_id = ?';
  const mentionSet = `runs = runs + excluded.runs, position_sum = position_sum + excluded.position_sum,
    rr_fixed = rr_fixed + excluded.rr_fixed, sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed,
    sentiment_n = sentiment_n + excluded.sentiment_n`;
  return {
    addPrompt: db.prepare(`INSERT INTO agg_prompt_${grain} (project_id, day, engine_id, prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, day, engine_id, prompt_id) DO UPDATE SET brand_runs = brand_runs + excluded.brand_runs, ${mentionSet}`),
    dropEmptyPrompt: db.prepare(`DELETE FROM agg_prompt_${grain} WHERE ${bucket} AND runs = 0`),
    addCompetitor: db.prepare(`INSERT INTO agg_competitor_${grain} (project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, day, engine_id, prompt_id, competitor_id) DO UPDATE SET ${mentionSet}`),
    dropEmptyCompetitor: db.prepare(`DELETE FROM agg_competitor_${grain} WHERE ${bucket} AND competitor_id = ? AND runs = 0`),
  };
}

/** Writes prompt and competitor deltas into one grain's tables; a row whose runs fall to 0 goes. */
function writeSums(s: SumStatements, prompts: Iterable<PromptDelta>, competitors: Iterable<CompetitorDelta>): void {
  for (const d of prompts) {
    const b = d.brand;
    if (d.runs === 0 && isZero(b)) continue;
    s.addPrompt.run(...d.key, d.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n);
    if (d.runs < 0) s.dropEmptyPrompt.run(...d.key);
  }
  for (const d of competitors) {
    if (isZero(d)) continue;
    s.addCompetitor.run(...d.key, d.competitor_id, d.runs, d.position_sum, d.rr_fixed, d.sentiment_fixed, d.sentiment_n);
    if (d.runs < 0) s.dropEmptyCompetitor.run(...d.key, d.competitor_id);
  }
}

/** The day rows (`d`) of the months pending (`r`, migration 010) in a day table. */
const PENDING_MONTH_DAYS = (dayTable: string): string => `rollup_pending r JOIN ${dayTable} d ON d.project_id = r.project_id
  AND d.day BETWEEN r.day AND date(r.day, '+1 month', '-1 day') AND r.grain = 'month'`;

function bucketOf(run: RunFacts): { key: BucketKey; text: string } {
  return { key: [run.project_id, run.day, run.engine_id, run.prompt_id], text: `${run.project_id}|${run.day}|${run.engine_id}|${run.prompt_id}` };
}

/**
 * The aggregate rows a batch moves, summed in memory and written once per row at the end of the
 * batch: a new run adds its contribution, a superseded run takes its old one away. Nothing reads a
 * bucket back, so applying a run costs the same however many runs its bucket already holds. The
 * exception is a URL row a superseded run cited: first/last/title are not subtractable, so that
 * one row is counted again from the day's runs (rare: a run re-analysed upstream).
 */
export class Aggregator {
  private readonly prompt = new Map<string, PromptDelta>();
  private readonly competitor = new Map<string, CompetitorDelta>();
  private readonly url = new Map<string, UrlAdd>();
  private readonly urlRecount = new Map<string, { key: BucketKey; url: string }>();
  private readonly group = new Map<string, GroupDelta>();
  /** Prompts and competitors whose project or deleted flag changed in the batch, engines first seen. */
  private readonly countingChanges = new Map<string, { table: 'prompt' | 'competitor'; projectId: string; id: string }>();
  private readonly newEngines = new Set<string>();
  private readonly sums: Record<Grain, SumStatements>;
  private readonly cited: CitedRollups;
  private readonly pending: PendingRollups;
  private readonly stmts;

  constructor(db: Db) {
    this.cited = new CitedRollups(db);
    this.pending = new PendingRollups(db, this.cited);
    this.sums = { day: sumStatements(db, 'day'), week: sumStatements(db, 'week'), month: sumStatements(db, 'month') };
    const bucket = 'project_id = ? AND day = ? AND engine_id = ? AND prompt_id = ?';
    const titleWinsSql = `excluded.title IS NOT NULL AND (title IS NULL OR excluded.title_at > title_at
      OR (excluded.title_at = title_at AND excluded.title_run > title_run))`;
    this.stmts = {
      addUrl: db.prepare(`INSERT INTO agg_url_day (project_id, day, engine_id, prompt_id, url, domain, runs, first_at, last_at, title, title_at, title_run)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project_id, day, engine_id, prompt_id, url) DO UPDATE SET runs = runs + excluded.runs,
          first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at),
          title = CASE WHEN ${titleWinsSql} THEN excluded.title ELSE title END,
          title_at = CASE WHEN ${titleWinsSql} THEN excluded.title_at ELSE title_at END,
          title_run = CASE WHEN ${titleWinsSql} THEN excluded.title_run ELSE title_run END`),
      dropUrl: db.prepare(`DELETE FROM agg_url_day WHERE ${bucket} AND url = ?`),
      promptCounts: db.prepare('SELECT 1 FROM prompts WHERE id = ? AND project_id = ? AND deleted = 0').pluck(),
      engineKnown: db.prepare('SELECT 1 FROM engines WHERE id = ?').pluck(),
      competitorTracked: db.prepare('SELECT 1 FROM competitors WHERE id = ? AND project_id = ? AND deleted = 0').pluck(),
      // Stored rows (the batches before): whether a change of what counts changes any sum. The month
      // rows answer in a few reads; the days of a pending month (migration 010) may not be in them yet.
      promptHasRows: db.prepare(`SELECT 1 FROM agg_prompt_month WHERE project_id = @project AND prompt_id = @id
        UNION ALL SELECT 1 FROM ${PENDING_MONTH_DAYS('agg_prompt_day')} WHERE r.project_id = @project AND d.prompt_id = @id LIMIT 1`).pluck(),
      competitorHasRows: db.prepare(`SELECT 1 FROM agg_competitor_month WHERE project_id = @project AND competitor_id = @id
        UNION ALL SELECT 1 FROM ${PENDING_MONTH_DAYS('agg_competitor_day')} WHERE r.project_id = @project AND d.competitor_id = @id LIMIT 1`).pluck(),
      engineProjects: db.prepare(`SELECT project_id FROM agg_prompt_month WHERE engine_id = @id
        UNION SELECT r.project_id FROM ${PENDING_MONTH_DAYS('agg_prompt_day')} WHERE d.engine_id = @id`).pluck(),
      dropEngineDays: db.prepare('DELETE FROM agg_engine_day WHERE project_id = ?'),
      // The rows of migration 008 for one project, from its day rows.
      countEngineDays: db.prepare(`INSERT INTO agg_engine_day
        SELECT p.project_id, p.day, p.engine_id, sum(p.runs), sum(p.brand_runs), sum(p.position_sum), sum(p.rr_fixed),
          sum(p.sentiment_fixed), sum(p.sentiment_n),
          coalesce((SELECT sum(c.runs) FROM agg_competitor_day c
            WHERE c.project_id = p.project_id AND c.day = p.day AND c.engine_id = p.engine_id
              AND c.prompt_id IN (SELECT id FROM prompts WHERE project_id = @project AND deleted = 0)
              AND c.competitor_id IN (SELECT id FROM competitors WHERE project_id = @project AND deleted = 0)), 0)
        FROM agg_prompt_day p
        WHERE p.project_id = @project AND p.prompt_id IN (SELECT id FROM prompts WHERE project_id = @project AND deleted = 0)
          AND p.engine_id IN (SELECT id FROM engines)
        GROUP BY p.day, p.engine_id`),
      addEngine: db.prepare(`INSERT INTO agg_engine_day (project_id, day, engine_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n, competitor_runs)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project_id, day, engine_id) DO UPDATE SET runs = runs + excluded.runs, brand_runs = brand_runs + excluded.brand_runs,
          position_sum = position_sum + excluded.position_sum, rr_fixed = rr_fixed + excluded.rr_fixed,
          sentiment_fixed = sentiment_fixed + excluded.sentiment_fixed, sentiment_n = sentiment_n + excluded.sentiment_n,
          competitor_runs = competitor_runs + excluded.competitor_runs`),
      dropEmptyEngine: db.prepare('DELETE FROM agg_engine_day WHERE project_id = ? AND day = ? AND engine_id = ? AND runs = 0'),
      // The day's runs through prompt_runs_recent (project_id, completed_at): [day 'T', day 'U') is that UTC day.
      dayRuns: db.prepare(`SELECT id, completed_at, citations FROM prompt_runs
        WHERE project_id = ? AND completed_at >= ? || 'T' AND completed_at < ? || 'U' AND engine_id = ? AND prompt_id = ? AND status = 'succeeded'`),
      addGroup: db.prepare(`INSERT INTO agg_run_group (run_group_id, project_id, prompt_run_count, succeeded_count, failed_count)
        VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (run_group_id, project_id) DO UPDATE SET prompt_run_count = prompt_run_count + excluded.prompt_run_count,
          succeeded_count = succeeded_count + excluded.succeeded_count, failed_count = failed_count + excluded.failed_count`),
      dropEmptyGroup: db.prepare('DELETE FROM agg_run_group WHERE run_group_id = ? AND project_id = ? AND prompt_run_count = 0'),
    };
  }

  clear(): void {
    this.prompt.clear();
    this.competitor.clear();
    this.url.clear();
    this.urlRecount.clear();
    this.group.clear();
    this.countingChanges.clear();
    this.newEngines.clear();
  }

  /**
   * A prompt or competitor changed project or deleted flag (or is new): the runs or mentions that
   * count in `projectId` may change, so its engine-day sums (and for a prompt its cited URLs) are counted again at the flush.
   */
  countingChanged(table: 'prompt' | 'competitor', projectId: string, id: string): void {
    this.countingChanges.set(`${table}|${projectId}|${id}`, { table, projectId, id });
  }

  /** An engine seen for the first time: runs stored before it start to count. */
  engineAdded(engineId: string): void {
    this.newEngines.add(engineId);
  }

  /** A run now stored: its contribution joins the batch's deltas. */
  add(run: RunFacts): void {
    this.count(run, 1);
  }

  /** A run replaced or moved: its stored contribution leaves. */
  remove(run: RunFacts): void {
    this.count(run, -1);
  }

  /**
   * Writes the batch's deltas, one statement per row moved, then forgets them. `bulk`: the week and
   * month rows are left pending and counted again once the writer has moved past them (rollups.ts);
   * otherwise they move with the batch, and whatever a bulk writer left pending is settled.
   */
  flush(bulk = false): void {
    const s = this.stmts;
    const recount = this.projectsToRecount();
    const counting = this.counting();
    // Every bucket a run moved has a prompt delta (its competitor and URL rows share the bucket).
    const plan = bulk ? this.pending.plan([...this.prompt.values()].map((d) => [d.key[0], d.key[1]] as const)) : null;
    const moves = (grain: RolledGrain, key: BucketKey): boolean => plan === null || !plan.waits(key[0], grain, key[1]);
    writeSums(this.sums.day, this.prompt.values(), this.competitor.values());
    for (const grain of ROLLUPS) {
      writeSums(this.sums[grain], rollUpPrompts(this.prompt.values(), grain).filter((d) => moves(grain, d.key)),
        rollUpCompetitors(this.competitor.values(), grain).filter((d) => moves(grain, d.key)));
    }
    this.writeEngineDays(counting, recount.engineDays);
    for (const [k, u] of this.url) {
      if (this.urlRecount.has(k)) continue; // counted again below, from what the batch left in the store
      this.putUrl(u);
    }
    for (const { key, url } of this.urlRecount.values()) this.recountUrl(key, url);
    this.cited.write(this.countedUrls(counting), this.urlsLeft(), recount.cited, plan?.waits);
    for (const g of this.group.values()) {
      if (g.runs === 0 && g.succeeded === 0 && g.failed === 0) continue;
      s.addGroup.run(g.run_group_id, g.project_id, g.runs, g.succeeded, g.failed);
      if (g.runs < 0) s.dropEmptyGroup.run(g.run_group_id, g.project_id);
    }
    if (plan) plan.finish();
    else this.pending.settle();
    this.clear();
  }

  /** Every pending week and month counted again (a bulk writer's last step). */
  settle(): void {
    this.pending.settle();
  }

  /** What counts, asked of the entity tables once per key in the batch (they do not change while its deltas are written). */
  private counting(): Counting {
    const s = this.stmts;
    const engineKnown = memo((engineId) => s.engineKnown.get(engineId) !== undefined);
    const promptCounts = memo2((projectId, promptId) => s.promptCounts.get(promptId, projectId) !== undefined);
    return {
      run: (projectId, engineId, promptId) => engineKnown(engineId) && promptCounts(projectId, promptId),
      competitor: memo2((projectId, competitorId) => s.competitorTracked.get(competitorId, projectId) !== undefined),
    };
  }

  /** The batch's URL additions by counted runs, for the cited roll-ups (migration 009). */
  private *countedUrls(counting: Counting): Iterable<CitedAdd> {
    for (const u of this.url.values()) {
      const [projectId, day, engineId, promptId] = u.key;
      if (!counting.run(projectId, engineId, promptId)) continue;
      yield { projectId, day, engineId, promptId, url: u.url, domain: u.domain, runs: u.runs, firstAt: u.first_at, lastAt: u.last_at, title: u.title, titleAt: u.title_at, titleRun: u.title_run };
    }
  }

  /** The URL rows superseded runs left, counted again in the day table above. */
  private *urlsLeft(): Iterable<CitedLeft> {
    for (const { key, url } of this.urlRecount.values()) yield { projectId: key[0], day: key[1], url };
  }

  /**
   * Projects whose stored rows a change of what counts reaches (read before the batch's rows are
   * written): their engine-day sums, and their cited URLs unless only competitors changed (cited
   * URLs count runs, whatever competitors they mention; a year of them is ~0.5 s to count again).
   */
  private projectsToRecount(): { engineDays: Set<string>; cited: Set<string> } {
    const s = this.stmts;
    const out = { engineDays: new Set<string>(), cited: new Set<string>() };
    const both = (projectId: string): void => {
      out.engineDays.add(projectId);
      out.cited.add(projectId);
    };
    for (const c of this.countingChanges.values()) {
      if (c.table === 'prompt' && s.promptHasRows.get({ project: c.projectId, id: c.id }) !== undefined) both(c.projectId);
      if (c.table === 'competitor' && s.competitorHasRows.get({ project: c.projectId, id: c.id }) !== undefined) out.engineDays.add(c.projectId);
    }
    for (const engineId of this.newEngines) for (const p of s.engineProjects.all({ id: engineId }) as string[]) both(p);
    return out;
  }

  /** The batch's counted deltas into agg_engine_day, then the projects to recount from their day rows. */
  private writeEngineDays(counting: Counting, recount: ReadonlySet<string>): void {
    const s = this.stmts;
    for (const d of engineDays(this.prompt.values(), this.competitor.values(), counting, recount)) {
      const b = d.brand;
      if (d.runs === 0 && d.competitor_runs === 0 && isZero(b)) continue;
      s.addEngine.run(...d.key, d.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n, d.competitor_runs);
      if (d.runs < 0) s.dropEmptyEngine.run(...d.key);
    }
    for (const projectId of recount) {
      s.dropEngineDays.run(projectId);
      s.countEngineDays.run({ project: projectId });
    }
  }

  private count(run: RunFacts, sign: 1 | -1): void {
    this.countGroup(run, sign);
    if (run.status !== 'succeeded') return;
    const b = bucketOf(run);
    let p = this.prompt.get(b.text);
    if (!p) this.prompt.set(b.text, (p = { key: b.key, runs: 0, brand: zeroMention() }));
    p.runs += sign;
    // The run's best brand mention, found once when it was prepared (and stored with the row).
    if (run.brand_position !== null) addMention(p.brand, run.brand_position, run.brand_sentiment, sign);
    for (const m of competitorsOf(run.mentions)) {
      const k = `${b.text}|${m.competitor_id!}`;
      let c = this.competitor.get(k);
      if (!c) this.competitor.set(k, (c = { key: b.key, competitor_id: m.competitor_id!, ...zeroMention() }));
      addMention(c, m.position, m.sentiment, sign);
    }
    for (const c of urlsOf(run.citations)) {
      const k = `${b.text}|${c.url}`;
      if (sign < 0) {
        this.urlRecount.set(k, { key: b.key, url: c.url });
        continue;
      }
      const add = { runs: 1, first_at: run.completed_at, last_at: run.completed_at, title: titleOf(c), title_at: run.completed_at, title_run: run.id };
      const u = this.url.get(k);
      if (u) mergeUrl(u, add);
      else this.url.set(k, { key: b.key, url: c.url, domain: c.domain, ...add });
    }
  }

  private countGroup(run: RunFacts, sign: 1 | -1): void {
    const k = `${run.run_group_id}|${run.project_id}`;
    let g = this.group.get(k);
    if (!g) this.group.set(k, (g = { run_group_id: run.run_group_id, project_id: run.project_id, runs: 0, succeeded: 0, failed: 0 }));
    g.runs += sign;
    if (run.status === 'succeeded') g.succeeded += sign;
    if (run.status === 'failed') g.failed += sign;
  }

  /** One URL row from the day's stored runs: what a supersede leaves when it took away a first, last or title. */
  private recountUrl(key: BucketKey, url: string): void {
    const [projectId, day, engineId, promptId] = key;
    let row: UrlAdd | undefined;
    const runs = this.stmts.dayRuns.all(projectId, day, day, engineId, promptId) as Array<{ id: string; completed_at: string; citations: string }>;
    for (const r of runs) {
      const cited = urlsOf(JSON.parse(r.citations) as StoredCitation[]).find((c) => c.url === url);
      if (!cited) continue;
      const add = { runs: 1, first_at: r.completed_at, last_at: r.completed_at, title: titleOf(cited), title_at: r.completed_at, title_run: r.id };
      if (row) mergeUrl(row, add);
      else row = { key, url, domain: cited.domain, ...add };
    }
    this.stmts.dropUrl.run(...key, url);
    if (row) this.putUrl(row);
  }

  /** Adds a URL row's delta (or writes it, when the row is new); the title's instant and run go with a title only. */
  private putUrl(u: UrlAdd): void {
    this.stmts.addUrl.run(...u.key, u.url, u.domain, u.runs, u.first_at, u.last_at, u.title, u.title ? u.title_at : null, u.title ? u.title_run : null);
  }
}
