import type { Statement } from 'better-sqlite3';
import { addDays } from '../lib/time';
import type { Db } from './db';
import { periodEnd, periodStart, type Grain } from './periods';
import type { Waits } from './rollups';

/**
 * The cited-URL roll-ups of migration 009: per project, period and URL (and engine, in the engine
 * tables), over counted runs, without the prompt. What a batch adds is merged into the stored rows in
 * one upsert per row (runs add, first and last by min and max, the id lists by union, the title by the
 * winning rule); a row a superseded run left, and every row of a project whose counting changed, is
 * counted again from agg_url_day, which holds the batch by then. Nothing here subtracts: lists, min
 * and max cannot.
 */

/** A counted agg_url_day delta of the batch: one bucket's citations of one URL. */
export interface CitedAdd {
  projectId: string;
  day: string;
  engineId: string;
  promptId: string;
  url: string;
  domain: string;
  runs: number;
  firstAt: string;
  lastAt: string;
  title: string | null;
  titleAt: string;
  titleRun: string | null;     // null only on rows written before migration 005 could name the run
}

/** An agg_url_day row a superseded run left: its periods are counted again. */
export interface CitedLeft {
  projectId: string;
  day: string;
  url: string;
}

/** The title of a row and what ranks it: latest first, then the first bucket, then the greater run. */
interface Titled {
  title: string;
  at: string;
  bucket: string;
  run: string | null;
}

interface CitedRow {
  projectId: string;
  period: string;
  url: string;
  engineId: string | null;     // the key's engine in an engine table, null in the others
  domain: string;
  runs: number;
  engines: Set<string>;
  prompts: Set<string>;
  firstAt: string;
  lastAt: string;
  titled: Titled | null;
}

/**
 * The roll-up tables: per URL over all engines at each grain (the lists without an engine filter),
 * and per URL and engine at week and month (the lists with one: their days come from agg_url_day).
 */
interface Table { name: string; grain: Grain; byEngine: boolean }
const TABLES: readonly Table[] = [
  { name: 'agg_cited_day', grain: 'day', byEngine: false },
  { name: 'agg_cited_week', grain: 'week', byEngine: false },
  { name: 'agg_cited_month', grain: 'month', byEngine: false },
  { name: 'agg_cited_engine_week', grain: 'week', byEngine: true },
  { name: 'agg_cited_engine_month', grain: 'month', byEngine: true },
];
/** Bounds of "every day" for a project's recount. */
const ALL_DAYS = { start: '0000-01-01', end: '9999-12-31' };
/**
 * Days of day rows read at a time when rows are counted again: a project's whole history would be
 * tens of millions of rows in one heap (the writer's is capped), a week of it is bounded.
 */
const RECOUNT_DAYS = 7;

/** day, engine, prompt as one text whose order is the key's (a space sorts before every id character). */
const bucketOf = (day: string, engineId: string, promptId: string): string => `${day} ${engineId} ${promptId}`;

function wins(a: Titled, over: Titled | null): boolean {
  if (!over) return true;
  if (a.at !== over.at) return a.at > over.at;
  if (a.bucket !== over.bucket) return a.bucket < over.bucket;
  return (a.run ?? '') > (over.run ?? '');
}

/** A comma-separated sorted list, as the rows keep it. */
const listOf = (ids: Set<string>): string => [...ids].sort().join(',');

interface Statements { put: Statement; drop: Statement }

/** The key's columns and the id lists of a table (an engine table keeps its engine in the key). */
const keyColumns = (t: Table): string => (t.byEngine ? 'project_id, day, url, engine_id' : 'project_id, day, url');
const listColumns = (t: Table): string => (t.byEngine ? 'prompt_ids' : 'engine_ids, prompt_ids');

/**
 * The counted agg_url_day rows of one project in a day range, one URL or all (@url NULL): what the
 * roll-up rows are counted again from, as the adds that made them. A title counts with its instant
 * only (rows from before migration 004 may lack it), as the lists read day rows.
 */
const DAY_ROWS = `SELECT a.day, a.engine_id, a.prompt_id, a.url, a.domain, a.runs, a.first_at, a.last_at,
    CASE WHEN a.title_at > '' THEN a.title END, a.title_at, a.title_run
  FROM agg_url_day a
  WHERE a.project_id = @project AND a.day BETWEEN @start AND @end AND (@url IS NULL OR a.url = @url)
    AND a.prompt_id IN (SELECT id FROM prompts WHERE project_id = @project AND deleted = 0) AND a.engine_id IN (SELECT id FROM engines)`;
type DayRow = [day: string, engineId: string, promptId: string, url: string, domain: string, runs: number, firstAt: string, lastAt: string,
  title: string | null, titleAt: string | null, titleRun: string | null];

/**
 * The union of two sorted comma-separated id lists, sorted. When `b` is already in `a` (the usual
 * case once a row has seen its prompts and engines) `a` stays as it is; otherwise the two are split
 * with json_each (ids are UUIDs: no quote or comma inside) and joined again in order.
 */
