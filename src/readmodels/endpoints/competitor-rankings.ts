import type { CompetitorRanking, CompetitorRankings } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  averageRank, compareStrings, mentionRate, mentionRateCi, projectName, score, sentiment, shareCi, sumAll, trackedCompetitors, zeroSums, type MentionSums,
} from '../store';
import { brandSumsByEnginePrompt, competitorSumsByPrompt, overRuns, shareOf, sumBy } from '../sums';
import { currentSlice } from '../windows';

type Unranked = Omit<CompetitorRanking, 'rank'>;

export const endpoint: Endpoint = {
  name: 'competitor-rankings',
  path: '/projects/:project_id/competitor-rankings',
  summary: 'The brand and every tracked competitor over the current window, ranked by visibility score',
  scope: 'project',
  params: ['engine_ids', 'start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids'],
  schema: 'competitor-rankings',
  dependsOn: ['runs', 'setup', 'engines', 'project'],
  build(store, args): CompetitorRankings {
    const slice = currentSlice(store, args);
    const brand = sumAll(slice ? brandSumsByEnginePrompt(store, slice) : []);
    const competitorRows = slice ? competitorSumsByPrompt(store, slice) : [];
    const byCompetitor = sumBy(competitorRows, (r) => r.competitor_id);
    // Share of voice: each entity's mentioning runs over the brand's plus every tracked competitor's.
    const allMentions = brand.mentioned + sumAll(competitorRows).mentioned;
    const entries: Unranked[] = [
      // The brand is the project itself: it is listed under the project's name.
      entry('brand', null, projectName(store, args.projectId) ?? '', brand, allMentions),
      ...trackedCompetitors(store, args.projectId).map((c) =>
        // A competitor is measured against the same runs as the brand.
        entry('competitor', c.id, c.name, overRuns(byCompetitor.get(c.id) ?? zeroSums(), brand.runs), allMentions)),
    ];
    return entries.sort(byScoreThenName).map((e, i) => ({ rank: i + 1, ...e }));
  },
};

function entry(type: 'brand' | 'competitor', competitorId: string | null, name: string, s: MentionSums, allMentions: number): Unranked {
  return {
    entity_type: type,
    competitor_id: competitorId,
    name,
    mention_count: s.mentioned,
    mention_rate: mentionRate(s),
    mention_rate_ci: mentionRateCi(s),
    average_rank: averageRank(s),
    sentiment: sentiment(s),
    share_of_voice: shareOf(s.mentioned, allMentions),
    share_of_voice_ci: shareCi(s.mentioned, allMentions),
    score: score(s),
  };
}

/** Score desc with null (no runs) last, then name, then competitor id (the brand's sorts as ''). */
function byScoreThenName(a: Unranked, b: Unranked): number {
  if (a.score !== b.score) {
    if (a.score === null) return 1;
    if (b.score === null) return -1;
    return b.score - a.score;
  }
  return compareStrings(a.name, b.name) || compareStrings(a.competitor_id ?? '', b.competitor_id ?? '');
}
