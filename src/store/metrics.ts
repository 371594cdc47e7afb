// The metric formulas over stored sums (docs/metrics.md): pure arithmetic on the integers the writer
// keeps. They sit in the store because the writer renders the trend's day points with them
// (trend-days.ts); the read models use the same functions through readmodels/store.ts (store/reads).
import { RR_SCALE, SENTIMENT_SCALE } from './contributions';

/**
 * Sums over succeeded runs, as stored in the agg_* tables. Every metric is a ratio of sums, so any
 * engine subset, day range, prompt or segment is exact: add the rows, then divide.
 */
export interface MentionSums {
  runs: number;          // runs in the slice
  mentioned: number;     // runs that mention the entity
  position_sum: number;
  rr_fixed: number;        // sum of 1/position in units of 1/RR_SCALE: integers add exactly in any order
  sentiment_fixed: number; // sum of sentiments in units of 1/SENTIMENT_SCALE
  sentiment_n: number;
}

export function zeroSums(): MentionSums {
  return { runs: 0, mentioned: 0, position_sum: 0, rr_fixed: 0, sentiment_fixed: 0, sentiment_n: 0 };
}

export function addSums(into: MentionSums, s: MentionSums): MentionSums {
  into.runs += s.runs;
  into.mentioned += s.mentioned;
  into.position_sum += s.position_sum;
  into.rr_fixed += s.rr_fixed;
  into.sentiment_fixed += s.sentiment_fixed;
  into.sentiment_n += s.sentiment_n;
  return into;
}

/** Runs whose answer mentions the entity / runs; 0 when there are no runs. */
export const mentionRate = (s: MentionSums): number => (s.runs === 0 ? 0 : s.mentioned / s.runs);
/** Mean best position over runs that mention the entity; null when none do. */
export const averageRank = (s: MentionSums): number | null => (s.mentioned === 0 ? null : s.position_sum / s.mentioned);
/** Mean sentiment over mentions that carry one; null when none do. */
export const sentiment = (s: MentionSums): number | null => (s.sentiment_n === 0 ? null : s.sentiment_fixed / SENTIMENT_SCALE / s.sentiment_n);
/** Visibility score: 100 x mean over runs of 1/position (0 when not mentioned); null when there are no runs. */
export const score = (s: MentionSums): number | null => (s.runs === 0 ? null : (100 * (s.rr_fixed / RR_SCALE)) / s.runs);
/** Brand mentions / (brand + tracked competitor mentions); null when neither is mentioned. */
export const shareOfVoice = (brandMentions: number, competitorMentions: number): number | null =>
  brandMentions + competitorMentions === 0 ? null : brandMentions / (brandMentions + competitorMentions);

/**
 * z of a two-sided 95 % interval: the 0.975 quantile of the standard normal (1.95996398...), to the
 * seven significant digits docs/metrics.md states, so a client can recompute every interval exactly.
 */
export const Z95 = 1.959964;

/** A confidence interval of a rate: low <= rate <= high, both in [0, 1]. */
export interface Interval {
  low: number;
  high: number;
}

/**
 * Wilson score interval (95 %, z = Z95) of `successes` out of `n` trials; null when n = 0 (nothing
 * measured). Unlike p +/- z sqrt(p(1-p)/n) it stays inside [0, 1] and is not zero-width at 0 or n.
 * Arithmetic on counts the caller already summed: no extra query.
 */
export function wilson(successes: number, n: number): Interval | null {
  if (n === 0) return null;
  const z2 = Z95 * Z95;
  const p = successes / n;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (Z95 / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0 of n (n of n) the bound that equals the rate is 0 (1) exactly; floats could land a hair beside it.
  return { low: successes === 0 ? 0 : centre - half, high: successes === n ? 1 : centre + half };
}

/** Interval of mentionRate: mentioning runs of n = runs. */
export const mentionRateCi = (s: MentionSums): Interval | null => wilson(s.mentioned, s.runs);
/** Interval of shareOfVoice / shareOf: the entity's mentioning runs of n = all tracked entities' mentioning runs. */
export const shareCi = (part: number, whole: number): Interval | null => wilson(part, whole);

/** Total orderings are built from this: ties broken by name, then id, so the same data always gives the same bytes. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sumAll(rows: readonly MentionSums[]): MentionSums {
  return rows.reduce((into, r) => addSums(into, r), zeroSums());
}

/** The brand's figures for one day that has counted runs (so its score is a number, never null). */
export function dayFigures(s: MentionSums, competitorMentions: number) {
  return {
    score: score(s) ?? 0,
    mention_rate: mentionRate(s),
    mention_rate_ci: mentionRateCi(s),
    average_rank: averageRank(s),
    sentiment: sentiment(s),
    share_of_voice: shareOfVoice(s.mentioned, competitorMentions),
    share_of_voice_ci: shareCi(s.mentioned, s.mentioned + competitorMentions),
  };
}
