import type { SegmentAnalytics, SegmentAnalyticsItem } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  activeSegments, averageRank, mentionRate, mentionRateCi, score, segmentPrompts, sentiment, shareCi, shareOfVoice, sumAll, type MentionSums,
} from '../store';
import { brandSumsByEnginePrompt, competitorSumsByPrompt, sumBy } from '../sums';
import { currentSlice } from '../windows';

export const endpoint: Endpoint = {
  name: 'segment-analytics',
  path: '/projects/:project_id/segments/analytics',
  summary: 'Visibility per active segment over the current window (a run belongs to the segments of its prompt)',
  scope: 'project',
  params: ['engine_ids', 'start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids'],
  schema: 'segment-analytics',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): SegmentAnalytics {
    const slice = currentSlice(store, args);
    const brandPerPrompt = sumBy(slice ? brandSumsByEnginePrompt(store, slice) : [], (r) => r.prompt_id);
    const competitorsPerPrompt = sumBy(slice ? competitorSumsByPrompt(store, slice) : [], (r) => r.prompt_id);
    const members = promptsPerSegment(segmentPrompts(store, args.projectId));
    return activeSegments(store, args.projectId).map((seg) => {
      // Only the segment's prompts with counted runs in the window take part.
      const prompts = (members.get(seg.id) ?? []).filter((p) => brandPerPrompt.has(p));
      const brand = sumAll(prompts.map((p) => brandPerPrompt.get(p)!));
      const competitorMentions = sumAll(prompts.flatMap((p) => competitorsPerPrompt.get(p) ?? [])).mentioned;
      return item(seg, prompts.length, brand, competitorMentions);
    });
  },
};

function promptsPerSegment(rows: Array<{ segment_id: string; prompt_id: string }>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.segment_id);
    if (list) list.push(r.prompt_id);
    else out.set(r.segment_id, [r.prompt_id]);
  }
  return out;
}

function item(seg: { id: string; name: string }, promptCount: number, s: MentionSums, competitorMentions: number): SegmentAnalyticsItem {
  return {
    segment_id: seg.id,
    name: seg.name,
    prompt_count: promptCount,
    run_count: s.runs,
    mention_rate: mentionRate(s),
    mention_rate_ci: mentionRateCi(s),
    average_rank: averageRank(s),
    sentiment: sentiment(s),
    score: score(s),
    share_of_voice: shareOfVoice(s.mentioned, competitorMentions),
    share_of_voice_ci: shareCi(s.mentioned, s.mentioned + competitorMentions),
  };
}
