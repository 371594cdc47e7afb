// The 22 endpoints of the contract, in the contract's order. Each file holds one endpoint's whole logic.
import type { Endpoint } from './endpoint';
import { endpoint as projects } from './projects';
import { endpoint as project } from './project';
import { endpoint as visibility } from './visibility';
import { endpoint as timeseries } from './timeseries';
import { endpoint as dailyScores } from './daily-scores';
import { endpoint as prompts } from './prompts';
import { endpoint as segments } from './segments';
import { endpoint as segmentAnalytics } from './segment-analytics';
import { endpoint as competitors } from './competitors';
import { endpoint as competitorRankings } from './competitor-rankings';
import { endpoint as citations } from './citations';
import { endpoint as mentions } from './mentions';
import { endpoint as referrers } from './referrers';
import { endpoint as warmLeads } from './warm-leads';
import { endpoint as engines } from './engines';
import { endpoint as terms } from './terms';
import { endpoint as runs } from './runs';
import { endpoint as runGroup } from './run-group';
import { endpoint as runResults } from './run-results';
import { endpoint as forumMetrics } from './forum-metrics';
import { endpoint as forumLeads } from './forum-leads';
import { endpoint as forumOpportunities } from './forum-opportunities';

export const ENDPOINTS: readonly Endpoint[] = [
  projects, project, visibility, timeseries, dailyScores, prompts, segments, segmentAnalytics, competitors,
  competitorRankings, citations, mentions, referrers, warmLeads, engines, terms, runs, runGroup, runResults,
  forumMetrics, forumLeads, forumOpportunities,
];

export type { Endpoint, QuerySpec, Scope } from './endpoint';
export type { ReadArgs } from './args';
export { ReadStore } from './store';
export { accountForKeyHash, projectVisible, runGroupProject } from './access';
