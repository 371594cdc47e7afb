// GET /v1/public/methodology: what every number means, as data a program can read.
// The prose is docs/metrics.md; the code is src/store/metrics.ts and sums.ts. This file restates them, it defines nothing:
// change a definition there, then here, and bump METRIC_DEFINITIONS_VERSION.
import type { Methodology, Ordering, OrderKey } from './bodies.gen';
import { RR_SCALE, SENTIMENT_SCALE, Z95 } from './store';
import { ENDPOINTS } from './index';
import { FALSE_DISCOVERY_RATE } from './differences';
import { MIN_RUNS } from './endpoints/signals';

/**
 * The version of the metric definitions: the UTC day they last changed meaning (YYYY-MM-DD). Sent as
 * the Metric-Definitions-Version header on every API response, so a client that stored numbers can
 * tell when their meaning changed. A date, not semver: definitions do not have compatible and
 * incompatible changes, only "the same meaning" and "a different one". Bump it when anything in the
 * document below changes except wording.
 */
export const METRIC_DEFINITIONS_VERSION = '2026-11-28';

/** The window the service is configured with by default (serve --window-days). */
export const DEFAULT_WINDOW_DAYS = 7;

/**
 * How far behind the newest committed data a cached body may be served by default, in ms
 * (serve --max-staleness, MAX_STALENESS; src/serve/bodies/cache.ts).
 */
export const DEFAULT_MAX_STALENESS_MS = 1000;

const asc = (field: string): OrderKey => ({ field, direction: 'asc' });
const desc = (field: string): OrderKey => ({ field, direction: 'desc' });

/** Every list of every endpoint, in the order its items come back (a total order: the same data gives the same bytes). */
const ORDERINGS: Ordering[] = [
  { endpoint: 'projects', list: '$', order: [asc('name'), asc('id')] },
  { endpoint: 'prompts', list: '$', order: [asc('text'), asc('id')] },
  { endpoint: 'segments', list: '$', order: [asc('name'), asc('id')] },
  { endpoint: 'competitors', list: '$', order: [asc('name'), asc('id')] },
  { endpoint: 'terms', list: '$', order: [asc('value'), asc('id')] },
  { endpoint: 'engines', list: '$', order: [asc('name'), asc('id')] },
  { endpoint: 'visibility', list: 'prompt_breakdown', order: [asc('text'), asc('prompt_id')] },
  { endpoint: 'visibility', list: 'engine_breakdown', order: [asc('name'), asc('engine_id')] },
  {
    endpoint: 'visibility', list: 'top_competitors', order: [desc('mention_rate'), asc('name'), asc('competitor_id')],
    note: 'every tracked competitor, never-mentioned ones included, at most 10',
  },
  { endpoint: 'timeseries', list: '$', order: [asc('date')], note: 'one point per day with counted runs; days without are left out' },
  { endpoint: 'timeseries', list: '$[].engines', order: [asc('engine name'), asc('engine_id')], note: 'the engine\'s name as /engines lists it (not a field of the item)' },
  { endpoint: 'daily-scores', list: '$', order: [desc('date')], note: 'one row per day with counted runs, at most limit rows' },
  { endpoint: 'segment-analytics', list: '$', order: [asc('name'), asc('segment_id')] },
  {
    endpoint: 'competitor-rankings', list: '$', order: [{ field: 'score', direction: 'desc', nulls: 'last' }, asc('name'), asc('competitor_id')],
    note: 'rank is the 1-based place in this order; the brand (competitor_id null) sorts before a competitor of the same name',
  },
  { endpoint: 'citations', list: '$', order: [desc('citation_count'), asc('url')] },
  { endpoint: 'referrers', list: '$', order: [desc('citation_count'), asc('domain')] },
  { endpoint: 'warm-leads', list: '$', order: [desc('citation_count'), asc('url')] },
  {
    endpoint: 'mentions', list: '$', order: [desc('observed_at'), asc('prompt_run_id')],
    note: 'then in the order the answer names them; a feed, not limited to the window',
  },
  { endpoint: 'forum-opportunities', list: '$', order: [desc('discovered_at'), asc('id')] },
  { endpoint: 'forum-leads', list: '$', order: [desc('relevance'), desc('discovered_at'), asc('id')] },
  { endpoint: 'forum-metrics', list: 'by_platform', order: [asc('platform')] },
  { endpoint: 'runs', list: '$', order: [desc('started_at'), asc('id')] },
  { endpoint: 'run-group', list: 'prompt_runs', order: [asc('completed_at'), asc('id')] },
  { endpoint: 'run-results', list: '$', order: [asc('completed_at'), asc('id')] },
];

