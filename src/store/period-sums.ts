import { addDelta, addMention, citeRun, EngineCitations, UrlCitations, winsOver, zeroMention, type MentionDelta } from './contributions';
import { compareStrings } from './metrics';
import type { RolledGrain } from './periods';
import type { RunFacts } from './run-store';

/** A project's brand sums of one engine and prompt in a period, with its competitors' mention sums. */
export class PromptSums {
  runs = 0;
  readonly brand = zeroMention();
  readonly competitors = new Map<string, MentionDelta>();

  constructor(readonly engineId: string, readonly promptId: string) {}

  /** A competitor's mention sums, made when first asked for. */
  competitor(competitorId: string): MentionDelta {
    let c = this.competitors.get(competitorId);
    if (c === undefined) this.competitors.set(competitorId, (c = zeroMention()));
    return c;
  }
}

/**
 * One project's roll-up rows of one period and grain, as the sums of the runs added to them. The maps
 * are nested by the run's own id and URL strings, never by a key joined from them: a string hashes
 * once (V8 keeps its hash), a joined one is a new string to hash at every run (it was most of a
 * replay). The cited rows over all engines are the merge of the engine rows, made when written.
 */
export class PeriodSums {
  /** By engine, then prompt. */
  readonly prompts = new Map<string, Map<string, PromptSums>>();
  /** By URL (then engine, inside). */
  urls = new Map<string, UrlCitations>();
  /** False once rows + sums may not be exactly the period's runs: then it is counted again from them. */
  trusted = true;

  constructor(readonly projectId: string, readonly grain: RolledGrain, readonly period: string) {}

  /** A succeeded run of the period; `counted`: it counts (COUNTED_RUNS), so its URLs join the cited rows. */
  add(run: RunFacts, counted: boolean): void {
    const p = this.promptSums(run.engine_id, run.prompt_id);
    p.runs += 1;
    if (run.brand_position !== null) addMention(p.brand, run.brand_position, run.brand_sentiment, 1);
    for (const m of run.competitors) addMention(p.competitor(m.competitor_id), m.position, m.sentiment, 1);
    if (counted) citeRun(this.urls, run, run.urls);
  }

  /** Another's sums taken in (a cell into its week and its month): copied, never shared. */
  absorb(o: PeriodSums): void {
    this.trusted &&= o.trusted;
    for (const [engineId, oByPrompt] of o.prompts) {
      for (const [promptId, op] of oByPrompt) {
        const p = this.promptSums(engineId, promptId);
        p.runs += op.runs;
        addDelta(p.brand, op.brand);
        for (const [competitorId, oc] of op.competitors) addDelta(p.competitor(competitorId), oc);
      }
    }
    for (const [url, ou] of o.urls) {
      let u = this.urls.get(url);
      if (u === undefined) this.urls.set(url, (u = new UrlCitations(url, ou.domain)));
      u.absorb(ou);
    }
  }

  /** The sums of one engine and prompt, made when first asked for. */
  promptSums(engineId: string, promptId: string): PromptSums {
    let byPrompt = this.prompts.get(engineId);
    if (byPrompt === undefined) this.prompts.set(engineId, (byPrompt = new Map()));
    let p = byPrompt.get(promptId);
    if (p === undefined) byPrompt.set(promptId, (p = new PromptSums(engineId, promptId)));
    return p;
  }

  get empty(): boolean {
    return this.prompts.size === 0 && this.urls.size === 0;
  }
}

// ---- A period's row as `rollups` stores it (migration 013): the lists name ids and URLs by their place.

const byNumber = (a: number, b: number): number => a - b;
const byPlaces = (a: readonly number[], b: readonly number[]): number => a[0]! - b[0]! || a[1]! - b[1]! || (a[2] ?? 0) - (b[2] ?? 0);

/** The places of a set of ids, sorted (places follow the ids' order: sorted places are sorted ids). */
function places(ids: ReadonlySet<string>, at: ReadonlyMap<string, number>): number[] {
  const out: number[] = [];
  for (const id of ids) out.push(at.get(id)!);
  return out.length > 1 ? out.sort(byNumber) : out;
}

