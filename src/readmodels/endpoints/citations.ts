// GET /projects/:project_id/citations — the URLs AI answers cite, over the current window.
import type { Endpoint } from '../endpoint';
import type { ReadStore } from '../store';
import type { Citations } from '../bodies.gen';
import { COUNTED_RUNS, compareStrings, engineFilter, rangePieces, requestedWindow, stalePeriods, type Piece, type RangeArgs } from '../formulas';
import { citeRun, newCited, parseCited, titledFrom, titleWins, type Cited, type UrlCitations } from '../../store/contributions';
import { matchesAny, ownDomains } from '../domains';
import { rankedPage, type Ranked } from '../paging';

/** One cited URL over the requested days, from the runs of its days and the cited-URL roll-ups. Referrers and warm leads start from these too. */
export interface CitedUrl {
  url: string;
  domain: string;
  title: string | null;
  citation_count: number;      // succeeded runs citing the URL (a run counts once per URL)
  prompt_count: number;        // distinct prompts among those runs
  engine_ids: string[];        // sorted
  first_cited_at: string;
  last_cited_at: string;
}

/** Most cited first, then by URL. */
export function byCitationsThenUrl(a: CitedUrl, b: CitedUrl): number {
  return b.citation_count - a.citation_count || compareStrings(a.url, b.url);
}

/** The rows of one roll-up piece of a range, in the columns every piece gives (see citedSql). */
const PIECE_COLUMNS = 'url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket';

/**
 * A week or month piece of a range from the cited-URL roll-ups (migration 009: counted runs only, no
 * prompt in the key). Without an engine filter: agg_cited_week/_month, one row per URL and period.
 * With one: agg_cited_engine_week/_month.
 */
function pieceSql(p: Piece, filtered: boolean): string {
  const range = 'a.project_id = ? AND a.day BETWEEN ? AND ?';
  if (!filtered) return `SELECT ${PIECE_COLUMNS} FROM agg_cited_${p.grain} a WHERE ${range}`;
  return `SELECT url, domain, runs, engine_id AS engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket
    FROM agg_cited_engine_${p.grain} a WHERE ${range}${engineFilter([]).sql}`;
}

/** What pieceSql binds: the project and the piece's days, then the engines. */
function pieceParams(p: Piece, projectId: string, engines: string | null): unknown[] {
  return engines === null ? [projectId, p.start, p.end] : [projectId, p.start, p.end, engines];
}

/**
 * A range's roll-up pieces merged in SQL (whole months and weeks as one row per URL). The same
 * numbers as merging the runs: runs add, first and last are min and max (ISO instants: text order is
 * time order), the id lists are unions (comma-separated, so one group_concat joins a URL's pieces;
 * DISTINCT drops the lists repeated from month to month before JavaScript splits them), domain is any
 * row's (the write path derives it from the URL), and the title is the latest title_at, then the first
 * bucket in key order (title_bucket: day, engine, prompt), given with both so the days can compete.
 * One text per sequence of piece grains (a few dozen sequences exist), each prepared once by the store.
 */
function citedSql(pieces: readonly Piece[], filtered: boolean): string {
  return `SELECT url, min(domain), sum(runs), group_concat(DISTINCT engine_ids), group_concat(DISTINCT prompt_ids), min(first_at), max(last_at),
    (json_group_array(json_array(title, title_at, title_bucket) ORDER BY title_at DESC, title_bucket) FILTER (WHERE title IS NOT NULL)) ->> 0
  FROM (${pieces.map((p) => pieceSql(p, filtered)).join(' UNION ALL ')}) GROUP BY url`;
}

type CitedRow = [url: string, domain: string, runs: number, engine_ids: string, prompt_ids: string, first_at: string, last_at: string, titled: string | null];

/**
 * A range's days from the runs themselves (migration 011): the counted, succeeded runs completed on
 * those days, each URL once per run as the run's `cited` keeps it, merged by the writer's rules
 * (src/store/contributions.ts citeRun).
 */
const RUNS_OF_DAYS = (filtered: boolean): string => `SELECT a.id, a.day, a.engine_id, a.prompt_id, a.completed_at, a.cited FROM prompt_runs a
  WHERE a.project_id = ? AND a.completed_at >= ? AND a.completed_at < ? || 'U' AND a.status = 'succeeded'${COUNTED_RUNS}${filtered ? engineFilter([]).sql : ''}`;