/** The endpoints whose numbers cover the current window. */
const WINDOWED = ['visibility', 'segment-analytics', 'competitor-rankings', 'citations', 'referrers', 'warm-leads'];

/** The Wilson bounds as docs/metrics.md writes them, for k successes of n trials. */
const WILSON = 'p = k/n; centre = (p + z^2/(2n)) / (1 + z^2/n); half = z/(1 + z^2/n) * sqrt(p(1-p)/n + z^2/(4n^2)); low = centre - half; high = centre + half';

/** Newcombe's hybrid score interval of p1 - p2 as docs/metrics.md writes it, on the Wilson intervals [l1, u1] of p1 and [l2, u2] of p2. */
const NEWCOMBE = 'delta = p1 - p2 (p1 = k1/n1 the current period, p2 = k2/n2 the comparison period); [l1, u1], [l2, u2] their Wilson intervals (z as in intervals); low = delta - sqrt((p1 - l1)^2 + (u2 - p2)^2); high = delta + sqrt((u1 - p1)^2 + (p2 - l2)^2)';

/** The document; windowDays is the service's configured current window (7 unless serve --window-days says otherwise). */
export function methodology(windowDays: number = DEFAULT_WINDOW_DAYS, maxStalenessMs: number = DEFAULT_MAX_STALENESS_MS): Methodology {
  return {
    version: METRIC_DEFINITIONS_VERSION,
    header: 'Metric-Definitions-Version',
    documentation: 'docs/metrics.md',
    days: 'UTC calendar days, written YYYY-MM-DD; day ranges include both ends',
    run: {
      definition: 'One prompt asked of one AI engine once, with its answer analysed.',
      counted_when: [
        'it succeeded (failed runs never count, not even in run_count)',
        'its prompt exists in the run\'s project and is not deleted (deleting a prompt removes its past runs from every metric; a run that arrives before its prompt counts once the prompt arrives)',
        'its engine is known to the service',
      ],
    },
    mention: {
      definition: 'The analyser names the brand or a competitor in a run\'s answer, at a position (1 = named first) and, when it could tell, with a sentiment from -1 to 1.',
      per_run: 'An entity counts at most once per run, at its best (lowest) position, with the sentiment of that mention.',
      competitors: 'Only competitors the project tracks now count; mentions of deleted or untracked competitors are ignored in every figure (the /mentions feed still lists them).',
    },
    windows: [
      {
        name: 'current', days: windowDays, inclusive: true, timezone: 'UTC',
        definition: `The ${windowDays} UTC days ending with the day of the project's latest succeeded run (days D-${windowDays - 1} to D). It follows the data, not the clock; an engine filter never moves it. window_start and window_end are null when the project has no succeeded runs.`,
        endpoints: WINDOWED,
      },
      {
        name: 'trend', days: 365, inclusive: true, timezone: 'UTC',
        definition: 'The 365 UTC days ending with the day of the project\'s latest succeeded run.',
        endpoints: ['timeseries'],
      },
      {
        name: 'daily', days: null, inclusive: true, timezone: 'UTC',
        definition: 'One row per UTC day with counted runs, newest first; limit caps the rows (default 30, 1 to 365).',
        endpoints: ['daily-scores'],
      },
      {
        name: 'range', days: null, inclusive: true, timezone: 'UTC',
        definition: 'start_date..end_date when the request names them (days from 1970-01-01 to 8999-12-31, at most 366, start on or before end): exactly those days, in place of the window above. One end alone: the endpoint\'s default length starting or ending that day (the current window\'s days; 365 for the trend and daily scores). A range is a sum of its days\' exact counts, never an average of daily rates; mentions count runs completed on its days, forum metrics posts discovered on them.',
        endpoints: ENDPOINTS.filter((e) => e.params.includes('start_date')).map((e) => e.name),
      },
    ],
    periods: {
      parameter: 'interval',
      values: ['day', 'week', 'month'],
      definition: 'One point per UTC day (the default), per ISO 8601 week (Monday to Sunday; 2027-01-01 is in the week of Monday 2026-12-28), or per calendar month. A point is dated by the first day of its period, even when the range starts later in it, and covers the period\'s days inside the range; its figures come from the counts summed over those days.',
      endpoints: ENDPOINTS.filter((e) => e.params.includes('interval')).map((e) => e.name),
    },
    freshness: {
      max_staleness_ms: maxStalenessMs,
      definition: maxStalenessMs === 0
        ? 'Every body served is of the data committed when the request was answered.'
        : `A body may be served up to ${maxStalenessMs} ms behind the newest committed data while a newer one is built; such an answer says Cache-Status: visibility-api; hit; fwd=stale, and its X-Data-Version, X-Data-As-Of and ETag are those of the body sent. Its numbers are the numbers of the data it says (X-Data-Version), never a mix. A request with Cache-Control: no-cache gets a body at least as new as the data committed when it arrived.`,
    },
    engine_filter: 'Where engine_ids is accepted, only runs of the listed engines count, exactly as if only those engines had run; it does not move the window; an engine without runs matches nothing (run_count 0), not an error.',
    metrics: [
      { name: 'run_count', definition: 'Counted runs of the slice.', formula: 'runs', range: [0, null], when_empty: 0 },
      { name: 'prompt_count', definition: 'Different prompts among the counted runs of the slice.', formula: 'count(distinct prompt)', range: [0, null], when_empty: 0 },
      { name: 'mention_count', definition: 'Counted runs whose answer mentions the entity (competitor rankings).', formula: 'mentioned', range: [0, null], when_empty: 0 },
      {
        name: 'mention_rate', aliases: ['visibility'], definition: 'Share of counted runs whose answer mentions the entity.',
        formula: 'mentioned / runs', range: [0, 1], when_empty: 0, empty_when: 'runs = 0', interval: 'mention_rate_ci',
      },
      {
        name: 'average_rank', definition: 'Average best position of the entity over the runs that mention it (1 = always first).',
        formula: 'sum(best position) / mentioned', range: [1, null], when_empty: null, empty_when: 'mentioned = 0',
      },
      {
        name: 'sentiment', definition: 'Average sentiment of the entity over its counted mentions that carry one.',
        formula: 'sum(sentiment) / mentions with a sentiment', range: [-1, 1], when_empty: null, empty_when: 'no mention carries a sentiment',
      },
      {
        name: 'score', aliases: ['current_score'], definition: 'Visibility score: 100 x the average over counted runs of 1 / best position, counting 0 when the entity is not mentioned.',
        formula: '100 * sum(1 / best position) / runs', range: [0, 100], when_empty: null, empty_when: 'runs = 0',
        example: '4 runs naming the brand 1st, 2nd, 4th and not at all: 100 * (1 + 1/2 + 1/4 + 0) / 4 = 43.75',
      },
      {
        name: 'share_of_voice', definition: 'The entity\'s mentioning runs over the mentioning runs of the brand and of every tracked competitor, summed (one run naming the brand and two competitors adds 3). Shares of the brand and its competitors add up to 1.',
        formula: 'mentioned(entity) / (mentioned(brand) + sum over tracked competitors of mentioned(competitor))', range: [0, 1],
        when_empty: null, empty_when: 'nobody is mentioned', interval: 'share_of_voice_ci',
      },
    ],
    competitor_metrics: 'A competitor\'s mention_rate, average_rank, sentiment and score use its mentions in place of the brand\'s, over the same counted runs; its share_of_voice has the same denominator as the brand\'s.',
    rounding: {
      rounded: false,
      definition: 'Values are not rounded (2/3 is 0.6666666666666666): format them for display in the client. They are computed from exact integer sums, so the same data gives the same value however its events arrived.',
      reciprocal_rank_unit: `1/${RR_SCALE}`,
      sentiment_unit: `1/${SENTIMENT_SCALE}`,
    },
    intervals: {
      method: 'wilson',
      confidence: 0.95,
      z: Z95,
      formula: WILSON,
      fields: ['mention_rate_ci', 'share_of_voice_ci'],
      shape: '{"low": number, "high": number} with 0 <= low <= rate <= high <= 1; low is exactly 0 when k = 0, high exactly 1 when k = n; not rounded',
      null_when: 'n = 0',
      counts: [
        { field: 'mention_rate_ci', k: 'counted runs of the slice that mention the entity', n: 'counted runs of the slice' },
        { field: 'share_of_voice_ci', k: 'runs mentioning the entity', n: 'runs mentioning the brand + for each tracked competitor the runs mentioning it (the share-of-voice denominator)' },
      ],
      not_for: ['score', 'average_rank', 'sentiment'],
    },
    comparison: {
      parameters: ['compare', 'compare_start_date', 'compare_end_date'],
      previous_period: 'compare=previous_period: the same number of days as the range the request resolves to (start_date..end_date, one end with the default length, or the current window), ending the day before it starts. compare_start_date..compare_end_date instead names the period (both or neither, in order, at most 366 days, any length; not with compare). Without a range to start from (no start_date/end_date and no succeeded runs), previous_period names none: comparison is null and every change is null.',
      endpoints: ENDPOINTS.filter((e) => e.params.includes('compare')).map((e) => e.name),
      period_field: 'comparison: {"start_date", "end_date"} of the period compared with (null: none). The visibility report carries it after window_end; the lists (competitor rankings, segment analytics) on every row. Signals name it as compare_start_date and compare_end_date, and give each signal\'s delta and delta_ci by the same formula (docs/metrics.md, "Signals").',
      fields: ['mention_rate_change', 'share_of_voice_change'],
      shape: '{"previous": number|null, "previous_ci": {"low", "high"}|null, "delta": number|null, "delta_ci": {"low", "high"}|null, "significant": boolean} beside the rate\'s _ci: previous = k2/n2 and previous_ci its Wilson interval (null when n2 = 0); delta = p1 - p2 and delta_ci in [-1, 1]; not rounded. Present only when the request compares: a body without compare has the bytes it had.',
      matching: 'k and n are the counts behind the rate\'s _ci (intervals.counts), over each period. Rows are matched by id (prompt_id, engine_id, competitor_id, segment_id; the brand\'s row by being the brand); a row without counted runs in the comparison period has k2 = n2 = 0.',
      filters: 'The comparison period is measured with every filter of the current one (engine_ids and the others the endpoint takes); the project\'s setup (tracked competitors, active segments and their prompts) is today\'s for both.',
      method: 'newcombe-hybrid-score',
      confidence: 0.95,
      z: Z95,
      formula: NEWCOMBE,
      significant: 'delta_ci excludes 0 (low > 0 or high < 0): the change is significant at the 95 % level taken alone. One test per field: across many rows some false alarms are expected (about 1 in 20 unchanged rates); the two periods are treated as independent samples, so overlapping periods (sharing runs) make the interval too wide.',
      null_when: 'n1 = 0 or n2 = 0: delta and delta_ci null, significant false (previous and previous_ci are null when n2 = 0).',
    },
    slices: {
      dimensions: 'A run may name its country (ISO 3166-1 alpha-2), persona (a label the project defines), model (the model id the engine answered with) and surface (api or app); each is optional.',
      filters: ['country', 'persona', 'model', 'segment_ids'],
      filter_endpoints: ENDPOINTS.filter((e) => e.params.includes('country')).map((e) => e.name),
      combining: 'Within one parameter any of its values; across parameters all of them (and engine_ids). A run that names no value of a dimension never matches a filter on it. segment_ids: runs of the prompts that list any of those segments now.',
      group_by: 'visibility only: one or two of engine, prompt, segment, country, persona, model, and at most one of day, week, month; groups carry run_count, mention_count and the rates with their Wilson intervals. A prompt in two segments counts in both segment groups; a run without a dimension goes to the group whose key is null.',
      exact: 'Filters and groups are sums of the runs\' exact counts over the range, never averages of daily rates.',
    },
    signals: {
      endpoint: 'signals',
      metric: 'mention_rate',
      slices: 'The brand and each tracked competitor, each with every engine and all engines, every active segment and all segments, every country and all countries; a run without a country is only in the all-countries slices; a prompt in two segments counts in both.',
      min_runs: MIN_RUNS,
      tested_when: `The slice has at least ${MIN_RUNS} counted runs in each period; the others are counted in slices_skipped.`,
      test: 'Two-sided pooled two-proportion z-test: z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2)), p = (k1 + k2) / (n1 + n2), p_value = erfc(|z| / sqrt 2); 1 when p is 0 or 1.',
      interval: 'delta_ci: the Newcombe hybrid score interval of comparison.formula.',
      multiple_testing: 'benjamini-hochberg',
      false_discovery_rate: FALSE_DISCOVERY_RATE,
      q_value: 'q_(i) = min over j >= i of p_(j) m / j, the p-values sorted ascending over the m tested slices (slices_tested), at most 1.',
      signal_when: `q_value <= ${FALSE_DISCOVERY_RATE}: across all tested slices, the expected share of false signals among those listed is at most ${FALSE_DISCOVERY_RATE * 100} %.`,
      ordering: 'By |delta| descending, then the brand first, then name, competitor id, engine, segment, country (all before each value).',
    },
    string_order: 'Text compares by code point (binary), not by locale.',
    orderings: ORDERINGS,
  };
}