const unionSql = (a: string, b: string): string => `CASE WHEN instr(',' || ${a} || ',', ',' || ${b} || ',') > 0 THEN ${a}
  ELSE (SELECT group_concat(DISTINCT value ORDER BY value) FROM json_each('["' || replace(${a} || ',' || ${b}, ',', '","') || '"]')) END`;

/** The batch's title wins over the stored one: latest title_at, then first bucket, then greater run (wins()). */
const TITLE_WINS = `excluded.title IS NOT NULL AND (title IS NULL OR excluded.title_at > title_at OR (excluded.title_at = title_at
  AND (excluded.title_bucket < title_bucket OR (excluded.title_bucket = title_bucket AND excluded.title_run > title_run))))`;

function statements(db: Db, t: Table): Statements {
  const keys = keyColumns(t);
  const columns = `${keys}, domain, runs, ${listColumns(t)}, first_at, last_at, title, title_at, title_bucket, title_run`;
  const lists = listColumns(t).split(', ').map((c) => `${c} = ${unionSql(c, `excluded.${c}`)}`).join(',\n        ');
  const title = ['title', 'title_at', 'title_bucket', 'title_run'].map((c) => `${c} = CASE WHEN ${TITLE_WINS} THEN excluded.${c} ELSE ${c} END`).join(',\n        ');
  return {
    // The batch's sums of a row merged into the stored ones in one statement (both are sums of disjoint citations).
    put: db.prepare(`INSERT INTO ${t.name} (${columns}) VALUES (${columns.split(', ').map(() => '?').join(', ')})
      ON CONFLICT (${keys}) DO UPDATE SET runs = runs + excluded.runs, first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at),
        ${lists},
        ${title}`),
    drop: db.prepare(`DELETE FROM ${t.name} WHERE project_id = @project AND day BETWEEN @start AND @end AND (@url IS NULL OR url = @url)`),
  };
}

function mergeInto(into: CitedRow, add: CitedAdd): void {
  into.runs += add.runs;
  into.engines.add(add.engineId);
  into.prompts.add(add.promptId);
  if (add.firstAt < into.firstAt) into.firstAt = add.firstAt;
  if (add.lastAt > into.lastAt) into.lastAt = add.lastAt;
  if (add.title === null) return;
  const t = { title: add.title, at: add.titleAt, bucket: bucketOf(add.day, add.engineId, add.promptId), run: add.titleRun };
  if (wins(t, into.titled)) into.titled = t;
}

/** The adds of projects not counted again whole (those are read back from their day rows). */
function* counted(adds: Iterable<CitedAdd>, projects: ReadonlySet<string>): Iterable<CitedAdd> {
  for (const a of adds) if (!projects.has(a.projectId)) yield a;
}

/** A row of one table merged from adds: `at` is the table's index. */
interface Merged { at: number; row: CitedRow }

export class CitedRollups {
  private readonly stmts: ReadonlyArray<{ table: Table; s: Statements }>;
  private readonly everyTable: readonly number[];
  private readonly tablesOf: Record<Exclude<Grain, 'day'>, readonly number[]>;
  private readonly dayRows: Statement;
  private readonly firstDay: Statement;
  private readonly lastDay: Statement;

  constructor(db: Db) {
    this.stmts = TABLES.map((table) => ({ table, s: statements(db, table) }));
    this.everyTable = TABLES.map((_, at) => at);
    const ofGrain = (g: Grain): number[] => this.everyTable.filter((at) => TABLES[at]!.grain === g);
    this.tablesOf = { week: ofGrain('week'), month: ofGrain('month') };
    this.dayRows = db.prepare(DAY_ROWS).raw(true);
    // The first and last day of a range that has rows, each along the primary key (project, day, ...).
    const edge = (order: string): Statement => db.prepare(`SELECT day FROM agg_url_day WHERE project_id = @project
      AND day BETWEEN @start AND @end AND (@url IS NULL OR url = @url) ORDER BY day ${order} LIMIT 1`).pluck();
    this.firstDay = edge('ASC');
    this.lastDay = edge('DESC');
  }

