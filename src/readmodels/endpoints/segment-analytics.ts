import type { SegmentAnalytics, SegmentAnalyticsItem } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  activeSegments, averageRank, mentionRate, mentionRateCi, score, segmentPrompts, sentiment, shareCi, shareOfVoice, sumAll, type MentionSums,
  type ReadStore,
} from '../store';
import { NO_PROMPT_SUMS, promptSums, sumBy } from '../sums';
import { changes, comparisonOf, withChanges, type RateCounts } from '../comparison';
import { currentSlice, type Slice } from '../windows';

export const endpoint: Endpoint = {
  name: 'segment-analytics',
  path: '/projects/:project_id/segments/analytics',
  summary: 'Visibility per active segment over the current window (a run belongs to the segments of its prompt)',
  scope: 'project',
  params: ['engine_ids', 'start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids', 'compare', 'compare_start_date', 'compare_end_date'],
  schema: 'segment-analytics',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): SegmentAnalytics {
    const slice = currentSlice(store, args);
    const segments = activeSegments(store, args.projectId);
    const members = promptsPerSegment(segmentPrompts(store, args.projectId));
    const now = measure(store, slice, segments, members);
    const items = now.map((m) => item(m.segment, m.promptCount, m.brand, m.competitorMentions));
    const comparison = comparisonOf(store, args, slice);
    if (comparison === null) return items;
    // Segments matched by id (the same active segments and members: the setup is today's for both periods).
    const counts = (ms: Measured[]): Map<string, RateCounts> => new Map(ms.map((m) => [m.segment.id, {
      mention_rate: [m.brand.mentioned, m.brand.runs], share_of_voice: [m.brand.mentioned, m.brand.mentioned + m.competitorMentions],
    }]));
    const [c1, c2] = [counts(now), counts(measure(store, comparison.slice, segments, members))];
    return items.map((i) => ({ ...withChanges(i, changes(c1.get(i.segment_id)!, c2.get(i.segment_id))), comparison: comparison.period }));
  },
};

/** A segment's sums over a slice: the brand's, and for each tracked competitor the runs mentioning it, summed. */
interface Measured {
  segment: { id: string; name: string };
  promptCount: number;
  brand: MentionSums;
  competitorMentions: number;
}

function measure(store: ReadStore, slice: Slice | null, segments: Array<{ id: string; name: string }>, members: Map<string, string[]>): Measured[] {
  const sums = slice ? promptSums(store, slice) : NO_PROMPT_SUMS;
  const brandPerPrompt = sumBy(sums.brand, (r) => r.prompt_id);
  const competitorsPerPrompt = sumBy(sums.competitors, (r) => r.prompt_id);
  return segments.map((segment) => {
    // Only the segment's prompts with counted runs in the window take part.
    const prompts = (members.get(segment.id) ?? []).filter((p) => brandPerPrompt.has(p));
    const brand = sumAll(prompts.map((p) => brandPerPrompt.get(p)!));
    const competitorMentions = sumAll(prompts.flatMap((p) => competitorsPerPrompt.get(p) ?? [])).mentioned;
    return { segment, promptCount: prompts.length, brand, competitorMentions };
  });
}

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
