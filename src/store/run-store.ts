import type { Statement } from 'better-sqlite3';
import { decodeEvent, type PromptRunCompleted } from '../events';
import { utcDay } from '../lib/time';
import type { Db } from './db';
import { isNewer, isSame, type Outcome, type Version } from './versions';
import { RunIndex } from './run-index';
import { KEY_OF, Keys } from './keys';
import { Dims, dimsKey } from './dims';
import { decodeFacts, encodeFacts, factFields, type FactsArray, type RunFactFields } from './run-facts';

export { briefFacts, decodeFacts, encodeFacts, factFields, factsKey, type BriefFactFields, type FactsArray, type RunFactFields } from './run-facts';

/** A mention as the API shows it: every field present, null where the analyser gave none. */
export interface StoredMention {
  entity_type: 'brand' | 'competitor';
  competitor_id: string | null;
  name: string;
  position: number;
  sentiment: number | null;
  snippet: string | null;
}

/** A citation as the API shows it, with the domain of its URL. */
export interface StoredCitation {
  url: string;
  domain: string;
  title: string | null;
  position: number | null;
}

/** A competitor a run names, once, at its best (lowest) position (the first such mention on a tie). */
export interface CompetitorHit {
  competitor_id: string;
  position: number;
  sentiment: number | null;
}

/** A URL a run cites, once: its first citation with a title, else its first. */
export interface RunUrl {
  url: string;
  domain: string;
  /** An empty title is none. */
  title: string | null;
}

/** What the aggregates need of one run: its bucket (project, UTC day, engine, prompt), group and findings. */
export interface RunFacts {
  id: string;
  run_group_id: string;
  project_id: string;
  engine_id: string;
  prompt_id: string;
  day: string;
  status: string;
  completed_at: string;
  brand_position: number | null;
  brand_sentiment: number | null;
  competitors: CompetitorHit[];
  urls: RunUrl[];
  /** Its dimensions as one key (dims.ts dimsKey), null or absent when it names none. */
  dims?: string | null;
}

/** What applying a run did: the contribution it added to the aggregates, and the one it replaced. */
export interface RunEffects {
  outcome: Outcome;
  added?: RunFacts;
  removed?: RunFacts;
}

export function domainOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return '';
  }
}

/** The same sources are cited run after run: parsing each URL once per 10,000 distinct ones saves ~6 us per run. */
const domains = new Map<string, string>();
export function citedDomain(url: string): string {
  let d = domains.get(url);
  if (d === undefined) {
    if (domains.size >= 10_000) domains.clear();
    domains.set(url, (d = domainOf(url)));
  }
  return d;
}

/** A mention or citation as the analyser reported it (optional fields absent), or as the API shows it (null). */
type MentionIn = PromptRunCompleted['mentions'][number] | StoredMention;
type CitationIn = PromptRunCompleted['citations'][number] | StoredCitation;

/** Mentions as the API shows them: every field present, null where absent, in the analyser's order. */
export function storedMentions(mentions: readonly MentionIn[]): StoredMention[] {
  return mentions.map((m) => ({
    entity_type: m.entity_type, competitor_id: m.competitor_id ?? null, name: m.name, position: m.position,
    sentiment: m.sentiment ?? null, snippet: m.snippet ?? null,
  }));
}

/** Citations as the API shows them: with their domain, null where absent, in the analyser's order. */
export function storedCitations(citations: readonly CitationIn[]): StoredCitation[] {
  return citations.map((c) => ({ url: c.url, domain: citedDomain(c.url), title: c.title ?? null, position: c.position ?? null }));
}

/** The best mention of the brand: the lowest position (the first on a tie), with its sentiment. */
function bestBrand(mentions: readonly MentionIn[]): MentionIn | undefined {
  let best: MentionIn | undefined;
  for (const m of mentions) if (m.entity_type === 'brand' && (!best || m.position < best.position)) best = m;
  return best;
}

/**
 * Each competitor a run names once, at its best position (the first such mention on a tie), in order
 * of first mention. A run names a handful: a scan of those found so far beats a Map made per run.
 */
export function competitorsOf(mentions: readonly MentionIn[]): CompetitorHit[] {
  const out: CompetitorHit[] = [];
  for (const m of mentions) {
    const id = m.competitor_id;
    if (m.entity_type !== 'competitor' || !id) continue;
    let i = 0;
    while (i < out.length && out[i]!.competitor_id !== id) i += 1;
    if (i === out.length) out.push({ competitor_id: id, position: m.position, sentiment: m.sentiment ?? null });
    else if (m.position < out[i]!.position) out[i] = { competitor_id: id, position: m.position, sentiment: m.sentiment ?? null };
  }
  return out;
}