/** The column values of a period's row: ids, urls, prompts, competitors, cited, cited_engines (JSON). */
export type RollupColumns = [ids: string, urls: string, prompts: string, competitors: string, cited: string, citedEngines: string];

/**
 * A period's sums as the row stores them, each list in key order. The row over all engines of a URL
 * is the merge of its engine rows (contributions.ts: runs add, lists unite, first and last are the
 * min and the max, the title the one that wins), made here without an object per row.
 */
export function encodeSums(s: PeriodSums): RollupColumns {
  const idSet = new Set<string>();
  for (const [engineId, byPrompt] of s.prompts) {
    idSet.add(engineId);
    for (const [promptId, p] of byPrompt) {
      idSet.add(promptId);
      for (const competitorId of p.competitors.keys()) idSet.add(competitorId);
    }
  }
  for (const u of s.urls.values()) {
    for (const e of u.byEngine.values()) {
      idSet.add(e.engineId);
      for (const q of e.prompts) idSet.add(q);
    }
  }
  const ids = [...idSet].sort(compareStrings);
  const at = new Map<string, number>();
  for (let i = 0; i < ids.length; i += 1) at.set(ids[i]!, i);
  const prompts: number[][] = [];
  const competitors: number[][] = [];
  for (const [engineId, byPrompt] of s.prompts) {
    const e = at.get(engineId)!;
    for (const [promptId, p] of byPrompt) {
      const q = at.get(promptId)!;
      const b = p.brand;
      prompts.push([e, q, p.runs, b.runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n]);
      for (const [competitorId, m] of p.competitors) competitors.push([e, q, at.get(competitorId)!, m.runs, m.position_sum, m.rr_fixed, m.sentiment_fixed, m.sentiment_n]);
    }
  }
  prompts.sort(byPlaces);
  competitors.sort(byPlaces);
  const [urls, cited, citedEngines] = encodeCited(s, at);
  return [JSON.stringify(ids), urls, JSON.stringify(prompts), JSON.stringify(competitors), cited, citedEngines];
}

/**
 * A period's cited lists as the row stores them (urls, cited, cited_engines), naming ids by their
 * place in `at` (every engine and prompt of s.urls must have one).
 */
export function encodeCited(s: PeriodSums, at: ReadonlyMap<string, number>): [urls: string, cited: string, citedEngines: string] {
  const urls = [...s.urls.keys()].sort(compareStrings);
  const urlList: Array<[string, string]> = [];
  const cited: unknown[] = [];
  const citedEngines: unknown[] = [];
  for (let un = 0; un < urls.length; un += 1) {
    const u = s.urls.get(urls[un]!)!;
    urlList.push([u.url, u.domain]);
    const engines = [...u.byEngine.values()].map((e) => ({ e, n: at.get(e.engineId)! })).sort((a, b) => a.n - b.n);
    let runs = 0;
    let firstAt = '';
    let lastAt = '';
    let best: EngineCitations | null = null;
    const promptSet = new Set<string>();
    for (const { e, n } of engines) {
      runs += e.runs;
      if (firstAt === '' || e.firstAt < firstAt) firstAt = e.firstAt;
      if (e.lastAt > lastAt) lastAt = e.lastAt;
      for (const q of e.prompts) promptSet.add(q);
      if (e.title !== null && (best === null || titleBeats(e, best))) best = e;
      citedEngines.push([un, n, e.runs, places(e.prompts, at), e.firstAt, e.lastAt, e.title, e.title === null ? null : e.titleAt,
        e.title === null ? null : e.titleDay, e.title === null ? null : at.get(e.titlePrompt)!, e.title === null ? null : e.titleRun]);
    }
    cited.push([un, runs, engines.map((x) => x.n), places(promptSet, at), firstAt, lastAt, best?.title ?? null, best?.titleAt ?? null,
      best?.titleDay ?? null, best ? at.get(best.engineId)! : null, best ? at.get(best.titlePrompt)! : null, best?.titleRun ?? null]);
  }
  return [JSON.stringify(urlList), JSON.stringify(cited), JSON.stringify(citedEngines)];
}