const DAY_RUNS = { unfiltered: RUNS_OF_DAYS(false), filtered: RUNS_OF_DAYS(true) };
interface DayRun { id: string; day: string; engine_id: string; prompt_id: string; completed_at: string; cited: string }

/** The URLs of a day piece's runs. */
function citedOfDays(store: ReadStore, into: Map<string, UrlCitations>, p: Piece, projectId: string, engines: string | null): void {
  const sql = DAY_RUNS[engines === null ? 'unfiltered' : 'filtered'];
  for (const run of store.all<DayRun>(sql, projectId, p.start, p.end, projectId, ...(engines === null ? [] : [engines]))) {
    citeRun(into, run, parseCited(run.cited));
  }
}

/** A roll-up pieces' row merged into the days' (or taken as it is). */
function mergeRow(into: Map<string, Cited>, r: CitedRow): void {
  const [url, domain, runs, engineIds, promptIds, firstAt, lastAt, titled] = r;
  let u = into.get(url);
  if (!u) into.set(url, (u = newCited(url, domain, firstAt)));
  u.runs += runs;
  for (const id of engineIds.split(',')) u.engines.add(id);
  for (const id of promptIds.split(',')) u.prompts.add(id);
  if (firstAt < u.firstAt) u.firstAt = firstAt;
  if (lastAt > u.lastAt) u.lastAt = lastAt;
  if (titled === null) return;
  const [title, at, bucket] = JSON.parse(titled) as [string, string, string];
  // Days and roll-ups cover different days, so two candidates never share a bucket: the run id is not needed.
  const t = titledFrom(title, at, bucket, null);
  if (titleWins(t, u.titled)) u.titled = t;
}

/** Every URL cited by counted runs in the requested window (after the engine filter), most cited first. */
export function citedUrls(store: ReadStore, args: RangeArgs & { windowDays: number }, engineIds: string[] | null): CitedUrl[] {
  const window = requestedWindow(store, args, args.windowDays);
  if (!window) return [];
  const pieces = rangePieces(window.start, window.end, 'total', stalePeriods(store, args.projectId));
  const engines = engineIds === null ? null : JSON.stringify(engineIds);
  const days = new Map<string, UrlCitations>();
  for (const p of pieces) if (p.grain === 'day') citedOfDays(store, days, p, args.projectId, engines);
  const urls = new Map<string, Cited>();
  for (const [url, u] of days) urls.set(url, u.merged());
  const rolled = pieces.filter((p) => p.grain !== 'day');
  if (rolled.length > 0) {
    for (const r of store.rows<CitedRow>(citedSql(rolled, engines !== null), ...rolled.flatMap((p) => pieceParams(p, args.projectId, engines)))) mergeRow(urls, r);
  }
  return [...urls.values()].map((u): CitedUrl => ({
    url: u.url, domain: u.domain, title: u.titled?.title ?? null, citation_count: u.runs, prompt_count: u.prompts.size,
    engine_ids: [...u.engines].sort(), first_cited_at: u.firstAt, last_cited_at: u.lastAt,
  })).sort(byCitationsThenUrl);
}

type Citation = Citations[number];

/** Counts grow as runs arrive and the window moves: pages come from one pinned list (paging.ts Ranked). */
const citations: Ranked<Citation> = {
  name: 'citations',
  all(store, args) {
    const own = ownDomains(store, args.projectId);
    return citedUrls(store, args, args.engineIds).map((u) => ({
      url: u.url, domain: u.domain, title: u.title, citation_count: u.citation_count, prompt_count: u.prompt_count,
      engine_ids: u.engine_ids, is_own_domain: matchesAny(u.domain, own),
      first_cited_at: u.first_cited_at, last_cited_at: u.last_cited_at,
    }));
  },
  // byCitationsThenUrl's order: most cited first, then by URL (unique per list).
  keyOf: (c) => [c.citation_count, c.url],
  compare: (a, b) => Number(b[0]) - Number(a[0]) || compareStrings(String(a[1]), String(b[1])),
};

export const endpoint: Endpoint = {
  name: 'citations',
  path: '/projects/:project_id/citations',
  summary: 'Source citations: URLs cited in AI answers over the current window, most cited first',
  scope: 'project',
  query: { engineIds: true, limit: { default: 100, max: 1000 }, range: 'window' },
  schema: 'citations',
  build(store, args): Citations {
    return citations.all(store, args).slice(0, args.limit);
  },
  page: (store, args, ctx) => rankedPage(citations, store, args, ctx),
};
