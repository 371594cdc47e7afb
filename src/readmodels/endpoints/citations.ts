// GET /projects/:project_id/citations — the URLs AI answers cite, over the current window.
import type { Endpoint } from '../endpoint';
import type { ReadStore } from '../store';
import type { Citations } from '../bodies.gen';
import { COUNTED_RUNS, compareStrings, engineFilter, rangePieces, requestedWindow, stalePeriods, type Piece, type RangeArgs } from '../formulas';
import { matchesAny, ownDomains } from '../domains';
import { rankedPage, type Ranked } from '../paging';

/** One cited URL over the requested days, from the cited-URL roll-ups. Referrers and warm leads start from these too. */
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

/** The rows of one piece of a range, in the columns every piece gives (see citedSql). */
const PIECE_COLUMNS = 'url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket';

/**
 * A piece of a range from the cited-URL roll-ups (migration 009: counted runs only, no prompt in the
 * key). Without an engine filter: agg_cited_day/_week/_month, one row per URL and period. With one:
 * agg_cited_engine_week/_month, and days from agg_url_day itself (counted rows, the same columns; a
 * day row's title counts only with its instant, as the roll-ups keep it).
 */
function pieceSql(p: Piece, filtered: boolean): string {
  const range = 'a.project_id = ? AND a.day BETWEEN ? AND ?';
  if (!filtered) return `SELECT ${PIECE_COLUMNS} FROM agg_cited_${p.grain} a WHERE ${range}`;
  const engines = engineFilter([]).sql;
  if (p.grain !== 'day') {
    return `SELECT url, domain, runs, engine_id AS engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket
    FROM agg_cited_engine_${p.grain} a WHERE ${range}${engines}`;
  }
  return `SELECT a.url, a.domain, a.runs, a.engine_id AS engine_ids, a.prompt_id AS prompt_ids, a.first_at, a.last_at,
      CASE WHEN a.title_at > '' THEN a.title END AS title, a.title_at, a.day || ' ' || a.engine_id || ' ' || a.prompt_id AS title_bucket
    FROM agg_url_day a WHERE ${range}${COUNTED_RUNS}${engines}`;
}

/** What pieceSql binds: the project and the piece's days, the project again (COUNTED_RUNS), the engines. */
function pieceParams(p: Piece, projectId: string, engines: string | null): unknown[] {
  if (engines === null) return [projectId, p.start, p.end];
  return p.grain === 'day' ? [projectId, p.start, p.end, projectId, engines] : [projectId, p.start, p.end, engines];
}

/**
 * A range's URLs merged in SQL over its pieces (rangePieces: whole months and weeks as one row per
 * URL, only the ragged edges as days). The same numbers as summing its day rows: runs add, first and
 * last are min and max (ISO instants: text order is time order), the id lists are unions
 * (comma-separated, so one group_concat joins a URL's pieces; DISTINCT drops the lists repeated from
 * month to month before JavaScript splits them), domain is any row's (the write path
 * derives it from the URL), and the title is the day rows' rule: the latest title_at, then the first
 * bucket in key order (title_bucket: day, engine, prompt). One text per sequence of piece grains (a
 * few dozen sequences exist), each prepared once by the store.
 */
function citedSql(pieces: readonly Piece[], filtered: boolean): string {
  return `SELECT url, min(domain), sum(runs), group_concat(DISTINCT engine_ids), group_concat(DISTINCT prompt_ids), min(first_at), max(last_at),
    (json_group_array(title ORDER BY title_at DESC, title_bucket) FILTER (WHERE title IS NOT NULL)) ->> 0
  FROM (${pieces.map((p) => pieceSql(p, filtered)).join(' UNION ALL ')}) GROUP BY url`;
}

type CitedRow = [url: string, domain: string, citation_count: number, engine_ids: string, prompt_ids: string, first_at: string, last_at: string, title: string | null];

/** Distinct ids of a comma-joined list of comma-separated lists. */
const distinctIds = (lists: string): Set<string> => new Set(lists.split(','));

/** Every URL cited by counted runs in the requested window (after the engine filter), most cited first. */
export function citedUrls(store: ReadStore, args: RangeArgs & { windowDays: number }, engineIds: string[] | null): CitedUrl[] {
  const window = requestedWindow(store, args, args.windowDays);
  if (!window) return [];
  const pieces = rangePieces(window.start, window.end, 'total', stalePeriods(store, args.projectId));
  const engines = engineIds === null ? null : JSON.stringify(engineIds);
  const rows = store.rows<CitedRow>(citedSql(pieces, engines !== null), ...pieces.flatMap((p) => pieceParams(p, args.projectId, engines)));
  return rows.map((r): CitedUrl => ({
    url: r[0], domain: r[1], title: r[7], citation_count: r[2], prompt_count: distinctIds(r[4]).size,
    engine_ids: [...distinctIds(r[3])].sort(), first_cited_at: r[5], last_cited_at: r[6],
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
