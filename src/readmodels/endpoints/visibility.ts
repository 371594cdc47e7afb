import type { EngineBreakdown, PromptBreakdown, TopCompetitor, VisibilityReport } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  averageRank, compareStrings, mentionRate, mentionRateCi, score, sentiment, shareCi, shareOfVoice, sumAll, trackedCompetitors, zeroSums, type MentionSums,
} from '../store';
import {
  brandSumsByEnginePrompt, competitorSumsByPrompt, overRuns, shareOf, sumBy, type CompetitorPromptSums, type EnginePromptSums,
} from '../sums';
import { currentSlice } from '../windows';
import { visibilityGroups } from '../groups';

const TOP_COMPETITORS = 10;

export const endpoint: Endpoint = {
  name: 'visibility',
  path: '/projects/:project_id/visibility',
  summary: 'Current visibility report: the brand over the current window, per prompt, per engine, and its top competitors',
  scope: 'project',
  params: ['engine_ids', 'start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids', 'group_by'],
  schema: 'visibility',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): VisibilityReport {
    const slice = currentSlice(store, args);
    const rows = slice ? brandSumsByEnginePrompt(store, slice) : [];
    const competitorRows = slice ? competitorSumsByPrompt(store, slice) : [];
    const brand = sumAll(rows);
    const competitorMentions = sumAll(competitorRows).mentioned;
    return {
      project_id: args.projectId,
      window_start: slice?.start ?? null,
      window_end: slice?.end ?? null,
      current_score: score(brand),
      mention_rate: mentionRate(brand),
      mention_rate_ci: mentionRateCi(brand),
      average_rank: averageRank(brand),
      sentiment: sentiment(brand),
      share_of_voice: shareOfVoice(brand.mentioned, competitorMentions),
      share_of_voice_ci: shareCi(brand.mentioned, brand.mentioned + competitorMentions),
      // agg rows exist only for buckets with succeeded runs, so each row's prompt had counted runs.
      prompt_count: new Set(rows.map((r) => r.prompt_id)).size,
      run_count: brand.runs,
      top_competitors: topCompetitors(trackedCompetitors(store, args.projectId), competitorRows, brand),
      prompt_breakdown: groups(rows, (r) => r.prompt_id, (r) => r.prompt_text)
        .map((g): PromptBreakdown => ({ prompt_id: g.id, text: g.label, ...entryMetrics(g.sums) })),
      engine_breakdown: groups(rows, (r) => r.engine_id, (r) => r.engine_name)
        .map((g): EngineBreakdown => ({ engine_id: g.id, name: g.label, ...entryMetrics(g.sums) })),
      // Only with group_by: a v1 request's body keeps its bytes.
      ...(args.groupBy ? { groups: slice ? visibilityGroups(store, slice, args.groupBy) : [] } : {}),
    };
  },
};

interface Group {
  id: string;
  label: string;
  sums: MentionSums;
}

/** Sums rows per id; groups ordered by label (prompt text, engine name), then id. */
function groups(rows: EnginePromptSums[], idOf: (r: EnginePromptSums) => string, labelOf: (r: EnginePromptSums) => string): Group[] {
  const labels = new Map(rows.map((r) => [idOf(r), labelOf(r)]));
  return [...sumBy(rows, idOf)]
    .map(([id, sums]) => ({ id, label: labels.get(id)!, sums }))
    .sort((a, b) => compareStrings(a.label, b.label) || compareStrings(a.id, b.id));
}

/** A breakdown entry always has counted runs, so its score is a number (never the "no runs" null). */
function entryMetrics(s: MentionSums): Omit<PromptBreakdown, 'prompt_id' | 'text'> {
  return {
    run_count: s.runs, mention_rate: mentionRate(s), mention_rate_ci: mentionRateCi(s), average_rank: averageRank(s), sentiment: sentiment(s),
    score: score(s) ?? 0,
  };
}

/**
 * Every tracked competitor (zeros included), measured against the brand's runs: mention_rate is the
 * share of the window's runs that mention it. Top 10 by mention_rate, then name, then id.
 */
function topCompetitors(tracked: Array<{ id: string; name: string }>, rows: CompetitorPromptSums[], brand: MentionSums): TopCompetitor[] {
  const byCompetitor = sumBy(rows, (r) => r.competitor_id);
  const allMentions = brand.mentioned + sumAll(rows).mentioned;
  return tracked
    .map((c): TopCompetitor => {
      const s = overRuns(byCompetitor.get(c.id) ?? zeroSums(), brand.runs);
      return {
        competitor_id: c.id, name: c.name, mention_rate: mentionRate(s), mention_rate_ci: mentionRateCi(s), average_rank: averageRank(s),
        share_of_voice: shareOf(s.mentioned, allMentions), share_of_voice_ci: shareCi(s.mentioned, allMentions),
      };
    })
    .sort((a, b) => b.mention_rate - a.mention_rate || compareStrings(a.name, b.name) || compareStrings(a.competitor_id, b.competitor_id))
    .slice(0, TOP_COMPETITORS);
}
