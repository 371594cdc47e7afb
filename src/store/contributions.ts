import { citedDomain, type RunUrl } from './run-store';

export type { CompetitorHit, RunUrl, StoredCitation, StoredMention } from './run-store';
export { competitorsOf, storedCitations, storedMentions, urlsOf } from './run-store';

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
/** Half away from zero, as SQLite's round() (test/helpers/oracle-aggregates.sql); Math.round alone rounds -0.5 up. */
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

// ---- Cited URLs (migration 009): what the citations, referrers and warm leads show of a URL.

/** The title of a row and what ranks it: latest first, then the first bucket (day, engine, prompt), then the greater run. */
export interface Titled {
  title: string;
  at: string;
  day: string;
  engineId: string;
  promptId: string;
  run: string | null;
}

/**
 * The title rule: whether a title at (at, day, engine, prompt, run) wins over one at (oAt, oDay,
 * oEngine, oPrompt, oRun): the latest, then the first bucket (day, engine, prompt), then the greater
 * run (none: ''). In scalars, so that every holder of a title (Titled, EngineCitations) asks the same.
 */
export function winsOver(at: string, day: string, engineId: string, promptId: string, run: string,
  oAt: string, oDay: string, oEngineId: string, oPromptId: string, oRun: string): boolean {
  if (at !== oAt) return at > oAt;
  if (day !== oDay) return day < oDay;
  if (engineId !== oEngineId) return engineId < oEngineId;
  if (promptId !== oPromptId) return promptId < oPromptId;
  return run > oRun;
}

