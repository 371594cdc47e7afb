import { createHash } from 'node:crypto';
import type { PromptRunCompleted } from '../events';
import { utcDay } from '../lib/time';
import type { Db } from './db';
import { isNewer, isSame, type Outcome, type Version } from './versions';

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

/** Within one run an entity counts once, at its best (lowest) position, with that mention's sentiment. */
export function bestMention(mentions: StoredMention[], match: (m: StoredMention) => boolean): StoredMention | undefined {
  let best: StoredMention | undefined;
  for (const m of mentions) if (match(m) && (!best || m.position < best.position)) best = m;
  return best;
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

/**
 * Upserts prompt runs (last writer wins) with their mentions and citations. A run seen before is
 * read back only when a newer version replaces it, so its old contribution can leave the aggregates.
 */
export class RunStore {
  private readonly version;
  private readonly stored;
  private readonly put;
  private readonly touchVersion;

  constructor(db: Db) {
    this.version = db.prepare('SELECT fact_hash, v_at, v_id FROM prompt_runs WHERE id = ?');
    this.stored = db.prepare(`SELECT id, run_group_id, project_id, engine_id, prompt_id, day, status, completed_at,
      brand_position, brand_sentiment, mentions, citations FROM prompt_runs WHERE id = ?`);
    this.put = db.prepare(`INSERT INTO prompt_runs (id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day,
        response_excerpt, brand_position, brand_sentiment, mention_count, citation_count, mentions, citations, fact_hash, v_at, v_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET run_group_id = excluded.run_group_id, project_id = excluded.project_id,
        prompt_id = excluded.prompt_id, engine_id = excluded.engine_id, status = excluded.status,
        completed_at = excluded.completed_at, day = excluded.day, response_excerpt = excluded.response_excerpt,
        brand_position = excluded.brand_position, brand_sentiment = excluded.brand_sentiment,
        mention_count = excluded.mention_count, citation_count = excluded.citation_count,
        mentions = excluded.mentions, citations = excluded.citations,
        fact_hash = excluded.fact_hash, v_at = excluded.v_at, v_id = excluded.v_id`);
    this.touchVersion = db.prepare('UPDATE prompt_runs SET v_at = ?, v_id = ? WHERE id = ?');
  }

  apply(run: PreparedRun, v: Version): RunEffects {
    const id = run.facts.id;
    const cur = this.version.get(id) as StoredVersion | undefined;
    if (cur && !isNewer(v, cur.v_at, cur.v_id)) {
      return { outcome: isSame(v, cur.v_at, cur.v_id) || cur.fact_hash === run.factHash ? 'duplicate' : 'stale' };
    }
    if (cur && cur.fact_hash === run.factHash) {
      // The same fact retried under a newer event id: keep the version order, change no data.
      this.touchVersion.run(v.at, v.id, id);
      return { outcome: 'duplicate' };
    }
    const removed = cur ? this.storedFacts(id) : undefined;
    this.write(run, v);
    return { outcome: 'applied', added: run.facts, removed };
  }

  private storedFacts(id: string): RunFacts {
    const r = this.stored.get(id) as StoredRun;
    return { ...r, mentions: JSON.parse(r.mentions) as StoredMention[], citations: JSON.parse(r.citations) as StoredCitation[] };
  }

  private write(run: PreparedRun, v: Version): void {
    const f = run.facts;
    this.put.run(f.id, f.run_group_id, f.project_id, f.prompt_id, f.engine_id, f.status, f.completed_at, f.day, run.excerpt,
      f.brand_position, f.brand_sentiment, f.mentions.length, f.citations.length, run.mentions, run.citations, run.factHash, v.at, v.id);
  }
}