/** Each URL of a run once (its first citation, or the first that has a title); an empty title is none. Scanned as competitorsOf. */
export function urlsOf(citations: readonly CitationIn[]): RunUrl[] {
  const out: RunUrl[] = [];
  for (const c of citations) {
    const title = c.title || null;
    let i = 0;
    while (i < out.length && out[i]!.url !== c.url) i += 1;
    if (i === out.length) out.push({ url: c.url, domain: citedDomain(c.url), title });
    else if (out[i]!.title === null && title !== null) out[i]!.title = title;
  }
  return out;
}

/** The run of a prompt_run.completed event (decoded: its times normalized) as the aggregates see it. */
export function runFacts(run: PromptRunCompleted): RunFacts {
  const brand = bestBrand(run.mentions);
  return {
    id: run.id, run_group_id: run.run_group_id, project_id: run.project_id, engine_id: run.engine_id, prompt_id: run.prompt_id,
    day: utcDay(run.completed_at), status: run.status, completed_at: run.completed_at,
    brand_position: brand?.position ?? null, brand_sentiment: brand?.sentiment ?? null,
    competitors: competitorsOf(run.mentions), urls: urlsOf(run.citations), dims: dimsKey(run),
  };
}

/**
 * A run made ready to write: its facts, and the two texts its row keeps: the event as received (the
 * read models show its mentions and citations from it) and `facts` (encodeFacts, run-facts.ts). Pure
 * work, done where the event is decoded (another thread): the writer binds both texts' bytes as they came.
 */
export interface PrecomputedRun {
  facts: RunFacts;
  /** The event's JSON, or its UTF-8 bytes when a precompute thread sent them. */
  event: string | Uint8Array;
  /** encodeFacts of the run, text or bytes likewise. */
  factsJson: string | Uint8Array;
}

export function precomputeRun(run: PromptRunCompleted, event: string | Uint8Array): PrecomputedRun {
  const facts = runFacts(run);
  return { facts, event, factsJson: encodeFacts(facts, run.mentions.length, run.citations.length) };
}

/** The event of a stored run, decoded as on ingestion (its times normalized). */
export function storedEvent(event: string): { version: Version; data: PromptRunCompleted } {
  const d = decodeEvent(event);
  if (!d.ok) throw new Error(`a stored run's event no longer decodes: ${d.detail}`);
  return { version: { at: d.event.occurred_at, id: d.event.event_id }, data: d.event.data as PromptRunCompleted };
}

/**
 * What a run says, whatever event brought it: the same fact twice (a retry under a new event id) has
 * the same text. Mentions and citations as the API shows them, so a run migrated from the columns of
 * an older schema is the same fact as the event it was stored from.
 */
function factOf(run: PromptRunCompleted): string {
  return JSON.stringify([run.id, run.run_group_id, run.project_id, run.prompt_id, run.engine_id, run.status, run.completed_at,
    run.response_excerpt ?? null, storedMentions(run.mentions), storedCitations(run.citations), dimsKey(run)]);
}

const textOf = (event: string | Uint8Array): string => (typeof event === 'string' ? event : Buffer.from(event.buffer, event.byteOffset, event.byteLength).toString('utf8'));

/**
 * Runs read at a time when a project's runs are read in order (a recount, a period counted again):
 * pages of a number of runs, not of days, so the memory a read holds does not grow with a project's
 * runs per day (a week of 1,000 prompts x 8 engines at 4 run groups a day was one 200 MB text).
 */
export const PAGE_RUNS = 5_000;

/** A stored run as its row gives it: [id, completed_at, facts]. */
type StoredRun = [id: string, completed_at: string, facts: string];

/**
 * A stored run's RunFacts, from its row (migration 013): its facts parsed once, its competitors and
 * URLs made when first asked for (a recount that reads a project's history makes only what it uses).
 */
class StoredFacts implements RunFacts {
  readonly engine_id: string;
  readonly prompt_id: string;
  readonly day: string;
  readonly brand_position: number | null;
  readonly brand_sentiment: number | null;
  private readonly f: RunFactFields;
  private hits: CompetitorHit[] | undefined;
  private cited: RunUrl[] | undefined;

  constructor(readonly id: string, readonly project_id: string, readonly run_group_id: string, readonly status: string,
    readonly completed_at: string, facts: string, readonly dims: string | null = null) {
    this.f = decodeFacts(facts);
    ({ engineId: this.engine_id, promptId: this.prompt_id, brandPosition: this.brand_position, brandSentiment: this.brand_sentiment } = this.f);
    this.day = completed_at.slice(0, 10);
  }

  get competitors(): CompetitorHit[] {
    return (this.hits ??= this.f.hits.map(([competitor_id, position, sentiment]) => ({ competitor_id, position, sentiment })));
  }

