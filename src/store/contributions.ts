import type { StoredCitation, StoredMention } from './runs';

export type { StoredCitation, StoredMention } from './runs';

/**
 * What one prompt run contributes to the aggregates, and how contributions add up. Pure, so the
 * writer (its roll-ups and engine-day sums), a recount from the stored runs and the read models
 * (which sum a range's days straight from the runs) all use the very same rules: the same data
 * gives the same numbers whichever of them computed it.
 */

/**
 * Fixed-point scales of the two fractional sums (migration 005). Integers add exactly in any
 * order, so a row is the same whatever the batching, and a superseded run subtracts to the cent.
 * RR_SCALE is lcm(1..20): 1/position is exact for every position up to 20.
 */
export const RR_SCALE = 232_792_560;
export const SENTIMENT_SCALE = 1_000_000;

/** 1/position in RR_SCALE units. A sum of them stays exact in a double up to 38 million runs at position 1. */
export const rrFixed = (position: number): number => Math.round(RR_SCALE / position);
/** Half away from zero, as SQLite's round() (test/oracle-aggregates.sql); Math.round alone rounds -0.5 up. */
export const sentimentFixed = (sentiment: number): number => Math.sign(sentiment) * Math.round(Math.abs(sentiment * SENTIMENT_SCALE));

/** A mention's sums: `runs` that mention the entity, at their best position. */
export interface MentionDelta { runs: number; position_sum: number; rr_fixed: number; sentiment_fixed: number; sentiment_n: number }

export const zeroMention = (): MentionDelta => ({ runs: 0, position_sum: 0, rr_fixed: 0, sentiment_fixed: 0, sentiment_n: 0 });
export const isZero = (d: MentionDelta): boolean => d.runs === 0 && d.position_sum === 0 && d.rr_fixed === 0 && d.sentiment_fixed === 0 && d.sentiment_n === 0;

/** Adds (sign 1) or takes away (sign -1) one run's best mention of an entity. */
export function addMention(d: MentionDelta, position: number, sentiment: number | null, sign: number): void {
  d.runs += sign;
  d.position_sum += sign * position;
  d.rr_fixed += sign * rrFixed(position);
  if (sentiment !== null) {
    d.sentiment_fixed += sign * sentimentFixed(sentiment);
    d.sentiment_n += sign;
  }
}

export function addDelta(into: MentionDelta, d: MentionDelta): void {
  into.runs += d.runs;
  into.position_sum += d.position_sum;
  into.rr_fixed += d.rr_fixed;
  into.sentiment_fixed += d.sentiment_fixed;
  into.sentiment_n += d.sentiment_n;
}

/** Within one run an entity counts once, at its best (lowest) position, with that mention's sentiment. */
export function bestMention(mentions: StoredMention[], match: (m: StoredMention) => boolean): StoredMention | undefined {
  let best: StoredMention | undefined;
  for (const m of mentions) if (match(m) && (!best || m.position < best.position)) best = m;
  return best;
}

/** Each competitor a run names once, at its best position (the first such mention on a tie), in order of first mention. */
export function competitorsOf(mentions: StoredMention[]): StoredMention[] {
  const best = new Map<string, StoredMention>();
  for (const m of mentions) {
    if (m.entity_type !== 'competitor' || !m.competitor_id) continue;
    const seen = best.get(m.competitor_id);
    if (!seen || m.position < seen.position) best.set(m.competitor_id, m);
  }
  return [...best.values()];
}

/** A citation's title, when it has one: an empty title is none. */
export const titleOf = (c: StoredCitation): string | null => c.title || null;

/** Each URL of a run once (its first citation, or the first that has a title). */
export function urlsOf(citations: StoredCitation[]): StoredCitation[] {
  const seen = new Map<string, StoredCitation>();
  for (const c of citations) {
    const prev = seen.get(c.url);
    if (!prev || (titleOf(prev) === null && titleOf(c) !== null)) seen.set(c.url, c);
  }
  return [...seen.values()];
}

// ---- Cited URLs (migration 009): what the citations, referrers and warm leads show of a URL.

/** The title of a row and what ranks it: latest first, then the first bucket, then the greater run. */
export interface Titled {
  title: string;
  at: string;
  /** day, engine and prompt as one text whose order is the key's (a space sorts before every id character). */
  bucket: string;
  run: string | null;
}

export const bucketText = (day: string, engineId: string, promptId: string): string => `${day} ${engineId} ${promptId}`;

/** Whether `a` gives the title over `over`: the latest title_at, then the first bucket, then the greater run. */
export function titleWins(a: Titled, over: Titled | null): boolean {
  if (!over) return true;
  if (a.at !== over.at) return a.at > over.at;
  if (a.bucket !== over.bucket) return a.bucket < over.bucket;
  return (a.run ?? '') > (over.run ?? '');
}

/** A URL over some runs: what a cited row holds. */
export interface Cited {
  url: string;
  domain: string;
  runs: number;
  engines: Set<string>;
  prompts: Set<string>;
  firstAt: string;
  lastAt: string;
  titled: Titled | null;
}

export function newCited(url: string, domain: string, at: string): Cited {
  return { url, domain, runs: 0, engines: new Set(), prompts: new Set(), firstAt: at, lastAt: at, titled: null };
}

/** One run's citation of the URL merged in (the run's day, engine, prompt, id and completed_at). */
export function citeOnce(into: Cited, c: StoredCitation, run: { id: string; day: string; engine_id: string; prompt_id: string; completed_at: string }): void {
  into.runs += 1;
  into.engines.add(run.engine_id);
  into.prompts.add(run.prompt_id);
  if (run.completed_at < into.firstAt) into.firstAt = run.completed_at;
  if (run.completed_at > into.lastAt) into.lastAt = run.completed_at;
  const title = titleOf(c);
  if (title === null) return;
  const t: Titled = { title, at: run.completed_at, bucket: bucketText(run.day, run.engine_id, run.prompt_id), run: run.id };
  if (titleWins(t, into.titled)) into.titled = t;
}

/** A comma-separated sorted list, as the rows keep their ids. */
export const listOf = (ids: Iterable<string>): string => [...ids].sort().join(',');
