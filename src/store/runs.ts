import type { Statement } from 'better-sqlite3';
import { decodeEvent, type PromptRunCompleted } from '../events';
import { addDays, utcDay } from '../lib/time';
import type { Db } from './db';
import { isNewer, isSame, type Outcome, type Version } from './versions';
import { RunIndex } from './run-index';

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

/** Each competitor a run names once, at its best position (the first such mention on a tie), in order of first mention. */
export function competitorsOf(mentions: readonly MentionIn[]): CompetitorHit[] {
  const best = new Map<string, MentionIn>();
  for (const m of mentions) {
    if (m.entity_type !== 'competitor' || !m.competitor_id) continue;
    const seen = best.get(m.competitor_id);
    if (!seen || m.position < seen.position) best.set(m.competitor_id, m);
  }
  return [...best].map(([competitor_id, m]) => ({ competitor_id, position: m.position, sentiment: m.sentiment ?? null }));
}

/** Each URL of a run once (its first citation, or the first that has a title); an empty title is none. */
export function urlsOf(citations: readonly CitationIn[]): RunUrl[] {
  const seen = new Map<string, RunUrl>();
  for (const c of citations) {
    const prev = seen.get(c.url);
    const title = c.title || null;
    if (!prev || (prev.title === null && title !== null)) seen.set(c.url, { url: c.url, domain: prev?.domain ?? citedDomain(c.url), title });
  }
  return [...seen.values()];
}

/** The run of a prompt_run.completed event (decoded: its times normalized) as the aggregates see it. */
export function runFacts(run: PromptRunCompleted): RunFacts {
  const brand = bestBrand(run.mentions);
  return {
    id: run.id, run_group_id: run.run_group_id, project_id: run.project_id, engine_id: run.engine_id, prompt_id: run.prompt_id,
    day: utcDay(run.completed_at), status: run.status, completed_at: run.completed_at,
    brand_position: brand?.position ?? null, brand_sentiment: brand?.sentiment ?? null,
    competitors: competitorsOf(run.mentions), urls: urlsOf(run.citations),
  };
}

/**
 * A run made ready to write: its facts, its counts and the event as received, which its row keeps
 * (the read models show its mentions and citations from it). Pure work, done where the event is
 * decoded (another thread): the writer binds the event's bytes as they came.
 */
export interface PreparedRun {
  facts: RunFacts;
  mentionCount: number;
  citationCount: number;
  /** The event's JSON, or its UTF-8 bytes when a preparing thread sent them. */
  event: string | Uint8Array;
  /** facts.competitors and facts.urls as stored (hitsJson, citedJson), text or bytes likewise. */
  hits: string | Uint8Array;
  cited: string | Uint8Array;
}

/** A run's competitors as its `hits` column keeps them. */
export const hitsJson = (hits: readonly CompetitorHit[]): string => JSON.stringify(hits.map((h) => [h.competitor_id, h.position, h.sentiment]));
/** A run's URLs as its `cited` column keeps them (the domain is the URL's). */
export const citedJson = (urls: readonly RunUrl[]): string => JSON.stringify(urls.map((u) => [u.url, u.title]));

export function parseHits(json: string): CompetitorHit[] {
  return (JSON.parse(json) as Array<[string, number, number | null]>).map(([competitor_id, position, sentiment]) => ({ competitor_id, position, sentiment }));
}

export function parseCited(json: string): RunUrl[] {
  return (JSON.parse(json) as Array<[string, string | null]>).map(([url, title]) => ({ url, domain: citedDomain(url), title }));
}

export function prepareRun(run: PromptRunCompleted, event: string | Uint8Array): PreparedRun {
  const facts = runFacts(run);
  return {
    facts, mentionCount: run.mentions.length, citationCount: run.citations.length, event,
    hits: hitsJson(facts.competitors), cited: citedJson(facts.urls),
  };
}

/** The event of a stored run as its data, as decoded on ingestion (its times normalized). */
export function storedRunData(event: string): PromptRunCompleted {
  const d = decodeEvent(event);
  if (!d.ok) throw new Error(`a stored run's event no longer decodes: ${d.detail}`);
  return d.event.data as PromptRunCompleted;
}