  get urls(): RunUrl[] {
    return (this.cited ??= this.f.cited.map(([url, title]) => ({ url, domain: citedDomain(url), title })));
  }
}

/**
 * Upserts prompt runs (last writer wins), each row keeping the event as received. A new run (nearly
 * every run) costs one statement: its id is found in no row (run-index.ts), and it is inserted; only a
 * run seen before is read back, and replaced when a newer version arrives, so its old contribution
 * can leave the aggregates.
 */
export class RunStore {
  /** Where each run id's row is (run-index.ts). */
  readonly index: RunIndex;
  private readonly keys: Keys;
  private readonly dims: Dims;
  private readonly insert;
  private readonly stored;
  private readonly replace;
  private readonly touchVersion;
  private readonly succeededIn;
  private readonly factsIn;
  private readonly edge;
  private readonly pageEnd;
  private readonly nextAt;

  constructor(db: Db) {
    this.index = new RunIndex(db);
    this.keys = new Keys(db);
    this.dims = new Dims(db);
    // CAST: what a precompute thread sent comes as UTF-8 bytes, kept as the text it is (a BLOB would stay a BLOB).
    this.insert = db.prepare(`INSERT INTO runs (project, completed_at, run_group, status, id, facts, event, dims)
      VALUES (?, ?, ?, ?, ?, CAST(? AS TEXT), CAST(? AS TEXT), ?)`);
    this.stored = db.prepare(`SELECT r.id, p.id, g.id, r.status, r.completed_at, r.facts, r.event,
        nullif(d.country, ''), nullif(d.persona, ''), nullif(d.model, ''), nullif(d.surface, '') FROM runs r
      JOIN keys p ON p.n = r.project JOIN keys g ON g.n = r.run_group LEFT JOIN dims d ON d.n = r.dims WHERE r.rowid = ?`).raw(true);
    this.replace = db.prepare(`UPDATE runs SET project = ?, completed_at = ?, run_group = ?, status = ?, facts = CAST(? AS TEXT), event = CAST(? AS TEXT), dims = ?
      WHERE rowid = ?`);
    this.touchVersion = db.prepare('UPDATE runs SET event = CAST(? AS TEXT) WHERE rowid = ?');
    // A project's succeeded runs of [start, end) in completion order, through runs_recent.
    this.succeededIn = db.prepare(`SELECT id, completed_at, facts FROM runs
      WHERE project = ${KEY_OF} AND completed_at >= ? AND completed_at < ? AND status = 'succeeded' ORDER BY completed_at, id`).raw(true);
    // The same runs as one JSON text of [id, completed_at, facts]: one string and one JSON.parse a week, not a row and a parse a run.
    // In runs_recent's order (project, completed_at): a recount needs the days in order, not the runs within one.
    this.factsIn = db.prepare(`SELECT '[' || group_concat('["' || id || '","' || completed_at || '",' || facts || ']', ',') || ']'
      FROM (SELECT id, completed_at, facts FROM runs WHERE project = ${KEY_OF} AND completed_at >= ? AND completed_at < ? AND status = 'succeeded'
        ORDER BY completed_at)`).pluck();
    const edge = (order: string): Statement => db.prepare(`SELECT substr(completed_at, 1, 10) FROM runs WHERE project = ${KEY_OF} AND status = 'succeeded'
      ORDER BY completed_at ${order} LIMIT 1`).pluck();
    this.edge = { asc: edge('ASC'), desc: edge('DESC') };
    // Where a page of PAGE_RUNS runs ends, from runs_recent alone (no row read); the next completion time after one.
    this.pageEnd = db.prepare(`SELECT completed_at FROM runs WHERE project = ${KEY_OF} AND completed_at >= ? AND completed_at < ?
      ORDER BY completed_at LIMIT 1 OFFSET ${PAGE_RUNS}`).pluck();
    this.nextAt = db.prepare(`SELECT min(completed_at) FROM runs WHERE project = ${KEY_OF} AND completed_at > ? AND completed_at < ?`).pluck();
  }

