// GET /projects/:project_id/citations — the URLs AI answers cite, over the current window.
import type { Endpoint } from '../endpoint';
import type { ReadStore } from '../store';
import type { Citations } from '../bodies.gen';
import { COUNTED_RUNS, compareStrings, engineFilter, rangePieces, requestedWindow, type Piece, type RangeArgs } from '../formulas';
import { matchesAny, ownDomains } from '../domains';
import { rankedPage, type Ranked } from '../paging';

/** One cited URL summed over the window's agg_url_day rows. Referrers and warm leads start from these too. */
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

/** One URL summed in SQL over the window's counted agg_url_day rows (see CITED_URLS). */
interface UrlRow {
  url: string;
  domain: string;
  citation_count: number;
  prompt_count: number;
  engine_ids: string;          // JSON array of distinct engine ids, unordered
  first_at: string;
  last_at: string;
  titles: string;              // JSON array: titles of titled rows, the one to show first
}

/**
 * Summed per URL in SQL: a window has a few URLs cited from thousands of bucket rows, and turning each
 * row into a JS object cost most of the build (about 0.5 us a row plus every string column).
 * - domain: a URL's rows all hold domainOf(url) (the write path derives it, never the event), so min is any row's.
 * - title: of the latest titled citation; at equal title_at the first row in bucket (primary key) order,
 *   which is what the ORDER BY inside the aggregate states (unique per URL: one row per bucket).
 * - first/last: min/max of ISO instants (fixed width ASCII: text order is time order).
 */
const CITED_URLS = `SELECT a.url, min(a.domain) AS domain, sum(a.runs) AS citation_count,
    count(DISTINCT a.prompt_id) AS prompt_count, json_group_array(DISTINCT a.engine_id) AS engine_ids,
    min(a.first_at) AS first_at, max(a.last_at) AS last_at,
    json_group_array(a.title ORDER BY a.title_at DESC, a.day, a.engine_id, a.prompt_id)
      FILTER (WHERE a.title IS NOT NULL AND a.title_at > '') AS titles
  FROM agg_url_day a
  WHERE a.project_id = ? AND a.day BETWEEN ? AND ?${COUNTED_RUNS}`;
const BY_URL = ' GROUP BY a.url';

function toCitedUrl(r: UrlRow): CitedUrl {
  const titles = JSON.parse(r.titles) as string[];
  return {
    url: r.url, domain: r.domain, title: titles.length > 0 ? titles[0]! : null, citation_count: r.citation_count,
    prompt_count: r.prompt_count, engine_ids: (JSON.parse(r.engine_ids) as string[]).sort(),
    first_cited_at: r.first_at, last_cited_at: r.last_at,
  };
}

/** Most cited first, then by URL. */
export function byCitationsThenUrl(a: CitedUrl, b: CitedUrl): number {
  return b.citation_count - a.citation_count || compareStrings(a.url, b.url);
}

/** One URL merged in SQL over the pieces of a range (see CITED_PIECES). */
type PiecesRow = [url: string, domain: string, citation_count: number, engine_ids: string, prompt_ids: string, first_at: string, last_at: string, title: string | null];

/**
 * Without an engine filter, a range is read from the cited-URL roll-ups (migration 009: counted runs
 * only, no prompt or engine in the key): its whole months and weeks as one row per URL, only its
 * ragged edges as days. The same numbers as summing the day rows: runs add, first/last are min/max,
 * the id lists are unions (comma-separated, so one group_concat joins a URL's pieces), and the title is
 * the same rule's winner (latest title_at, then first bucket: title_bucket is day, engine, prompt).
 */
function citedPiecesSql(pieces: readonly Piece[]): string {
  const piece = (p: Piece): string => `SELECT url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket
    FROM agg_cited_${p.grain} WHERE project_id = ? AND day BETWEEN ? AND ?`;
  return `SELECT url, min(domain), sum(runs), group_concat(engine_ids), group_concat(prompt_ids), min(first_at), max(last_at),
    (json_group_array(title ORDER BY title_at DESC, title_bucket) FILTER (WHERE title IS NOT NULL)) ->> 0
  FROM (${pieces.map(piece).join(' UNION ALL ')}) GROUP BY url`;
}

/** Distinct ids of a comma-joined list of comma-separated lists. */
const distinctIds = (lists: string): string[] => [...new Set(lists.split(','))];

function fromPieces(store: ReadStore, projectId: string, start: string, end: string): CitedUrl[] {
  const pieces = rangePieces(start, end, 'total');
  return store.rows<PiecesRow>(citedPiecesSql(pieces), ...pieces.flatMap((p) => [projectId, p.start, p.end])).map((r) => ({
    url: r[0], domain: r[1], title: r[7], citation_count: r[2], prompt_count: distinctIds(r[4]).length,
    engine_ids: distinctIds(r[3]).sort(), first_cited_at: r[5], last_cited_at: r[6],
  }));
}

/** Every URL cited by counted runs in the requested window (after the engine filter), most cited first. */
export function citedUrls(store: ReadStore, args: RangeArgs & { windowDays: number }, engineIds: string[] | null): CitedUrl[] {
  const window = requestedWindow(store, args, args.windowDays);
  if (!window) return [];
  if (engineIds === null) return fromPieces(store, args.projectId, window.start, window.end).sort(byCitationsThenUrl);
  const f = engineFilter(engineIds);
  return store.all<UrlRow>(CITED_URLS + f.sql + BY_URL, args.projectId, window.start, window.end, args.projectId, ...f.params).map(toCitedUrl).sort(byCitationsThenUrl);
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
