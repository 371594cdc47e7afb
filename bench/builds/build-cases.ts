// The requests the build benches time (bench/builds/builds.ts, bench/builds/builds-ab.ts): every endpoint with its
// defaults on the world's busiest project, then the year-long ranges and the weekly / monthly trend.
import { ENDPOINTS, type Endpoint, type ReadArgs } from '../../src/readmodels';
import { addDays } from '../../src/lib/time';
import { queryArgs } from '../../src/serve/request/params';
import type { Db } from '../../src/store';

/** The serving default (visibility-api serve --window-days). */
const WINDOW_DAYS = 7;

/** One request: the endpoint, its args, and the data_version scopes its body is keyed by. */
export interface BuildCase { name: string; endpoint: Endpoint; args: ReadArgs; scopes: string[] }

/** The world's busiest project (by runs) and its latest run group. */
interface Busiest { id: string; company_id: string; group: string }

function busiestOf(db: Db): Busiest {
  const top = db.prepare(`SELECT p.id, p.company_id FROM projects p
    ORDER BY (SELECT count(*) FROM prompt_runs r WHERE r.project_id = p.id) DESC, p.id LIMIT 1`).get() as { id: string; company_id: string };
  const group = db.prepare('SELECT id FROM run_groups WHERE project_id = ? ORDER BY started_at DESC, id LIMIT 1').pluck().get(top.id) as string;
  return { ...top, group };
}

/** Args a request for `e` would carry on the busiest project: defaults for every query parameter. */
function argsFor(p: Busiest, e: Endpoint): { args: ReadArgs; scopes: string[] } {
  const group = p.group;
  const args: ReadArgs = {
    accountId: p.company_id, projectId: e.scope === 'account' ? '' : p.id, runGroupId: e.scope === 'run_group' ? group : '',
    windowDays: WINDOW_DAYS, ...queryArgs({}, e, WINDOW_DAYS),
  };
  return { args, scopes: e.scope === 'account' ? ['catalog'] : [`project:${p.id}`, 'engines'] };
}

/**
 * Ranged builds (a dashboard's date ranges of up to a year): the year-long range and the weekly / monthly trend a dashboard
 * asks for, on the same project. The range ends with the project's latest data day, so it holds a
 * full year of rows whatever day the world was generated. `name` is what the table shows.
 */
interface RangedCase { name: string; endpoint: string; args: (latestDay: string, engineIds: string[], dims: Dims) => Partial<ReadArgs> }
/** A value of each dimension the project's runs name (the busiest): what a dashboard's filters offer. */
interface Dims { country: string; persona: string; segmentId: string; model: string }
const yearTo = (end: string): Pick<ReadArgs, 'startDate' | 'endDate'> => ({ startDate: addDays(end, -364), endDate: end });
const RANGED_CASES: RangedCase[] = [
  { name: 'visibility, 365-day range', endpoint: 'visibility', args: yearTo },
  { name: 'segment-analytics, 365-day range', endpoint: 'segment-analytics', args: yearTo },
  { name: 'competitor-rankings, 365-day range', endpoint: 'competitor-rankings', args: yearTo },
  { name: 'citations, 365-day range', endpoint: 'citations', args: yearTo },
  { name: 'citations, 365-day range, 1 engine', endpoint: 'citations', args: (end, engines) => ({ ...yearTo(end), engineIds: engines.slice(0, 1) }) },
  { name: 'citations, 365-day range, 4 engines', endpoint: 'citations', args: (end, engines) => ({ ...yearTo(end), engineIds: engines.slice(0, 4) }) },
  { name: 'referrers, 365-day range', endpoint: 'referrers', args: yearTo },
  { name: 'warm-leads, 365-day range', endpoint: 'warm-leads', args: yearTo },
  { name: 'mentions, 365-day range', endpoint: 'mentions', args: yearTo },
  { name: 'forum-metrics, 365-day range', endpoint: 'forum-metrics', args: yearTo },
  { name: 'timeseries?interval=week', endpoint: 'timeseries', args: () => ({ interval: 'week' }) },
  { name: 'timeseries?interval=month', endpoint: 'timeseries', args: () => ({ interval: 'month' }) },
  { name: 'daily-scores?interval=week&limit=365', endpoint: 'daily-scores', args: () => ({ interval: 'week', limit: 365 }) },
];