/** Whether `a` gives the title over `over`. */
export function titleWins(a: Titled, over: Titled | null): boolean {
  return over === null || winsOver(a.at, a.day, a.engineId, a.promptId, a.run ?? '', over.at, over.day, over.engineId, over.promptId, over.run ?? '');
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

/** What a run says of itself where it cites a URL. */
export interface CitingRun { id: string; day: string; engine_id: string; prompt_id: string; completed_at: string }

/** `into` takes in `c` (one engine's citations of its URL, or another URL row's): runs add, lists unite, the title by its rule. */
export function mergeCited(into: Cited, c: Cited): void {
  into.runs += c.runs;
  for (const e of c.engines) into.engines.add(e);
  for (const p of c.prompts) into.prompts.add(p);
  if (c.firstAt < into.firstAt) into.firstAt = c.firstAt;
  if (c.lastAt > into.lastAt) into.lastAt = c.lastAt;
  if (c.titled !== null && titleWins(c.titled, into.titled)) into.titled = c.titled;
}

/**
 * One URL's citations by one engine, run by run: what an engine row of the cited roll-ups holds
 * (agg_cited_engine_*). The title's fields are kept in place rather than as an object per
 * citation: a time-ordered log gives a newer title at nearly every run.
 */
export class EngineCitations {
  runs = 0;
  readonly prompts = new Set<string>();
  firstAt: string;
  lastAt: string;
  /** The winning title and what ranks it (titleWins within the engine); the other fields mean nothing while title is null. */
  title: string | null = null;
  titleAt = '';
  titleDay = '';
  titlePrompt = '';
  titleRun = '';

  constructor(readonly engineId: string, at: string) {
    this.firstAt = at;
    this.lastAt = at;
  }

  /** One run's citation of the URL (urlsOf: once per run, its title if any of its citations of it has one). */
  cite(title: string | null, at: string, day: string, promptId: string, runId: string): void {
    this.runs += 1;
    this.prompts.add(promptId);
    if (at < this.firstAt) this.firstAt = at;
    if (at > this.lastAt) this.lastAt = at;
    if (title !== null && !this.titleLoses(at, day, promptId, runId)) this.setTitle(title, at, day, promptId, runId);
  }

  /** Another's citations of the same URL and engine taken in (a batch's, a week's part of a month). */
  absorb(o: EngineCitations): void {
    this.runs += o.runs;
    for (const p of o.prompts) this.prompts.add(p);
    if (o.firstAt < this.firstAt) this.firstAt = o.firstAt;
    if (o.lastAt > this.lastAt) this.lastAt = o.lastAt;
    if (o.title !== null && !this.titleLoses(o.titleAt, o.titleDay, o.titlePrompt, o.titleRun)) this.setTitle(o.title, o.titleAt, o.titleDay, o.titlePrompt, o.titleRun);
  }

  /** The title rule (winsOver) within this engine: whether a title at (at, day, prompt, run) does not take this one's place. */
  private titleLoses(at: string, day: string, prompt: string, run: string): boolean {
    return this.title !== null && !winsOver(at, day, this.engineId, prompt, run, this.titleAt, this.titleDay, this.engineId, this.titlePrompt, this.titleRun);
  }

  setTitle(title: string, at: string, day: string, prompt: string, run: string): void {
    this.title = title;
    this.titleAt = at;
    this.titleDay = day;
    this.titlePrompt = prompt;
    this.titleRun = run;
  }

  titled(): Titled | null {
    if (this.title === null) return null;
    return { title: this.title, at: this.titleAt, day: this.titleDay, engineId: this.engineId, promptId: this.titlePrompt, run: this.titleRun };
  }
}

/** One URL's citations, per engine; the row over all engines is their merge (the same rules, in any order). */
export class UrlCitations {
  readonly byEngine = new Map<string, EngineCitations>();

  constructor(readonly url: string, readonly domain: string) {}

  cite(engineId: string, title: string | null, at: string, day: string, promptId: string, runId: string): void {
    let e = this.byEngine.get(engineId);
    if (e === undefined) this.byEngine.set(engineId, (e = new EngineCitations(engineId, at)));
    e.cite(title, at, day, promptId, runId);
  }

  /** Another's citations of the URL taken in (copied: `o` may be taken in elsewhere too). */
  absorb(o: UrlCitations): void {
    for (const [engineId, oe] of o.byEngine) {
      let e = this.byEngine.get(engineId);
      if (e === undefined) this.byEngine.set(engineId, (e = new EngineCitations(engineId, oe.firstAt)));
      e.absorb(oe);
    }
  }

  /** The row of one engine. */
  ofEngine(e: EngineCitations): Cited {
    return { url: this.url, domain: this.domain, runs: e.runs, engines: new Set([e.engineId]), prompts: e.prompts, firstAt: e.firstAt, lastAt: e.lastAt, titled: e.titled() };
  }

  /** The row over every engine. */
  merged(): Cited {
    let out: Cited | null = null;
    for (const e of this.byEngine.values()) {
      if (out === null) out = { ...this.ofEngine(e), prompts: new Set(e.prompts) };
      else mergeCited(out, this.ofEngine(e));
    }
    return out ?? newCited(this.url, this.domain, '');
  }
}

/** The URLs a run cites, each once (urlsOf), into `urls` by URL. */
export function citeRun(urls: Map<string, UrlCitations>, run: CitingRun, cited: readonly RunUrl[]): void {
  for (const c of cited) citeUrl(urls, c.url, c.domain, run.engine_id, c.title, run.completed_at, run.day, run.prompt_id, run.id);
}

/**
 * The URLs of a run as its facts keep them ([url, title] once each: run-store.ts FactsArray) into `urls`:
 * a URL's domain is made only when the URL is new there.
 */
export function citeFacts(urls: Map<string, UrlCitations>, cited: ReadonlyArray<[string, string | null]>, engineId: string, at: string, promptId: string, runId: string): void {
  const day = at.slice(0, 10);
  for (const [url, title] of cited) citeUrl(urls, url, null, engineId, title, at, day, promptId, runId);
}

/** One run's citation of a URL into `urls` by URL (`domain` null: made from the URL if the URL is new there). */
export function citeUrl(urls: Map<string, UrlCitations>, url: string, domain: string | null, engineId: string, title: string | null, at: string, day: string,
  promptId: string, runId: string): void {
  let u = urls.get(url);
  if (u === undefined) urls.set(url, (u = new UrlCitations(url, domain ?? citedDomain(url))));
  u.cite(engineId, title, at, day, promptId, runId);
}

