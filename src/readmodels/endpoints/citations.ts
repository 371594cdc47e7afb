// GET /projects/:project_id/citations — the URLs AI answers cite, over the current window.
import type { Endpoint } from '../endpoint';
import type { Citations } from '../bodies.gen';
import {
  addCitedTallies, citedDomain, citedEngineRows, citedRefs, citedRows, citeFacts, citeUrl, compareStrings, decodeFacts, mergeCited, parseNames, rollupLists, type Cited, type CitedRef, type CitedTally,
  type RunFactFields, type ReadStore, type UrlCitations,
} from '../store';
import { countingOf, rollupRows, runsOfDays } from '../counted-runs';
import { EVERY_PERIOD_STALE, rangePieces, stalePeriods, type Piece } from '../range-pieces';
import { filterOf, requestedWindow, type RangeArgs, type RunFilter } from '../windows';
import { matchesAny, ownDomains } from '../domains';
import { rankedPage, type Ranked } from '../paging';

/** One cited URL over the requested days, from the runs of its days and the cited-URL roll-ups. Warm leads start from these too (referrers from citedTallies). */
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

/**
 * A range's days from the runs themselves (migration 011): the counted, succeeded runs completed on
 * those days, each URL once per run as the run's facts keep it, merged by the writer's rules
 * (src/store/contributions.ts citeFacts, as the writer's recounts cite them).
 */
function citedOfDays(store: ReadStore, into: Map<string, UrlCitations>, args: RangeArgs, p: Piece, engineIds: string[] | null, filter: RunFilter | null,
  keep: KeepDomain | null): void {
  const slice = { projectId: args.projectId, start: p.start, end: p.end, engineIds, filter };
  for (const run of runsOfDays(store, slice, p, countingOf(store, args.projectId, filter), decodeFacts)) {
    const f: RunFactFields = run.facts;
    if (keep === null) {
      citeFacts(into, f.cited, f.engineId, run.completed_at, f.promptId, run.id);
      continue;
    }
    // citeFacts of the kept URLs only, the same citations of them.
    for (const [url, title] of f.cited) {
      const domain = citedDomain(url);
      if (keep(domain)) citeUrl(into, url, domain, f.engineId, title, run.completed_at, run.completed_at.slice(0, 10), f.promptId, run.id);
    }
  }
}

/** Which cited URLs a list shows, by their domain (warm leads: the community platforms'); null: every one. */
export type KeepDomain = (domain: string) => boolean;

/**
 * A week or month piece's rows merged into the URLs (migration 013: each period's cited rows, counted
 * runs only, no prompt in the key; with an engine filter, its rows of the engines asked for). The
 * same numbers as merging the runs (contributions.ts mergeCited): runs add, first and last are min
 * and max (ISO instants: text order is time order), the id lists unite, the domain is any row's (the
 * write path derives it from the URL), and the title is the latest, then the first bucket (day,
 * engine, prompt). Days and periods cover different days, so two titles never share a bucket.
 */
function citedOfPeriods(store: ReadStore, into: Map<string, Cited>, projectId: string, p: Piece, engineIds: string[] | null, keep: KeepDomain | null): void {
  const engines = engineIds === null ? null : new Set(engineIds);
  const periods = engines === null ? rollupRows(store, projectId, p, 'cited', (names, json) => citedRows(names, json, keep ?? undefined))
    : rollupRows(store, projectId, p, 'cited_engines', (names, json) => citedEngineRows(names, json, engines));
  for (const period of periods) {
    for (const c of period.rows) {
      const u = into.get(c.url);
      if (u) mergeCited(u, c);
      else into.set(c.url, c);
    }
  }
}

/** A cited range's pieces: its window cut as citedUrls reads it (a filtered range: every period as its days), or null without a window. */
function citedPieces(store: ReadStore, args: RangeArgs & Partial<RunFilter> & { windowDays: number }): { pieces: Piece[]; filter: RunFilter | null } | null {
  const window = requestedWindow(store, args, args.windowDays);
  if (!window) return null;
  const filter = filterOf(args);
  return { pieces: rangePieces(window.start, window.end, 'total', filter ? EVERY_PERIOD_STALE : stalePeriods(store, args.projectId)), filter };
}

/**
 * Every URL cited by counted runs in the requested window (after the engine filter and the request's
 * filters; with `keep`, those of the domains it keeps), most cited first. A filtered range is read from its runs: the cited roll-ups key by no
 * dimension, and count a URL's runs over all its prompts together.
 */
export function citedUrls(store: ReadStore, args: RangeArgs & Partial<RunFilter> & { windowDays: number }, engineIds: string[] | null,
  keep: KeepDomain | null = null): CitedUrl[] {
  const cut = citedPieces(store, args);
  if (!cut) return [];
  const { pieces, filter } = cut;
  const days = new Map<string, UrlCitations>();
  for (const p of pieces) if (p.grain === 'day') citedOfDays(store, days, args, p, engineIds, filter, keep);
  const urls = new Map<string, Cited>();
  for (const [url, u] of days) urls.set(url, u.merged());
  for (const p of pieces) if (p.grain !== 'day') citedOfPeriods(store, urls, args.projectId, p, engineIds, keep);
  return [...urls.values()].map(citedUrlOf).sort(byCitationsThenUrl);
}