  apply(run: PrecomputedRun, v: Version): RunEffects {
    const f = run.facts;
    const at = this.index.find(f.id);
    if (at === undefined) {
      const project = this.keys.numberOf(f.project_id);
      const rowid = this.insert.run(project, f.completed_at, this.keys.numberOf(f.run_group_id), f.status, f.id, run.factsJson, run.event,
        this.dims.numberOf(project, f.dims)).lastInsertRowid;
      this.index.added(f.id, Number(rowid));
      return { outcome: 'applied', added: f };
    }
    const [id, projectId, groupId, status, completedAt, facts, event, country, persona, model, surface] = this.stored.get(at) as
      [string, string, string, string, string, string, string, string | null, string | null, string | null, string | null];
    // A version conflict is rare: the two events are decoded again, for their versions and to tell a retry of the same fact.
    const cur = storedEvent(event);
    const sameFact = (): boolean => factOf(cur.data) === factOf(storedEvent(textOf(run.event)).data);
    if (!isNewer(v, cur.version.at, cur.version.id)) {
      return { outcome: isSame(v, cur.version.at, cur.version.id) || sameFact() ? 'duplicate' : 'stale' };
    }
    if (sameFact()) {
      // The same fact retried under a newer event id: its event (the version) is kept, no data changes.
      this.touchVersion.run(run.event, at);
      return { outcome: 'duplicate' };
    }
    const project = this.keys.numberOf(f.project_id);
    this.replace.run(project, f.completed_at, this.keys.numberOf(f.run_group_id), f.status, run.factsJson, run.event,
      this.dims.numberOf(project, f.dims), at);
    return { outcome: 'applied', added: f, removed: new StoredFacts(id, projectId, groupId, status, completedAt, facts, dimsKey({ country, persona, model, surface })) };
  }

  /** The transaction failed: what memory learned from it is forgotten. */
  fail(): void {
    this.index.fail();
    this.keys.fail();
    this.dims.fail();
  }

  /**
   * One event's savepoint was rolled back (the batch goes on): the numbers it gave ids are gone, and
   * SQLite gives them to the next new ids, so memory must not keep them. (The run index needs
   * nothing: a run's insert is its savepoint's last statement, so a refused run was never added.)
   */
  rolledBack(): void {
    this.keys.fail();
    this.dims.fail();
  }

  /** A project's succeeded runs completed on the days start..end (inclusive), oldest first, a page at a time. */
  eachSucceededRun(projectId: string, start: string, end: string, f: (run: RunFacts) => void): void {
    for (const [from, to] of this.pages(projectId, start, `${end}U`)) {
      for (const [id, completedAt, facts] of this.succeededIn.all(projectId, from, to) as StoredRun[]) f(new StoredFacts(id, projectId, '', 'succeeded', completedAt, facts));
    }
  }

  /** The project's succeeded runs of the days start..end (inclusive), oldest first, as eachSucceeded gives them (one JSON text a page). */
  eachSucceededIn(projectId: string, start: string, end: string, f: (id: string, completedAt: string, facts: RunFactFields) => void): void {
    for (const [from, to] of this.pages(projectId, start, `${end}U`)) this.eachOfPage(projectId, from, to, f);
  }

  /** The days of the project's first and last succeeded runs (null when it has none). */
  succeededEdges(projectId: string): [string | null, string | null] {
    return [(this.edge.asc.get(projectId) as string | undefined) ?? null, (this.edge.desc.get(projectId) as string | undefined) ?? null];
  }

  /**
   * Every succeeded run of a project, oldest first, as its id, completion time and facts, read a page
   * of PAGE_RUNS runs at a time: a recount of a year of a busy project holds a page of runs in memory,
   * not the year (nor a week: a large project's week is hundreds of thousands of runs). (Read, not
   * iterated: the caller writes between two pages, and a connection runs no statement while one of its
   * queries is being iterated.)
   */
  eachSucceeded(projectId: string, f: (id: string, completedAt: string, facts: RunFactFields) => void): void {
    const first = this.edge.asc.get(projectId) as string | undefined;
    const last = this.edge.desc.get(projectId) as string | undefined;
    if (first === undefined || last === undefined) return;
    this.eachSucceededIn(projectId, first, last, f);
  }

  private eachOfPage(projectId: string, from: string, to: string, f: (id: string, completedAt: string, facts: RunFactFields) => void): void {
    const runs = this.factsIn.get(projectId, from, to) as string | null;
    if (runs !== null) for (const [id, completedAt, facts] of JSON.parse(runs) as Array<[string, string, FactsArray]>) f(id, completedAt, factFields(facts));
  }

  /**
   * The project's runs completed in [start, end) as pages [from, to) of about PAGE_RUNS runs (any
   * status), in order. A page ends at a completion time, never between two runs of the same one, so
   * the runs come in the order one read of the whole range gives.
   */
  private *pages(projectId: string, start: string, end: string): Generator<[string, string]> {
    let from = start;
    while (from < end) {
      let to = (this.pageEnd.get(projectId, from, end) as string | undefined) ?? end;
      // PAGE_RUNS runs or more completed at `from` itself: they are one page.
      if (to === from) to = (this.nextAt.get(projectId, from, end) as string | null) ?? end;
      yield [from, to];
      from = to;
    }
  }
}