/** Whether every engine and prompt that s.urls names has a place in `at`. */
export function citedIdsIn(s: PeriodSums, at: ReadonlyMap<string, number>): boolean {
  for (const u of s.urls.values()) {
    for (const e of u.byEngine.values()) {
      if (!at.has(e.engineId)) return false;
      for (const q of e.prompts) if (!at.has(q)) return false;
    }
  }
  return true;
}

/**
 * Whether a stored row's brand and competitor lists (text) name every one of its `idCount` ids: then
 * its ids are those of these lists alone, whatever its cited lists name.
 */
export function sumsNameEveryId(idCount: number, prompts: string, competitors: string): boolean {
  const named = new Uint8Array(idCount);
  let left = idCount;
  const mark = (i: number): void => {
    if (named[i] === 0) {
      named[i] = 1;
      left -= 1;
    }
  };
  for (const r of JSON.parse(prompts) as StoredSums[]) {
    mark(r[0]!);
    mark(r[1]!);
  }
  if (left > 0) for (const r of JSON.parse(competitors) as StoredSums[]) mark(r[2]!);
  return left === 0;
}

/** The title rule across engines (contributions.ts winsOver): whether `a`'s title wins over `b`'s. */
function titleBeats(a: EngineCitations, b: EngineCitations): boolean {
  return winsOver(a.titleAt, a.titleDay, a.engineId, a.titlePrompt, a.titleRun, b.titleAt, b.titleDay, b.engineId, b.titlePrompt, b.titleRun);
}

type StoredSums = number[];
/** A stored row of a period's cited URLs per engine: [url, engine, runs, prompts, first_at, last_at, title, title_at, title_day, title_prompt, title_run] */
export type StoredCitedEngine = [url: number, engine: number, runs: number, prompts: number[], first_at: string, last_at: string, title: string | null,
  title_at: string | null, title_day: string | null, title_prompt: number | null, title_run: string | null];

/**
 * A stored period's rows as sums again, so that sums can be added to them and the whole written
 * back (a period written twice: runs that came late). The cited rows over all engines are not read:
 * they are the merge of the engine rows, made again when written.
 */
export function sumsOfRow(into: PeriodSums, ids: string, urls: string, prompts: string, competitors: string, citedEngines: string): void {
  const id = JSON.parse(ids) as string[];
  const url = JSON.parse(urls) as Array<[string, string]>;
  for (const [e, q, runs, b, ps, rr, sf, sn] of JSON.parse(prompts) as StoredSums[]) {
    const p = into.promptSums(id[e!]!, id[q!]!);
    p.runs += runs!;
    addDelta(p.brand, { runs: b!, position_sum: ps!, rr_fixed: rr!, sentiment_fixed: sf!, sentiment_n: sn! });
  }
  for (const [e, q, c, runs, ps, rr, sf, sn] of JSON.parse(competitors) as StoredSums[]) {
    addDelta(into.promptSums(id[e!]!, id[q!]!).competitor(id[c!]!), { runs: runs!, position_sum: ps!, rr_fixed: rr!, sentiment_fixed: sf!, sentiment_n: sn! });
  }
  for (const [un, en, runs, qs, firstAt, lastAt, title, titleAt, titleDay, titlePrompt, titleRun] of JSON.parse(citedEngines) as StoredCitedEngine[]) {
    const [u0, domain] = url[un]!;
    let u = into.urls.get(u0);
    if (u === undefined) into.urls.set(u0, (u = new UrlCitations(u0, domain)));
    const stored = new EngineCitations(id[en]!, firstAt);
    stored.runs = runs;
    stored.lastAt = lastAt;
    for (const q of qs) stored.prompts.add(id[q]!);
    if (title !== null) stored.setTitle(title, titleAt!, titleDay!, id[titlePrompt!]!, titleRun ?? '');
    const held = u.byEngine.get(stored.engineId);
    if (held) held.absorb(stored);
    else u.byEngine.set(stored.engineId, stored);
  }
}