/**
 * What a run says, whatever event brought it: the same fact twice (a retry under a new event id) has
 * the same text. Mentions and citations as the API shows them, so a run migrated from the columns of
 * an older schema is the same fact as the event it was stored from.
 */
function factOf(run: PromptRunCompleted): string {
  return JSON.stringify([run.id, run.run_group_id, run.project_id, run.prompt_id, run.engine_id, run.status, run.completed_at,
    run.response_excerpt ?? null, storedMentions(run.mentions), storedCitations(run.citations)]);
}

const textOf = (event: string | Uint8Array): string => (typeof event === 'string' ? event : Buffer.from(event.buffer, event.byteOffset, event.byteLength).toString('utf8'));

/**
 * A run's row, in the order of RunStore's column list. Text is bound as it came: a preparing
 * thread's bytes (UTF-8 already, views of its batch's buffer) go to SQLite as they are, no copy
 * into a JS string and no Buffer made per column (better-sqlite3 binds any Uint8Array).
 */
function valuesOf(run: PreparedRun, v: Version): unknown[] {
  const f = run.facts;
  return [f.id, f.run_group_id, f.project_id, f.prompt_id, f.engine_id, f.status, f.completed_at, f.day,
    f.brand_position, f.brand_sentiment, run.mentionCount, run.citationCount, run.event, run.hits, run.cited, v.at, v.id];
}

/** Days of runs read at a time when a project's history is counted again. */
const HISTORY_DAYS = 7;

/** The columns of a stored run that make its RunFacts (hits and cited parsed when asked for). */
const FACT_COLUMNS = 'id, run_group_id, project_id, engine_id, prompt_id, day, status, completed_at, brand_position, brand_sentiment, hits, cited';

/** FACT_COLUMNS as a raw row (better-sqlite3's raw mode: an array, not an object of named values). */
type StoredRun = [id: string, run_group_id: string, project_id: string, engine_id: string, prompt_id: string, day: string, status: string,
  completed_at: string, brand_position: number | null, brand_sentiment: number | null, hits: string, cited: string];

interface StoredVersion {
  v_at: string;
  v_id: string;
}

/**
 * A stored run as RunFacts, its competitors and URLs parsed when first asked for: a recount that
 * reads a project's history parses only what it uses.
 */
class StoredFacts implements RunFacts {
  readonly id: string;
  readonly run_group_id: string;
  readonly project_id: string;
  readonly engine_id: string;
  readonly prompt_id: string;
  readonly day: string;
  readonly status: string;
  readonly completed_at: string;
  readonly brand_position: number | null;
  readonly brand_sentiment: number | null;
  private readonly hitsJson: string;
  private readonly citedJson: string;
  private hits: CompetitorHit[] | undefined;
  private cited: RunUrl[] | undefined;

  constructor(r: StoredRun) {
    [this.id, this.run_group_id, this.project_id, this.engine_id, this.prompt_id, this.day, this.status, this.completed_at,
      this.brand_position, this.brand_sentiment, this.hitsJson, this.citedJson] = r;
  }

  get competitors(): CompetitorHit[] {
    return (this.hits ??= parseHits(this.hitsJson));
  }

  get urls(): RunUrl[] {
    return (this.cited ??= parseCited(this.citedJson));
  }
}

const factsOf = (r: StoredRun): RunFacts => new StoredFacts(r);

/**
 * Upserts prompt runs (last writer wins), each row keeping the event as received. A new run (nearly
 * every run) costs one statement: its id is found in no row (run-index.ts), and it is inserted; only a
 * run seen before is read back, and replaced when a newer version arrives, so its old contribution
 * can leave the aggregates.
 */
export class RunStore {
  /** Where each run id's row is (run-index.ts). */
  readonly index: RunIndex;
  private readonly insert;
  private readonly version;
  private readonly stored;
  private readonly replace;
  private readonly touchVersion;
  private readonly succeededIn;
  private readonly edge;

