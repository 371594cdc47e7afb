import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { PERIOD_SQL, periodEnd, periodStart, type Grain } from './periods';

/**
 * The cited-URL roll-ups of migration 009: per project, period and URL, over counted runs, without
 * the prompt and the engine. What a batch adds is merged into the stored rows (runs add, first and
 * last by min and max, the id lists by union, the title by the winning rule); a row a superseded run
 * left, and every row of a project whose counting changed, is counted again from agg_url_day, which
 * holds the batch by then.
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
  domain: string;
  runs: number;
  engines: Set<string>;
  prompts: Set<string>;
  firstAt: string;
  lastAt: string;
  titled: Titled | null;
}

const GRAINS: readonly Grain[] = ['day', 'week', 'month'];
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

interface Statements { get: Statement; put: Statement; drop: Statement; recount: Statement }

/**
 * The grain's rows of one project from its counted agg_url_day rows in a day range, one URL or all
 * (@url NULL). The same rule as migration 009's backfill, for one project.
 */
function recountSql(grain: Grain): string {
  return `INSERT INTO agg_cited_${grain} (project_id, day, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  SELECT project_id, period, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT a.project_id, ${PERIOD_SQL[grain]('a.day')} AS period, a.url, min(a.domain) AS domain, sum(a.runs) AS runs,
      group_concat(DISTINCT a.engine_id ORDER BY a.engine_id) AS engine_ids, group_concat(DISTINCT a.prompt_id ORDER BY a.prompt_id) AS prompt_ids,
      min(a.first_at) AS first_at, max(a.last_at) AS last_at,
      (json_group_array(json_array(a.title, a.title_at, a.day || ' ' || a.engine_id || ' ' || a.prompt_id, a.title_run)
        ORDER BY a.title_at DESC, a.day, a.engine_id, a.prompt_id) FILTER (WHERE a.title IS NOT NULL AND a.title_at > '')) -> 0 AS w
    FROM agg_url_day a
    WHERE a.project_id = @project AND a.day BETWEEN @start AND @end AND (@url IS NULL OR a.url = @url)
      AND a.prompt_id IN (SELECT id FROM prompts WHERE project_id = @project AND deleted = 0) AND a.engine_id IN (SELECT id FROM engines)
    GROUP BY period, a.url)`;
}

function statements(db: Db, grain: Grain): Statements {
  const table = `agg_cited_${grain}`;
  return {
    get: db.prepare(`SELECT domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run
      FROM ${table} WHERE project_id = ? AND day = ? AND url = ?`).raw(true),
    put: db.prepare(`INSERT INTO ${table} (project_id, day, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, day, url) DO UPDATE SET runs = excluded.runs, engine_ids = excluded.engine_ids, prompt_ids = excluded.prompt_ids,
        first_at = excluded.first_at, last_at = excluded.last_at, title = excluded.title, title_at = excluded.title_at,
        title_bucket = excluded.title_bucket, title_run = excluded.title_run`),
    drop: db.prepare(`DELETE FROM ${table} WHERE project_id = @project AND day BETWEEN @start AND @end AND (@url IS NULL OR url = @url)`),
    recount: db.prepare(recountSql(grain)),
  };
}

type StoredRow = [domain: string, runs: number, engines: string, prompts: string, firstAt: string, lastAt: string,
  title: string | null, titleAt: string | null, titleBucket: string | null, titleRun: string | null];

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

/** The stored row's values merged into the batch's (both are sums of disjoint citations). */
function mergeStored(into: CitedRow, s: StoredRow): void {
  const [, runs, engines, prompts, firstAt, lastAt, title, titleAt, titleBucket, titleRun] = s;
  into.runs += runs;
  for (const e of engines.split(',')) into.engines.add(e);
  for (const p of prompts.split(',')) into.prompts.add(p);
  if (firstAt < into.firstAt) into.firstAt = firstAt;
  if (lastAt > into.lastAt) into.lastAt = lastAt;
  if (title === null || titleAt === null) return;
  const t = { title, at: titleAt, bucket: titleBucket ?? '', run: titleRun ?? '' };
  if (wins(t, into.titled)) into.titled = t;
}

export class CitedRollups {
  private readonly stmts: Record<Grain, Statements>;

  constructor(db: Db) {
    this.stmts = { day: statements(db, 'day'), week: statements(db, 'week'), month: statements(db, 'month') };
  }

  /**
   * The batch's counted citations merged in, the periods `left` touches and the `projects` counted
   * again. Called once agg_url_day holds the batch.
   */
  write(adds: Iterable<CitedAdd>, left: Iterable<CitedLeft>, projects: ReadonlySet<string>): void {
    const again = new Map<string, { grain: Grain; projectId: string; period: string; url: string }>();
    for (const l of left) {
      if (projects.has(l.projectId)) continue;
      for (const grain of GRAINS) {
        const period = periodStart(l.day, grain);
        again.set(`${grain}|${l.projectId}|${period}|${l.url}`, { grain, projectId: l.projectId, period, url: l.url });
      }
    }
    const merged = new Map<string, { grain: Grain; row: CitedRow }>();
    for (const a of adds) {
      if (projects.has(a.projectId)) continue;
      for (const grain of GRAINS) {
        const period = periodStart(a.day, grain);
        const k = `${grain}|${a.projectId}|${period}|${a.url}`;
        if (again.has(k)) continue; // counted from the day rows below, this batch's among them
        let m = merged.get(k);
        if (!m) {
          const row: CitedRow = { projectId: a.projectId, period, url: a.url, domain: a.domain, runs: 0, engines: new Set(), prompts: new Set(), firstAt: a.firstAt, lastAt: a.lastAt, titled: null };
          merged.set(k, (m = { grain, row }));
        }
        mergeInto(m.row, a);
      }
    }
    for (const { grain, row } of merged.values()) this.put(grain, row);
    for (const r of again.values()) this.recount(r.grain, r.projectId, r.period, periodEnd(r.period, r.grain), r.url);
    for (const projectId of projects) for (const grain of GRAINS) this.recount(grain, projectId, ALL_DAYS.start, ALL_DAYS.end, null);
  }

  private put(grain: Grain, row: CitedRow): void {
    const s = this.stmts[grain];
    const stored = s.get.get(row.projectId, row.period, row.url) as StoredRow | undefined;
    if (stored) mergeStored(row, stored);
    const t = row.titled;
    s.put.run(row.projectId, row.period, row.url, row.domain, row.runs, listOf(row.engines), listOf(row.prompts), row.firstAt, row.lastAt,
      t?.title ?? null, t?.at ?? null, t?.bucket ?? null, t?.run ?? null);
  }

  private recount(grain: Grain, projectId: string, start: string, end: string, url: string | null): void {
    const s = this.stmts[grain];
    s.drop.run({ project: projectId, start, end, url });
    s.recount.run({ project: projectId, start, end, url });
  }
}
