// The endpoints of the contract, in the contract's order (the 22 of v1, then /dimensions and
// /signals, then the project-scoped run-group paths). Each file holds one endpoint's whole logic.
import type { Endpoint } from './endpoint';
import { endpoint as projects } from './endpoints/projects';
import { endpoint as project } from './endpoints/project';
import { endpoint as visibility } from './endpoints/visibility';
import { endpoint as timeseries } from './endpoints/timeseries';
import { endpoint as dailyScores } from './endpoints/daily-scores';
import { endpoint as prompts } from './endpoints/prompts';
import { endpoint as segments } from './endpoints/segments';
import { endpoint as segmentAnalytics } from './endpoints/segment-analytics';
import { endpoint as competitors } from './endpoints/competitors';
import { endpoint as competitorRankings } from './endpoints/competitor-rankings';
import { endpoint as citations } from './endpoints/citations';
import { endpoint as mentions } from './endpoints/mentions';
import { endpoint as referrers } from './endpoints/referrers';
import { endpoint as warmLeads } from './endpoints/warm-leads';
import { endpoint as engines } from './endpoints/engines';
import { endpoint as terms } from './endpoints/terms';
import { endpoint as runs } from './endpoints/runs';
import { endpoint as runGroup, inProject as projectRunGroup } from './endpoints/run-group';
import { endpoint as runResults, inProject as projectRunResults } from './endpoints/run-results';
import { endpoint as forumMetrics } from './endpoints/forum-metrics';
import { endpoint as forumLeads } from './endpoints/forum-leads';
import { endpoint as forumOpportunities } from './endpoints/forum-opportunities';
import { endpoint as dimensions } from './endpoints/dimensions';
import { endpoint as signals } from './endpoints/signals';

export const ENDPOINTS: readonly Endpoint[] = [
  projects, project, visibility, timeseries, dailyScores, prompts, segments, segmentAnalytics, competitors,
  competitorRankings, citations, mentions, referrers, warmLeads, engines, terms, runs, runGroup, runResults,
  forumMetrics, forumLeads, forumOpportunities, dimensions, signals, projectRunGroup, projectRunResults,
];

export type { Endpoint, Scope } from './endpoint';
export type { QueryArgs, QueryParamName } from './params.gen';
export type { ReadArgs } from './args';
export { PageSnapshots } from './paging';
export { ReadStore, accountForKeyHash, projectVisible, runGroupProject } from './store';
