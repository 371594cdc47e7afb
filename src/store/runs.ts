import { createHash } from 'node:crypto';
import type { PromptRunCompleted } from '../events';
import { addDays, utcDay } from '../lib/time';
import type { Statement } from 'better-sqlite3';
import type { Db } from './db';
import { isNewer, isSame, type Outcome, type Version } from './versions';
import { bestMention } from './contributions';
import { RunIndex } from './run-index';

/** A mention as stored: every field present, null where the analyser gave none. */
export interface StoredMention {
  entity_type: 'brand' | 'competitor';
  competitor_id: string | null;
  name: string;
  position: number;
  sentiment: number | null;
  snippet: string | null;
}

export interface StoredCitation {
  url: string;
  domain: string;
  title: string | null;
  position: number | null;
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
  mentions: StoredMention[];
  citations: StoredCitation[];
}

interface StoredVersion {
  fact_hash: string;
  v_at: string;
  v_id: string;
}

interface StoredRun extends Omit<RunFacts, 'mentions' | 'citations'> {
  mentions: string;
  citations: string;
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

function normalizeMentions(run: PromptRunCompleted): StoredMention[] {
  return run.mentions.map((m) => ({
    entity_type: m.entity_type, competitor_id: m.competitor_id ?? null, name: m.name, position: m.position,
    sentiment: m.sentiment ?? null, snippet: m.snippet ?? null,
  }));
}

/** The same sources are cited run after run: parsing each URL once per 10,000 distinct ones saves ~6 us per run. */
const domains = new Map<string, string>();
function citedDomain(url: string): string {
  let d = domains.get(url);
  if (d === undefined) {
    if (domains.size >= 10_000) domains.clear();
    domains.set(url, (d = domainOf(url)));
  }
  return d;
}

function normalizeCitations(run: PromptRunCompleted): StoredCitation[] {
  return run.citations.map((c) => ({ url: c.url, domain: citedDomain(c.url), title: c.title ?? null, position: c.position ?? null }));
}

/**
 * A run made ready to write: its facts, the values of its row and the hash that tells a retry of
 * the same fact. Pure work, so it can be done where the event is decoded (another thread).
 */
export interface PreparedRun {
  facts: RunFacts;
  factHash: string;
  excerpt: string | null;
  mentions: string;  // JSON of facts.mentions, as stored
  citations: string; // JSON of facts.citations, as stored
}

export function prepareRun(run: PromptRunCompleted): PreparedRun {
  const mentions = normalizeMentions(run);
  const citations = normalizeCitations(run);
  const brand = bestMention(mentions, (m) => m.entity_type === 'brand');
  return {
    facts: {
      id: run.id, run_group_id: run.run_group_id, project_id: run.project_id, engine_id: run.engine_id, prompt_id: run.prompt_id,
      day: utcDay(run.completed_at), status: run.status, completed_at: run.completed_at,
      brand_position: brand?.position ?? null, brand_sentiment: brand?.sentiment ?? null, mentions, citations,
    },
    factHash: createHash('sha1').update(JSON.stringify(run)).digest('base64'),
    excerpt: run.response_excerpt ?? null,
    mentions: JSON.stringify(mentions),
    citations: JSON.stringify(citations),
  };
}

/** A run's row, in the order of RunStore's column list. */
function valuesOf(run: PreparedRun, v: Version): unknown[] {
  const f = run.facts;
  return [f.id, f.run_group_id, f.project_id, f.prompt_id, f.engine_id, f.status, f.completed_at, f.day, run.excerpt,
    f.brand_position, f.brand_sentiment, f.mentions.length, f.citations.length, run.mentions, run.citations, run.factHash, v.at, v.id];
}

/** Days of runs read at a time when a project's history is counted again. */
const HISTORY_DAYS = 7;

/** The columns of a stored run that make its RunFacts (mentions and citations as JSON). */
const FACT_COLUMNS = `id, run_group_id, project_id, engine_id, prompt_id, day, status, completed_at,
  brand_position, brand_sentiment, mentions, citations`;

/**
 * A stored run as RunFacts, its mentions and citations parsed when first asked for: a recount that
 * reads a project's history parses only what it uses (the engine-day sums the mentions, the cited
 * URLs the citations).
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
  private readonly mentionsJson: string;
  private readonly citationsJson: string;
  private parsedMentions: StoredMention[] | undefined;
  private parsedCitations: StoredCitation[] | undefined;

  constructor(r: StoredRun) {
    this.id = r.id;
    this.run_group_id = r.run_group_id;
    this.project_id = r.project_id;
    this.engine_id = r.engine_id;
    this.prompt_id = r.prompt_id;
    this.day = r.day;
    this.status = r.status;
    this.completed_at = r.completed_at;
    this.brand_position = r.brand_position;
    this.brand_sentiment = r.brand_sentiment;
    this.mentionsJson = r.mentions;
    this.citationsJson = r.citations;
  }

  get mentions(): StoredMention[] {
    return (this.parsedMentions ??= JSON.parse(this.mentionsJson) as StoredMention[]);
  }

  get citations(): StoredCitation[] {
    return (this.parsedCitations ??= JSON.parse(this.citationsJson) as StoredCitation[]);
  }
}

const factsOf = (r: StoredRun): RunFacts => new StoredFacts(r);

/**
 * Upserts prompt runs (last writer wins) with their mentions and citations. A new run (nearly every
 * run) costs one statement: the insert finds no row of its id and writes; only a run seen before is
 * read back, and replaced when a newer version arrives, so its old contribution can leave the aggregates.
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
    const columns = `id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day, response_excerpt, brand_position,
      brand_sentiment, mention_count, citation_count, mentions, citations, fact_hash, v_at, v_id`;
    this.index = new RunIndex(db);
    this.insert = db.prepare(`INSERT INTO prompt_runs (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.version = db.prepare('SELECT fact_hash, v_at, v_id FROM prompt_runs WHERE rowid = ?');
    this.stored = db.prepare(`SELECT ${FACT_COLUMNS} FROM prompt_runs WHERE rowid = ?`);
    // The same values as the insert but the id, by row (better-sqlite3 binds ? in order, not ?NNN).
    this.replace = db.prepare(`UPDATE prompt_runs SET ${columns.split(',').slice(1).map((c) => `${c.trim()} = ?`).join(', ')} WHERE rowid = ?`);
    this.touchVersion = db.prepare('UPDATE prompt_runs SET v_at = ?, v_id = ? WHERE rowid = ?');
    // A project's succeeded runs of [start, end) in completion order, through prompt_runs_recent.
    this.succeededIn = db.prepare(`SELECT ${FACT_COLUMNS} FROM prompt_runs
      WHERE project_id = ? AND completed_at >= ? AND completed_at < ? AND status = 'succeeded' ORDER BY completed_at, id`);
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
    const cur = this.version.get(at) as StoredVersion;
    if (!isNewer(v, cur.v_at, cur.v_id)) {
      return { outcome: isSame(v, cur.v_at, cur.v_id) || cur.fact_hash === run.factHash ? 'duplicate' : 'stale' };
    }
    if (cur.fact_hash === run.factHash) {
      // The same fact retried under a newer event id: keep the version order, change no data.
      this.touchVersion.run(v.at, v.id, at);
      return { outcome: 'duplicate' };
    }
    const removed = factsOf(this.stored.get(at) as StoredRun);
    this.replace.run(...values.slice(1), at);
    return { outcome: 'applied', added: run.facts, removed };
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
