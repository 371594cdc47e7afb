import type { ComparisonPeriod, EngineBreakdown, PromptBreakdown, TopCompetitor, VisibilityReport } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import {
  averageRank, compareStrings, mentionRate, mentionRateCi, score, sentiment, shareCi, shareOfVoice, sumAll, trackedCompetitors, zeroSums, type MentionSums,
  type ReadStore,
} from '../store';
import {
  NO_PROMPT_SUMS, overRuns, promptSums, shareOf, sumBy, type CompetitorPromptSums, type EnginePromptSums,
} from '../sums';
import { changes, comparisonOf, withChanges, type RateCounts } from '../comparison';
import { currentSlice, type Slice } from '../windows';
import { visibilityGroups } from '../groups';

const TOP_COMPETITORS = 10;

export const endpoint: Endpoint = {
  name: 'visibility',
  path: '/projects/:project_id/visibility',
  summary: 'Current visibility report: the brand over the current window, per prompt, per engine, and its top competitors',
  scope: 'project',
  params: ['engine_ids', 'start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids', 'group_by', 'compare', 'compare_start_date', 'compare_end_date'],
  schema: 'visibility',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): VisibilityReport {
    const slice = currentSlice(store, args);
    const tracked = trackedCompetitors(store, args.projectId);
    const now = measure(store, slice);
    const body = report(args.projectId, slice, tracked, now);
    // Only with group_by: a v1 request's body keeps its bytes.
    if (args.groupBy) body.groups = slice ? visibilityGroups(store, slice, args.groupBy, now.rows) : [];
    const comparison = comparisonOf(store, args, slice);
    return comparison === null ? body : compared(body, comparison.period, rateCounts(now), rateCounts(measure(store, comparison.slice)));
  },
};

/** What the report reads of a slice: the brand's and the competitors' sums per prompt (and engine). */
interface Measured {
  rows: EnginePromptSums[];
  competitorRows: CompetitorPromptSums[];
  brand: MentionSums;
  /** For each tracked competitor the runs mentioning it, summed. */
  competitorMentions: number;
  /** Runs mentioning the brand + competitorMentions: the share-of-voice n. */
  allMentions: number;
}

function measure(store: ReadStore, slice: Slice | null): Measured {
  const { brand: rows, competitors: competitorRows } = slice ? promptSums(store, slice) : NO_PROMPT_SUMS;
  const brand = sumAll(rows);
  const competitorMentions = sumAll(competitorRows).mentioned;
  return { rows, competitorRows, brand, competitorMentions, allMentions: brand.mentioned + competitorMentions };
}

function report(projectId: string, slice: Slice | null, tracked: Array<{ id: string; name: string }>, m: Measured): VisibilityReport {
  const { rows, brand } = m;
  return {
    project_id: projectId,
    window_start: slice?.start ?? null,
    window_end: slice?.end ?? null,
    current_score: score(brand),
    mention_rate: mentionRate(brand),
    mention_rate_ci: mentionRateCi(brand),
    average_rank: averageRank(brand),
    sentiment: sentiment(brand),
    share_of_voice: shareOfVoice(brand.mentioned, m.competitorMentions),
    share_of_voice_ci: shareCi(brand.mentioned, m.allMentions),
    // agg rows exist only for buckets with succeeded runs, so each row's prompt had counted runs.
    prompt_count: new Set(rows.map((r) => r.prompt_id)).size,
    run_count: brand.runs,
    top_competitors: topCompetitors(tracked, m),
    prompt_breakdown: groups(rows, (r) => r.prompt_id, (r) => r.prompt_text)
      .map((g): PromptBreakdown => ({ prompt_id: g.id, text: g.label, ...entryMetrics(g.sums) })),
    engine_breakdown: groups(rows, (r) => r.engine_id, (r) => r.engine_name)
      .map((g): EngineBreakdown => ({ engine_id: g.id, name: g.label, ...entryMetrics(g.sums) })),
  };
}

/** The counts behind every rate of the report: the whole, and each competitor, prompt and engine by id. */
interface ReportCounts {
  whole: RateCounts;
  competitors: Map<string, RateCounts>;
  prompts: Map<string, RateCounts>;
  engines: Map<string, RateCounts>;
}

function rateCounts(m: Measured): ReportCounts {
  const { brand, allMentions } = m;
  const mentionRateOf = (s: MentionSums): RateCounts => ({ mention_rate: [s.mentioned, s.runs] });
  return {
    whole: { mention_rate: [brand.mentioned, brand.runs], share_of_voice: [brand.mentioned, allMentions] },
    // A competitor is measured against the brand's runs (topCompetitors).
    competitors: new Map([...sumBy(m.competitorRows, (r) => r.competitor_id)]
      .map(([id, s]) => [id, { mention_rate: [s.mentioned, brand.runs], share_of_voice: [s.mentioned, allMentions] }])),
    prompts: new Map([...sumBy(m.rows, (r) => r.prompt_id)].map(([id, s]) => [id, mentionRateOf(s)])),
    engines: new Map([...sumBy(m.rows, (r) => r.engine_id)].map(([id, s]) => [id, mentionRateOf(s)])),
  };
}

/** A tracked competitor not mentioned in a slice still has its runs: the brand's. */
function competitorCounts(c: ReportCounts, id: string): RateCounts {
  return c.competitors.get(id) ?? { mention_rate: [0, c.whole.mention_rate![1]], share_of_voice: [0, c.whole.share_of_voice![1]] };
}

/** The report with the comparison period and each rate's change, rows matched by id. */
function compared(body: VisibilityReport, period: ComparisonPeriod | null, now: ReportCounts, before: ReportCounts): VisibilityReport {
  // `comparison` right after the window it is compared with; the rest in the order of a body without one.
  const { project_id, window_start, window_end, ...rest } = body;
  const head = withChanges({ project_id, window_start, window_end, comparison: period, ...rest }, changes(now.whole, before.whole));
  return {
    ...head,
    top_competitors: body.top_competitors.map((c) => withChanges(c, changes(competitorCounts(now, c.competitor_id), competitorCounts(before, c.competitor_id)))),
    prompt_breakdown: body.prompt_breakdown.map((p) => withChanges(p, changes(now.prompts.get(p.prompt_id)!, before.prompts.get(p.prompt_id)))),
    engine_breakdown: body.engine_breakdown.map((e) => withChanges(e, changes(now.engines.get(e.engine_id)!, before.engines.get(e.engine_id)))),
  };
}

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
function topCompetitors(tracked: Array<{ id: string; name: string }>, { competitorRows, brand, allMentions }: Measured): TopCompetitor[] {
  const byCompetitor = sumBy(competitorRows, (r) => r.competitor_id);
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
