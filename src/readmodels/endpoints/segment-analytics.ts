import type { SegmentAnalytics, SegmentAnalyticsItem } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  averageRank, brandSumsByEnginePrompt, competitorSumsByPrompt, currentSlice, mentionRate, mentionRateCi, score, sentiment, shareCi,
  shareOfVoice, sumAll, sumBy, type MentionSums,
} from '../formulas';

const ACTIVE_SEGMENTS = `SELECT id, name FROM segments
  WHERE project_id = ? AND active = 1 AND deleted = 0
  ORDER BY name, id`;

/**
 * Which prompts belong to which segment: the prompt's own segment_ids array is the source of truth
 * (read with json_each, as the segments endpoint does); DISTINCT guards against an id listed twice.
 */
const SEGMENT_PROMPTS = `SELECT DISTINCT j.value AS segment_id, p.id AS prompt_id
  FROM prompts p, json_each(p.segment_ids) j
  WHERE p.project_id = ? AND p.deleted = 0
  ORDER BY segment_id, prompt_id`;

export const endpoint: Endpoint = {
  name: 'segment-analytics',
  path: '/projects/:project_id/segments/analytics',
  summary: 'Visibility per active segment over the current window (a run belongs to the segments of its prompt)',
  scope: 'project',
  params: ['engine_ids', 'start_date', 'end_date'],
  schema: 'segment-analytics',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): SegmentAnalytics {
    const slice = currentSlice(store, args);
    const brandPerPrompt = sumBy(slice ? brandSumsByEnginePrompt(store, slice) : [], (r) => r.prompt_id);
    const competitorsPerPrompt = sumBy(slice ? competitorSumsByPrompt(store, slice) : [], (r) => r.prompt_id);
    const members = promptsPerSegment(store.all(SEGMENT_PROMPTS, args.projectId));
    return store.all<{ id: string; name: string }>(ACTIVE_SEGMENTS, args.projectId).map((seg) => {
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
