import type { CompetitorRanking, CompetitorRankings } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  averageRank, compareStrings, mentionRate, mentionRateCi, projectName, score, sentiment, shareCi, sumAll, trackedCompetitors, zeroSums, type MentionSums,
  type ReadStore,
} from '../store';
import { NO_PROMPT_SUMS, overRuns, promptSums, shareOf, sumBy } from '../sums';
import { changes, comparisonOf, withChanges, type RateCounts } from '../comparison';
import { currentSlice, type Slice } from '../windows';

type Unranked = Omit<CompetitorRanking, 'rank'>;

export const endpoint: Endpoint = {
  name: 'competitor-rankings',
  path: '/projects/:project_id/competitor-rankings',
  summary: 'The brand and every tracked competitor over the current window, ranked by visibility score',
  scope: 'project',
  params: ['engine_ids', 'start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids', 'compare', 'compare_start_date', 'compare_end_date'],
  schema: 'competitor-rankings',
  dependsOn: ['runs', 'setup', 'engines', 'project'],
  build(store, args): CompetitorRankings {
    const slice = currentSlice(store, args);
    // The brand is the project itself: it is listed under the project's name.
    const entities: Entity[] = [{ type: 'brand', id: null, name: projectName(store, args.projectId) ?? '' },
      ...trackedCompetitors(store, args.projectId).map((c): Entity => ({ type: 'competitor', id: c.id, name: c.name }))];
    const now = measure(store, slice, entities);
    const ranked = now.map((m) => entry(m.entity.type, m.entity.id, m.entity.name, m.sums, m.allMentions)).sort(byScoreThenName).map((e, i) => ({ rank: i + 1, ...e }));
    const comparison = comparisonOf(store, args, slice);
    if (comparison === null) return ranked;
    // Rows matched by entity: the brand by its type, a competitor by its id.
    const key = (id: string | null): string => id ?? 'brand';
    const counts = (ms: Measured[]): Map<string, RateCounts> => new Map(ms.map((m) => [key(m.entity.id), {
      mention_rate: [m.sums.mentioned, m.sums.runs], share_of_voice: [m.sums.mentioned, m.allMentions],
    }]));
    const [c1, c2] = [counts(now), counts(measure(store, comparison.slice, entities))];
    return ranked.map((r) => ({ ...withChanges(r, changes(c1.get(key(r.competitor_id))!, c2.get(key(r.competitor_id)))), comparison: comparison.period }));
  },
};

interface Entity {
  type: 'brand' | 'competitor';
  id: string | null;
  name: string;
}

/** An entity's sums over a slice, and every entity's mentions summed (the share-of-voice n). */
interface Measured {
  entity: Entity;
  sums: MentionSums;
  allMentions: number;
}

function measure(store: ReadStore, slice: Slice | null, entities: Entity[]): Measured[] {
  const { brand: brandRows, competitors: competitorRows } = slice ? promptSums(store, slice) : NO_PROMPT_SUMS;
  const brand = sumAll(brandRows);
  const byCompetitor = sumBy(competitorRows, (r) => r.competitor_id);
  // Share of voice: each entity's mentioning runs over the brand's plus every tracked competitor's.
  const allMentions = brand.mentioned + sumAll(competitorRows).mentioned;
  return entities.map((e) => ({
    entity: e,
    // A competitor is measured against the same runs as the brand.
    sums: e.id === null ? brand : overRuns(byCompetitor.get(e.id) ?? zeroSums(), brand.runs),
    allMentions,
  }));
}

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