  /**
   * The batch's counted citations merged in, the periods `left` touches and the `projects` counted
   * again. Called once agg_url_day holds the batch. `waits`: the week and month periods a bulk batch
   * leaves alone (rollups.ts: they are counted again later, with countPeriodAgain).
   */
  write(adds: Iterable<CitedAdd>, left: Iterable<CitedLeft>, projects: ReadonlySet<string>, waits?: Waits): void {
    const moves = (projectId: string, at: number, period: string): boolean => {
      const grain = this.stmts[at]!.table.grain;
      return grain === 'day' || waits === undefined || !waits(projectId, grain, period);
    };
    // Per table, period and URL (all of its engines: a row is counted again per URL).
    const again = new Map<string, { at: number; projectId: string; period: string; url: string }>();
    for (const l of left) {
      if (projects.has(l.projectId)) continue;
      for (const at of this.everyTable) {
        const period = periodStart(l.day, this.stmts[at]!.table.grain);
        if (!moves(l.projectId, at, period)) continue;
        again.set(`${at}|${l.projectId}|${period}|${l.url}`, { at, projectId: l.projectId, period, url: l.url });
      }
    }
    // A row counted again from the day rows (this batch's among them) or in a period a bulk batch leaves pending is not merged.
    const leaveOut = (at: number, key: string, projectId: string, period: string): boolean =>
      (again.size > 0 && again.has(`${at}|${key}`)) || !moves(projectId, at, period);
    const merged = this.everyTable.map(() => new Map<string, Merged>());
    this.merge(counted(adds, projects), this.everyTable, merged, leaveOut);
    for (const byKey of merged) for (const m of byKey.values()) this.put(m);
    for (const r of again.values()) this.countAgain(r.projectId, [r.at], { start: r.period, end: periodEnd(r.period, this.stmts[r.at]!.table.grain) }, r.url);
    for (const projectId of projects) this.countAgain(projectId, this.everyTable, ALL_DAYS, null);
  }

  /** One period's rows of the tables of its grain (every URL, every engine) counted again from its day rows. */
  countPeriodAgain(projectId: string, grain: Exclude<Grain, 'day'>, start: string): void {
    this.countAgain(projectId, this.tablesOf[grain], { start, end: periodEnd(start, grain) }, null);
  }

  /**
   * Adds merged per row of the tables `ats` into `merged` (one map per table, in the order of `ats`);
   * rows `leaveOut` names are left out. Maps are keyed by project, period and URL (and engine): the
   * key of a grain is built once per add and shared by the tables of that grain.
   */
  private merge(adds: Iterable<CitedAdd>, ats: readonly number[], merged: Array<Map<string, Merged>>,
    leaveOut?: (at: number, key: string, projectId: string, period: string) => boolean): void {
    for (const a of adds) {
      const keys: Partial<Record<Grain, string>> = {};
      ats.forEach((at, i) => {
        const table = this.stmts[at]!.table;
        const period = periodStart(a.day, table.grain);
        const k = (keys[table.grain] ??= `${a.projectId}|${period}|${a.url}`);
        if (leaveOut?.(at, k, a.projectId, period) === true) return;
        const engineId = table.byEngine ? a.engineId : null;
        const mk = engineId === null ? k : `${k}|${engineId}`;
        let m = merged[i]!.get(mk);
        if (!m) {
          const row: CitedRow = { projectId: a.projectId, period, url: a.url, engineId, domain: a.domain, runs: 0, engines: new Set(), prompts: new Set(), firstAt: a.firstAt, lastAt: a.lastAt, titled: null };
          merged[i]!.set(mk, (m = { at, row }));
        }
        mergeInto(m.row, a);
      });
    }
  }

  /**
   * The rows of `ats` in a day range (one URL or all) dropped and merged again from their day rows,
   * RECOUNT_DAYS at a time: a row is written once the days read have passed its period's end.
   */
  private countAgain(projectId: string, ats: readonly number[], days: { start: string; end: string }, url: string | null): void {
    const range = { project: projectId, start: days.start, end: days.end, url };
    for (const at of ats) this.stmts[at]!.s.drop.run(range);
    const first = this.firstDay.get(range) as string | undefined;
    const last = this.lastDay.get(range) as string | undefined;
    if (first === undefined || last === undefined) return;
    const pending = ats.map(() => new Map<string, Merged>());
    for (let from = first; from <= last; from = addDays(from, RECOUNT_DAYS)) {
      const to = addDays(from, RECOUNT_DAYS - 1);
      const rows = this.dayRows.all({ ...range, start: from, end: to < last ? to : last }) as DayRow[];
      const adds = rows.map(([day, engineId, promptId, u, domain, runs, firstAt, lastAt, title, titleAt, titleRun]): CitedAdd =>
        ({ projectId, day, engineId, promptId, url: u, domain, runs, firstAt, lastAt, title, titleAt: titleAt ?? '', titleRun }));
      this.merge(adds, ats, pending);
      pending.forEach((byKey, i) => {
        const grain = this.stmts[ats[i]!]!.table.grain;
        for (const [k, m] of byKey) {
          if (periodEnd(m.row.period, grain) > to) continue; // its period goes on in the next days
          this.put(m);
          byKey.delete(k);
        }
      });
    }
    for (const byKey of pending) for (const m of byKey.values()) this.put(m);
  }

  private put({ at, row }: Merged): void {
    const { table, s } = this.stmts[at]!;
    const key = row.engineId === null ? [row.projectId, row.period, row.url] : [row.projectId, row.period, row.url, row.engineId];
    const lists = table.byEngine ? [listOf(row.prompts)] : [listOf(row.engines), listOf(row.prompts)];
    const t = row.titled;
    s.put.run(...key, row.domain, row.runs, ...lists, row.firstAt, row.lastAt, t?.title ?? null, t?.at ?? null, t?.bucket ?? null, t?.run ?? null);
  }
}