const citedUrlOf = (u: Cited): CitedUrl => ({
  url: u.url, domain: u.domain, title: u.titled?.title ?? null, citation_count: u.runs, prompt_count: u.prompts.size,
  engine_ids: [...u.engines].sort(), first_cited_at: u.firstAt, last_cited_at: u.lastAt,
});

/** A URL while a page is chosen: its runs so far, its days' merge, and its period rows not made yet. */
interface Ranking { url: string; runs: number; days: Cited | null; rows: CitedRef[] }

/**
 * citedUrls' first `limit` URLs, the same bytes: every URL is ranked by its runs, and only the page's
 * are made whole (their period rows' engines, prompts and title), merged in citedUrls' order (the
 * days, then the periods' rows in turn), so a year of ~20k URLs makes 100.
 */
export function citedTop(store: ReadStore, args: RangeArgs & Partial<RunFilter> & { windowDays: number }, engineIds: string[] | null, limit: number): CitedUrl[] {
  const cut = citedPieces(store, args);
  if (!cut) return [];
  const { pieces, filter } = cut;
  const days = new Map<string, UrlCitations>();
  for (const p of pieces) if (p.grain === 'day') citedOfDays(store, days, args, p, engineIds, filter, null);
  const urls = new Map<string, Ranking>();
  for (const [url, u] of days) {
    const c = u.merged();
    urls.set(url, { url, runs: c.runs, days: c, rows: [] });
  }
  const engines = engineIds === null ? null : new Set(engineIds);
  for (const p of pieces) {
    if (p.grain === 'day') continue;
    const list = engines === null ? 'cited' : 'cited_engines';
    for (const [, ids, names, json] of rollupLists(store, args.projectId, p.grain, p.start, p.end, list)) {
      for (const ref of citedRefs(parseNames(ids, names), json, engines)) {
        const r = urls.get(ref.url);
        if (r === undefined) urls.set(ref.url, { url: ref.url, runs: ref.runs, days: null, rows: [ref] });
        else {
          r.runs += ref.runs;
          r.rows.push(ref);
        }
      }
    }
  }
  const page = [...urls.values()].sort((a, b) => b.runs - a.runs || compareStrings(a.url, b.url)).slice(0, limit);
  return page.map((r) => {
    let c = r.days;
    for (const ref of r.rows) {
      if (c === null) c = ref.cited();
      else mergeCited(c, ref.cited());
    }
    return citedUrlOf(c!);
  });
}

/**
 * Each URL's runs, domain and engines over the requested window (every engine), by URL: what
 * referrers show of it, from the same runs and rows as citedUrls, without the prompts, times and
 * titles it would make of each and drop. The days first, then the periods: a URL takes the domain of
 * the first that names it, as in citedUrls (the write path derives it from the URL in both).
 */
export function citedTallies(store: ReadStore, args: RangeArgs & Partial<RunFilter> & { windowDays: number }): Map<string, CitedTally> {
  const out = new Map<string, CitedTally>();
  const cut = citedPieces(store, args);
  if (!cut) return out;
  const { pieces, filter } = cut;
  for (const p of pieces) {
    if (p.grain !== 'day') continue;
    const slice = { projectId: args.projectId, start: p.start, end: p.end, engineIds: null, filter };
    for (const run of runsOfDays(store, slice, p, countingOf(store, args.projectId, filter), decodeFacts)) {
      const f: RunFactFields = run.facts;
      // A run's facts keep each URL once: one run citing it.
      for (const [url] of f.cited) {
        const t = out.get(url);
        if (t === undefined) out.set(url, { domain: citedDomain(url), runs: 1, engines: new Set([f.engineId]) });
        else {
          t.runs += 1;
          t.engines.add(f.engineId);
        }
      }
    }
  }
  for (const p of pieces) {
    if (p.grain === 'day') continue;
    for (const [, ids, urls, json] of rollupLists(store, args.projectId, p.grain, p.start, p.end, 'cited')) addCitedTallies(out, parseNames(ids, urls), json);
  }
  return out;
}

type Citation = Citations[number];

const citationOf = (u: CitedUrl, own: ReturnType<typeof ownDomains>): Citation => ({
  url: u.url, domain: u.domain, title: u.title, citation_count: u.citation_count, prompt_count: u.prompt_count,
  engine_ids: u.engine_ids, is_own_domain: matchesAny(u.domain, own),
  first_cited_at: u.first_cited_at, last_cited_at: u.last_cited_at,
});

/** Counts grow as runs arrive and the window moves: pages come from one pinned list (paging.ts Ranked). */
const citations: Ranked<Citation> = {
  all(store, args) {
    const own = ownDomains(store, args.projectId);
    return citedUrls(store, args, args.engineIds).map((u) => citationOf(u, own));
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
  params: ['engine_ids', 'limit-default-100', 'start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids', 'cursor'],
  schema: 'citations',
  dependsOn: ['runs', 'setup', 'engines', 'project'],
  build(store, args): Citations {
    // citations.all(...).slice(0, limit), with only the page's URLs made whole.
    const own = ownDomains(store, args.projectId);
    return citedTop(store, args, args.engineIds, args.limit).map((u) => citationOf(u, own));
  },
  page: (store, args, ctx) => rankedPage(citations, endpoint, store, args, ctx),
};
