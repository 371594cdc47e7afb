// GET /projects/:project_id/citations — the URLs AI answers cite, over the current window.
import type { Endpoint } from './endpoint';
import type { ReadStore } from './store';
import type { Citations } from './bodies.gen';
import { COUNTED_RUNS_JOIN, compareStrings, currentWindow, engineFilter } from './metrics';
import { matchesAny, ownDomains } from './domains';

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

interface UrlDayRow {
  url: string;
  domain: string;
  engine_id: string;
  prompt_id: string;
  runs: number;
  first_at: string;
  last_at: string;
  title: string | null;
  title_at: string | null;     // when the titled citation was made (last_at may be a later one without a title)
}

const URL_DAY_ROWS = `SELECT a.url, a.domain, a.engine_id, a.prompt_id, a.runs, a.first_at, a.last_at, a.title, a.title_at
  FROM agg_url_day a ${COUNTED_RUNS_JOIN}
  WHERE a.project_id = ? AND a.day BETWEEN ? AND ?`;
/** Bucket (primary key) order: the title tie-break below depends on it, so it is part of the query. */
const BUCKET_ORDER = ' ORDER BY a.day, a.engine_id, a.prompt_id, a.url';

interface Acc extends CitedUrl {
  prompts: Set<string>;
  engines: Set<string>;
  titleAt: string;             // title_at of the row the title came from
}

function startAcc(r: UrlDayRow): Acc {
  return {
    url: r.url, domain: r.domain, title: null, citation_count: 0, prompt_count: 0, engine_ids: [],
    first_cited_at: r.first_at, last_cited_at: r.last_at, prompts: new Set(), engines: new Set(), titleAt: '',
  };
}

function addRow(acc: Acc, r: UrlDayRow): void {
  acc.citation_count += r.runs;
  acc.prompts.add(r.prompt_id);
  acc.engines.add(r.engine_id);
  if (r.first_at < acc.first_cited_at) acc.first_cited_at = r.first_at;
  if (r.last_at > acc.last_cited_at) acc.last_cited_at = r.last_at;
  // The title of the latest titled citation; on equal times the first row in bucket order keeps it.
  if (r.title !== null && r.title_at !== null && r.title_at > acc.titleAt) {
    acc.title = r.title;
    acc.titleAt = r.title_at;
  }
}

function finish(acc: Acc): CitedUrl {
  return {
    url: acc.url, domain: acc.domain, title: acc.title, citation_count: acc.citation_count,
    prompt_count: acc.prompts.size, engine_ids: [...acc.engines].sort(),
    first_cited_at: acc.first_cited_at, last_cited_at: acc.last_cited_at,
  };
}

/** Most cited first, then by URL. */
export function byCitationsThenUrl(a: CitedUrl, b: CitedUrl): number {
  return b.citation_count - a.citation_count || compareStrings(a.url, b.url);
}

/** Every URL cited by counted runs in the current window (after the engine filter), most cited first. */
export function citedUrls(store: ReadStore, projectId: string, windowDays: number, engineIds: string[] | null): CitedUrl[] {
  const window = currentWindow(store, projectId, windowDays);
  if (!window) return [];
  const f = engineFilter(engineIds);
  const rows = store.all<UrlDayRow>(URL_DAY_ROWS + f.sql + BUCKET_ORDER, projectId, window.start, window.end, ...f.params);
  const byUrl = new Map<string, Acc>();
  for (const r of rows) {
    let acc = byUrl.get(r.url);
    if (!acc) byUrl.set(r.url, (acc = startAcc(r)));
    addRow(acc, r);
  }
  return [...byUrl.values()].map(finish).sort(byCitationsThenUrl);
}

export const endpoint: Endpoint = {
  name: 'citations',
  path: '/projects/:project_id/citations',
  summary: 'Source citations: URLs cited in AI answers over the current window, most cited first',
  scope: 'project',
  query: { engineIds: true, limit: { default: 100, max: 1000 } },
  schema: 'citations',
  build(store, args): Citations {
    const own = ownDomains(store, args.projectId);
    return citedUrls(store, args.projectId, args.windowDays, args.engineIds).slice(0, args.limit).map((u) => ({
      url: u.url, domain: u.domain, title: u.title, citation_count: u.citation_count, prompt_count: u.prompt_count,
      engine_ids: u.engine_ids, is_own_domain: matchesAny(u.domain, own),
      first_cited_at: u.first_cited_at, last_cited_at: u.last_cited_at,
    }));
  },
};