/**
 * Slice and compare (the dimension filters, breakdowns and comparisons): a year with two filters (a dimension filter reads every day from the
 * runs), breakdowns, the comparison with the year before, and signals over a month and a year.
 */
const twoFilters = (end: string, _e: string[], d: Dims): Partial<ReadArgs> => ({ ...yearTo(end), country: [d.country], persona: [d.persona] });
const NO_DIMS: Dims = { country: '', persona: '', segmentId: '', model: '' };
const SLICE_CASES: RangedCase[] = [
  { name: 'visibility, 365 days, country + persona', endpoint: 'visibility', args: twoFilters },
  { name: 'visibility, 365 days, country + segment', endpoint: 'visibility', args: (end, _e, d) => ({ ...yearTo(end), country: [d.country], segmentIds: [d.segmentId] }) },
  { name: 'competitor-rankings, 365 days, country + persona', endpoint: 'competitor-rankings', args: twoFilters },
  { name: 'segment-analytics, 365 days, country + persona', endpoint: 'segment-analytics', args: twoFilters },
  { name: 'citations, 365 days, country + persona', endpoint: 'citations', args: twoFilters },
  { name: 'mentions, 365 days, country + persona', endpoint: 'mentions', args: twoFilters },
  { name: 'timeseries?interval=week, 365 days, country + persona', endpoint: 'timeseries', args: (end, e, d) => ({ ...twoFilters(end, e, d), interval: 'week' }) },
  { name: 'daily-scores, 365 days, country + persona', endpoint: 'daily-scores', args: twoFilters },
  { name: 'visibility, 365 days, group_by=country,month', endpoint: 'visibility', args: (end) => ({ ...yearTo(end), groupBy: ['country', 'month'] }) },
  { name: 'visibility, 365 days, group_by=engine,persona + country', endpoint: 'visibility', args: (end, _e, d) => ({ ...yearTo(end), groupBy: ['engine', 'persona'], country: [d.country] }) },
  { name: 'visibility, 182 days, compare=previous_period', endpoint: 'visibility', args: (end) => ({ startDate: addDays(end, -181), endDate: end, compare: 'previous_period' }) },
  { name: 'visibility, 182 days, compare=previous_period, country + persona', endpoint: 'visibility', args: (end, _e, d) => ({ startDate: addDays(end, -181), endDate: end, compare: 'previous_period', country: [d.country], persona: [d.persona] }) },
  { name: 'competitor-rankings, 182 days, compare=previous_period', endpoint: 'competitor-rankings', args: (end) => ({ startDate: addDays(end, -181), endDate: end, compare: 'previous_period' }) },
  { name: 'signals, 30 days vs the 30 before', endpoint: 'signals', args: (end) => ({ startDate: addDays(end, -29), endDate: end }) },
  { name: 'signals, 182 days vs the 182 before', endpoint: 'signals', args: (end) => ({ startDate: addDays(end, -181), endDate: end }) },
];

/**
 * The tiers' further requests (bench:builds --tier): ranges from a month to a year, each filter alone,
 * group_by with each key and with two, over the year (or the whole history, when shorter), and a
 * 90-day range of each shape, to set a project of 4 run groups a day beside one of 1 over the same days.
 */