  constructor(db: Db) {
    const columns = ['id', 'run_group_id', 'project_id', 'prompt_id', 'engine_id', 'status', 'completed_at', 'day',
      'brand_position', 'brand_sentiment', 'mention_count', 'citation_count', 'event', 'hits', 'cited', 'v_at', 'v_id'];
    // CAST: what a preparing thread sent comes as UTF-8 bytes, kept as the text it is (a BLOB would stay a BLOB).
    const value = (c: string): string => (c === 'event' || c === 'hits' || c === 'cited' ? 'CAST(? AS TEXT)' : '?');
    this.index = new RunIndex(db);
    this.insert = db.prepare(`INSERT INTO prompt_runs (${columns.join(', ')}) VALUES (${columns.map(value).join(', ')})`);
    this.version = db.prepare('SELECT v_at, v_id, event FROM prompt_runs WHERE rowid = ?');
    this.stored = db.prepare(`SELECT ${FACT_COLUMNS} FROM prompt_runs WHERE rowid = ?`).raw(true);
    // The same values as the insert but the id, by row (better-sqlite3 binds ? in order, not ?NNN).
    this.replace = db.prepare(`UPDATE prompt_runs SET ${columns.slice(1).map((c) => `${c} = ${value(c)}`).join(', ')} WHERE rowid = ?`);
    this.touchVersion = db.prepare('UPDATE prompt_runs SET v_at = ?, v_id = ? WHERE rowid = ?');
    // A project's succeeded runs of [start, end) in completion order, through prompt_runs_recent.
    this.succeededIn = db.prepare(`SELECT ${FACT_COLUMNS} FROM prompt_runs
      WHERE project_id = ? AND completed_at >= ? AND completed_at < ? AND status = 'succeeded' ORDER BY completed_at, id`).raw(true);
    const edge = (order: string): Statement => db.prepare(`SELECT day FROM prompt_runs WHERE project_id = ? AND status = 'succeeded'
      ORDER BY completed_at ${order} LIMIT 1`).pluck();
    this.edge = { asc: edge('ASC'), desc: edge('DESC') };
  }

  apply(run: PreparedRun, v: Version): RunEffects {
    const id = run.facts.id;
    const values = valuesOf(run, v);
    const at = this.index.find(id);
    if (at === undefined) {
      this.index.added(id, Number(this.insert.run(...values).lastInsertRowid));
      return { outcome: 'applied', added: run.facts };
    }
    const cur = this.version.get(at) as StoredVersion & { event: string };
    const stored = this.stored.get(at) as StoredRun;
    // A version conflict is rare: the two events are decoded again to tell a retry of the same fact.
    const sameFact = (): boolean => factOf(storedRunData(cur.event)) === factOf(storedRunData(textOf(run.event)));
    if (!isNewer(v, cur.v_at, cur.v_id)) {
      return { outcome: isSame(v, cur.v_at, cur.v_id) || sameFact() ? 'duplicate' : 'stale' };
    }
    if (sameFact()) {
      // The same fact retried under a newer event id: keep the version order, change no data.
      this.touchVersion.run(v.at, v.id, at);
      return { outcome: 'duplicate' };
    }
    this.replace.run(...values.slice(1), at);
    return { outcome: 'applied', added: run.facts, removed: factsOf(stored) };
  }

  /** A project's succeeded runs completed on the days start..end (inclusive), oldest first. */
  succeeded(projectId: string, start: string, end: string): RunFacts[] {
    return (this.succeededIn.all(projectId, start, `${end}U`) as StoredRun[]).map(factsOf);
  }

  /**
   * Every succeeded run of a project, oldest first, read a week at a time: a recount of a year of a
   * busy project holds a week of runs in memory, not the year. (Read, not iterated: the caller writes
   * between two weeks, and a connection runs no statement while one of its queries is being iterated.)
   */
  *history(projectId: string): Generator<RunFacts> {
    const first = this.edge.asc.get(projectId) as string | undefined;
    const last = this.edge.desc.get(projectId) as string | undefined;
    if (first === undefined || last === undefined) return;
    for (let from = first; from <= last; from = addDays(from, HISTORY_DAYS)) {
      const to = addDays(from, HISTORY_DAYS - 1);
      yield* this.succeeded(projectId, from, to < last ? to : last);
    }
  }
}
