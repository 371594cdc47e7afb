// The requests the build benches time (bench/builds.ts, bench/builds-ab.ts): every endpoint with its
// defaults on the world's busiest project, then the year-long ranges and the weekly / monthly trend.
import { ENDPOINTS, type Endpoint, type ReadArgs } from '../src/readmodels';
import { addDays } from '../src/lib/time';
import { queryArgs } from '../src/serve/params';
import type { Db } from '../src/store';

/** The serving default (visibility-api serve --window-days). */
const WINDOW_DAYS = 7;

/** One request: the endpoint, its args, and the data_version scopes its body is keyed by. */
export interface BuildCase { name: string; endpoint: Endpoint; args: ReadArgs; scopes: string[] }

/** Args a request for `e` would carry on the world's busiest project: defaults for every query parameter. */
function argsFor(db: Db, e: Endpoint): { args: ReadArgs; scopes: string[] } {
  const p = db.prepare(`SELECT p.id, p.company_id FROM projects p
    ORDER BY (SELECT count(*) FROM prompt_runs r WHERE r.project_id = p.id) DESC, p.id LIMIT 1`).get() as { id: string; company_id: string };
  const group = db.prepare('SELECT id FROM run_groups WHERE project_id = ? ORDER BY started_at DESC, id LIMIT 1').pluck().get(p.id) as string;
  const args: ReadArgs = {
    accountId: p.company_id, projectId: e.scope === 'account' ? '' : p.id, runGroupId: e.scope === 'run_group' ? group : '',
    windowDays: WINDOW_DAYS, ...queryArgs({}, e, WINDOW_DAYS),
  };
  return { args, scopes: e.scope === 'account' ? ['catalog'] : [`project:${p.id}`, 'engines'] };
}

/**
 * Ranged builds (issue 15, point 1): the year-long range and the weekly / monthly trend a dashboard
 * asks for, on the same project. The range ends with the project's latest data day, so it holds a
 * full year of rows whatever day the world was generated. `name` is what the table shows.
 */
interface RangedCase { name: string; endpoint: string; args: (latestDay: string, engineIds: string[]) => Partial<ReadArgs> }
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

/** Every endpoint with its defaults (unless onlyRanges), then RANGED_CASES. */
export function buildCases(db: Db, { onlyRanges }: { onlyRanges: boolean }): BuildCase[] {
  const out: BuildCase[] = [];
  if (!onlyRanges) for (const e of ENDPOINTS) out.push({ name: e.name, endpoint: e, ...argsFor(db, e) });
  for (const c of RANGED_CASES) {
    const e = ENDPOINTS.find((x) => x.name === c.endpoint)!;
    const { args, scopes } = argsFor(db, e);
    const latest = db.prepare('SELECT max(day) FROM agg_engine_day WHERE project_id = ?').pluck().get(args.projectId) as string;
    const engines = db.prepare('SELECT DISTINCT engine_id FROM agg_engine_day WHERE project_id = ? ORDER BY engine_id').pluck().all(args.projectId) as string[];
    out.push({ name: c.name, endpoint: e, args: { ...args, ...c.args(latest, engines) }, scopes });
  }
  return out;
}
