import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { PERIOD_SQL, periodEnd, periodStart, type Grain } from './periods';

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
  titleRun: string;
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
  run: string;
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

/** day, engine, prompt as one text whose order is the key's (a space sorts before every id character). */
const bucketOf = (day: string, engineId: string, promptId: string): string => `${day} ${engineId} ${promptId}`;

function wins(a: Titled, over: Titled | null): boolean {
  if (!over) return true;
  if (a.at !== over.at) return a.at > over.at;
  if (a.bucket !== over.bucket) return a.bucket < over.bucket;
  return a.run > over.run;
}

/** A comma-separated sorted list, as the rows keep it. */
const listOf = (ids: Set<string>): string => [...ids].sort().join(',');

interface Statements { put: Statement; drop: Statement; recount: Statement }

/** The key's columns and the id lists of a table (an engine table keeps its engine in the key). */
const keyColumns = (t: Table): string => (t.byEngine ? 'project_id, day, url, engine_id' : 'project_id, day, url');
const listColumns = (t: Table): string => (t.byEngine ? 'prompt_ids' : 'engine_ids, prompt_ids');

/**
 * The table's rows of one project from its counted agg_url_day rows in a day range, one URL or all
 * (@url NULL). The same rule as migration 009's backfill, for one project.
 */
function recountSql(t: Table): string {
  const lists = t.byEngine ? 'a.engine_id' : 'group_concat(DISTINCT a.engine_id ORDER BY a.engine_id) AS engine_ids';
  return `INSERT INTO ${t.name} (${keyColumns(t)}, domain, runs, ${listColumns(t)}, first_at, last_at, title, title_at, title_bucket, title_run)
  SELECT ${keyColumns(t).replace('day', 'period')}, domain, runs, ${listColumns(t)}, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT a.project_id, ${PERIOD_SQL[t.grain]('a.day')} AS period, a.url, min(a.domain) AS domain, sum(a.runs) AS runs,
      ${lists}, group_concat(DISTINCT a.prompt_id ORDER BY a.prompt_id) AS prompt_ids,
      min(a.first_at) AS first_at, max(a.last_at) AS last_at,
      (json_group_array(json_array(a.title, a.title_at, a.day || ' ' || a.engine_id || ' ' || a.prompt_id, a.title_run)
        ORDER BY a.title_at DESC, a.day, a.engine_id, a.prompt_id) FILTER (WHERE a.title IS NOT NULL AND a.title_at > '')) -> 0 AS w
    FROM agg_url_day a
    WHERE a.project_id = @project AND a.day BETWEEN @start AND @end AND (@url IS NULL OR a.url = @url)
      AND a.prompt_id IN (SELECT id FROM prompts WHERE project_id = @project AND deleted = 0) AND a.engine_id IN (SELECT id FROM engines)
    GROUP BY period, a.url${t.byEngine ? ', a.engine_id' : ''})`;
}

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
    recount: db.prepare(recountSql(t)),
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

export class CitedRollups {
  private readonly stmts: ReadonlyArray<{ table: Table; s: Statements }>;

  constructor(db: Db) {
    this.stmts = TABLES.map((table) => ({ table, s: statements(db, table) }));
  }

  /**
   * The batch's counted citations merged in, the periods `left` touches and the `projects` counted
   * again. Called once agg_url_day holds the batch.
   */
  write(adds: Iterable<CitedAdd>, left: Iterable<CitedLeft>, projects: ReadonlySet<string>): void {
    const periods = new Map<string, Record<Grain, string>>(); // a batch holds few days: each one's periods once
    const periodOf = (day: string, grain: Grain): string => {
      let p = periods.get(day);
      if (!p) periods.set(day, (p = { day, week: periodStart(day, 'week'), month: periodStart(day, 'month') }));
      return p[grain];
    };
    // Per table, period and URL (all of its engines: a recount is per URL).
    const again = new Map<string, { at: number; projectId: string; period: string; url: string }>();
    for (const l of left) {
      if (projects.has(l.projectId)) continue;
      this.stmts.forEach(({ table }, at) => {
        const period = periodOf(l.day, table.grain);
        again.set(`${at}|${l.projectId}|${period}|${l.url}`, { at, projectId: l.projectId, period, url: l.url });
      });
    }
    const merged = new Map<string, { at: number; row: CitedRow }>();
    for (const a of adds) {
      if (projects.has(a.projectId)) continue;
      this.stmts.forEach(({ table }, at) => {
        const period = periodOf(a.day, table.grain);
        const k = `${at}|${a.projectId}|${period}|${a.url}`;
        if (again.has(k)) return; // counted from the day rows below, this batch's among them
        const engineId = table.byEngine ? a.engineId : null;
        const mk = engineId === null ? k : `${k}|${engineId}`;
        let m = merged.get(mk);
        if (!m) {
          const row: CitedRow = { projectId: a.projectId, period, url: a.url, engineId, domain: a.domain, runs: 0, engines: new Set(), prompts: new Set(), firstAt: a.firstAt, lastAt: a.lastAt, titled: null };
          merged.set(mk, (m = { at, row }));
        }
        mergeInto(m.row, a);
      });
    }
    for (const { at, row } of merged.values()) this.put(at, row);
    for (const r of again.values()) this.recount(r.at, r.projectId, r.period, periodEnd(r.period, this.stmts[r.at]!.table.grain), r.url);
    for (const projectId of projects) this.stmts.forEach((_, at) => this.recount(at, projectId, ALL_DAYS.start, ALL_DAYS.end, null));
  }

  private put(at: number, row: CitedRow): void {
    const { table, s } = this.stmts[at]!;
    const key = row.engineId === null ? [row.projectId, row.period, row.url] : [row.projectId, row.period, row.url, row.engineId];
    const lists = table.byEngine ? [listOf(row.prompts)] : [listOf(row.engines), listOf(row.prompts)];
    const t = row.titled;
    s.put.run(...key, row.domain, row.runs, ...lists, row.firstAt, row.lastAt, t?.title ?? null, t?.at ?? null, t?.bucket ?? null, t?.run ?? null);
  }

  private recount(at: number, projectId: string, start: string, end: string, url: string | null): void {
    const { s } = this.stmts[at]!;
    s.drop.run({ project: projectId, start, end, url });
    s.recount.run({ project: projectId, start, end, url });
  }
}