const daysTo = (n: number) => (end: string): Pick<ReadArgs, 'startDate' | 'endDate'> => ({ startDate: addDays(end, -(n - 1)), endDate: end });
const TIER_CASES: RangedCase[] = [
  ...[30, 90, 182].map((n) => ({ name: `visibility, ${n}-day range`, endpoint: 'visibility', args: daysTo(n) })),
  { name: 'visibility, 365 days, engine_ids (1)', endpoint: 'visibility', args: (end, engines) => ({ ...yearTo(end), engineIds: engines.slice(0, 1) }) },
  { name: 'visibility, 365 days, segment_ids (1)', endpoint: 'visibility', args: (end, _e, d) => ({ ...yearTo(end), segmentIds: [d.segmentId] }) },
  { name: 'visibility, 365 days, country', endpoint: 'visibility', args: (end, _e, d) => ({ ...yearTo(end), country: [d.country] }) },
  { name: 'visibility, 365 days, persona', endpoint: 'visibility', args: (end, _e, d) => ({ ...yearTo(end), persona: [d.persona] }) },
  { name: 'visibility, 365 days, model', endpoint: 'visibility', args: (end, _e, d) => ({ ...yearTo(end), model: [d.model] }) },
  ...(['engine', 'prompt', 'segment', 'country', 'persona', 'model', 'week'] as const).map((k) => ({
    name: `visibility, 365 days, group_by=${k}`, endpoint: 'visibility', args: (end: string) => ({ ...yearTo(end), groupBy: [k] }),
  })),
  { name: 'visibility, 365 days, group_by=prompt,month', endpoint: 'visibility', args: (end) => ({ ...yearTo(end), groupBy: ['prompt', 'month'] }) },
  { name: 'visibility, 365 days, group_by=engine,country', endpoint: 'visibility', args: (end) => ({ ...yearTo(end), groupBy: ['engine', 'country'] }) },
  { name: 'visibility, 90 days, country + persona', endpoint: 'visibility', args: (end, _e, d) => ({ ...daysTo(90)(end), country: [d.country], persona: [d.persona] }) },
  { name: 'visibility, 90 days, group_by=engine', endpoint: 'visibility', args: (end) => ({ ...daysTo(90)(end), groupBy: ['engine'] }) },
  { name: 'visibility, 90 days, group_by=prompt,week', endpoint: 'visibility', args: (end) => ({ ...daysTo(90)(end), groupBy: ['prompt', 'week'] }) },
  { name: 'visibility, 45 days, compare=previous_period', endpoint: 'visibility', args: (end) => ({ startDate: addDays(end, -44), endDate: end, compare: 'previous_period' }) },
  { name: 'competitor-rankings, 90-day range', endpoint: 'competitor-rankings', args: daysTo(90) },
  { name: 'citations, 90-day range', endpoint: 'citations', args: daysTo(90) },
  { name: 'signals, 45 days vs the 45 before', endpoint: 'signals', args: (end) => ({ startDate: addDays(end, -44), endDate: end }) },
];

function dimsOf(db: Db, projectId: string): Dims {
  const one = (sql: string): string => db.prepare(sql).pluck().get(projectId) as string;
  return {
    country: one("SELECT country FROM prompt_runs WHERE project_id = ? AND country IS NOT NULL GROUP BY country ORDER BY count(*) DESC, country LIMIT 1"),
    persona: one("SELECT persona FROM prompt_runs WHERE project_id = ? AND persona IS NOT NULL GROUP BY persona ORDER BY count(*) DESC, persona LIMIT 1"),
    segmentId: one('SELECT id FROM segments WHERE project_id = ? ORDER BY id LIMIT 1'),
    model: one("SELECT model FROM prompt_runs WHERE project_id = ? AND model IS NOT NULL GROUP BY model ORDER BY count(*) DESC, model LIMIT 1"),
  };
}

/**
 * Every endpoint with its defaults (unless onlyRanges or onlySlices), then RANGED_CASES (or SLICE_CASES
 * alone); with `tier`, every endpoint's defaults and all the ranged, slice and tier cases.
 */
export function buildCases(db: Db, { onlyRanges, onlySlices = false, tier = false }: { onlyRanges: boolean; onlySlices?: boolean; tier?: boolean }): BuildCase[] {
  const out: BuildCase[] = [];
  // Found once: on a tier's world each lookup counts millions of runs.
  const busiest = busiestOf(db);
  if (tier || (!onlyRanges && !onlySlices)) for (const e of ENDPOINTS) out.push({ name: e.name, endpoint: e, ...argsFor(busiest, e) });
  const ranged = tier ? [...RANGED_CASES, ...SLICE_CASES, ...TIER_CASES] : onlySlices ? SLICE_CASES : RANGED_CASES;
  let dims: Dims | null = null;
  for (const c of ranged) {
    const e = ENDPOINTS.find((x) => x.name === c.endpoint)!;
    const { args, scopes } = argsFor(busiest, e);
    const latest = db.prepare('SELECT max(day) FROM agg_engine_day WHERE project_id = ?').pluck().get(args.projectId) as string;
    const engines = db.prepare('SELECT DISTINCT engine_id FROM agg_engine_day WHERE project_id = ? ORDER BY engine_id').pluck().all(args.projectId) as string[];
    out.push({ name: c.name, endpoint: e, args: { ...args, ...c.args(latest, engines, tier || onlySlices ? (dims ??= dimsOf(db, args.projectId)) : NO_DIMS) }, scopes });
  }
  return out;
}
