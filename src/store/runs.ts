import { createHash } from 'node:crypto';
import type { PromptRunCompleted } from '../events';
import { uuidFrom } from '../lib/ids';
import { utcDay } from '../lib/time';
import type { Db } from './db';
import { isNewer, isSame, type Outcome, type Version } from './versions';

/** An aggregate bucket: the runs of one prompt on one engine on one UTC day. */
export interface Bucket {
  project_id: string;
  engine_id: string;
  day: string;
  prompt_id: string;
}

export function bucketKey(b: Bucket): string {
  return `${b.project_id}|${b.engine_id}|${b.day}|${b.prompt_id}`;
}

interface StoredRun extends Bucket {
  run_group_id: string;
  fact_hash: string;
  v_at: string;
  v_id: string;
}

export interface RunEffects {
  outcome: Outcome;
  buckets: Bucket[];
  runGroups: string[];
  projects: string[];
}

type Mention = PromptRunCompleted['mentions'][number];

/** Within one run an entity counts once, at its best (lowest) position, with that mention's sentiment. */
function bestMention(mentions: Mention[], match: (m: Mention) => boolean): Mention | undefined {
  let best: Mention | undefined;
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

/** Upserts prompt runs and rewrites the rows derived from them (mentions, citations, best per entity). */
export class RunStore {
  private readonly get;
  private readonly put;
  private readonly touchVersion;
  private readonly deleteDerived: Array<ReturnType<Db['prepare']>>;
  private readonly putMention;
  private readonly putCitation;

  constructor(db: Db) {
    this.get = db.prepare('SELECT project_id, engine_id, day, prompt_id, run_group_id, fact_hash, v_at, v_id FROM prompt_runs WHERE id = ?');
    this.put = db.prepare(`INSERT INTO prompt_runs (id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day,
        response_excerpt, brand_position, brand_sentiment, mention_count, citation_count, fact_hash, v_at, v_id)
      VALUES (@id, @run_group_id, @project_id, @prompt_id, @engine_id, @status, @completed_at, @day,
        @response_excerpt, @brand_position, @brand_sentiment, @mention_count, @citation_count, @fact_hash, @v_at, @v_id)
      ON CONFLICT (id) DO UPDATE SET run_group_id = excluded.run_group_id, project_id = excluded.project_id,
        prompt_id = excluded.prompt_id, engine_id = excluded.engine_id, status = excluded.status,
        completed_at = excluded.completed_at, day = excluded.day, response_excerpt = excluded.response_excerpt,
        brand_position = excluded.brand_position, brand_sentiment = excluded.brand_sentiment,
        mention_count = excluded.mention_count, citation_count = excluded.citation_count,
        fact_hash = excluded.fact_hash, v_at = excluded.v_at, v_id = excluded.v_id`);
    this.touchVersion = db.prepare('UPDATE prompt_runs SET v_at = ?, v_id = ? WHERE id = ?');
    this.deleteDerived = ['run_mentions', 'run_citations']
      .map((t) => db.prepare(`DELETE FROM ${t} WHERE prompt_run_id = ?`));
    this.putMention = db.prepare(`INSERT INTO run_mentions (id, prompt_run_id, idx, project_id, run_group_id, prompt_id, engine_id,
        run_status, observed_at, entity_type, competitor_id, name, position, sentiment, snippet)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.putCitation = db.prepare('INSERT INTO run_citations (prompt_run_id, idx, url, domain, title, position) VALUES (?, ?, ?, ?, ?, ?)');
  }

  apply(run: PromptRunCompleted, v: Version): RunEffects {
    const cur = this.get.get(run.id) as StoredRun | undefined;
    const factHash = createHash('sha1').update(JSON.stringify(run)).digest('base64');
    if (cur && !isNewer(v, cur.v_at, cur.v_id)) {
      const outcome = isSame(v, cur.v_at, cur.v_id) || cur.fact_hash === factHash ? 'duplicate' : 'stale';
      return { outcome, buckets: [], runGroups: [], projects: [] };
    }
    if (cur && cur.fact_hash === factHash) {
      // The same fact retried under a newer event id: keep the version order, change no data.
      this.touchVersion.run(v.at, v.id, run.id);
      return { outcome: 'duplicate', buckets: [], runGroups: [], projects: [] };
    }
    const day = utcDay(run.completed_at);
    const bucket: Bucket = { project_id: run.project_id, engine_id: run.engine_id, day, prompt_id: run.prompt_id };
    const brand = bestMention(run.mentions, (m) => m.entity_type === 'brand');
    this.put.run({
      id: run.id, run_group_id: run.run_group_id, project_id: run.project_id, prompt_id: run.prompt_id,
      engine_id: run.engine_id, status: run.status, completed_at: run.completed_at, day,
      response_excerpt: run.response_excerpt ?? null,
      brand_position: brand?.position ?? null, brand_sentiment: brand?.sentiment ?? null,
      mention_count: run.mentions.length, citation_count: run.citations.length,
      fact_hash: factHash, v_at: v.at, v_id: v.id,
    });
    if (cur) for (const del of this.deleteDerived) del.run(run.id);
    this.writeDerived(run);
    const buckets = [bucket];
    const runGroups = [run.run_group_id];
    const projects = [run.project_id];
    if (cur) {
      buckets.push(cur);
      runGroups.push(cur.run_group_id);
      projects.push(cur.project_id);
    }
    return { outcome: 'applied', buckets, runGroups, projects };
  }

  private writeDerived(run: PromptRunCompleted): void {
    run.mentions.forEach((m, idx) => {
      this.putMention.run(uuidFrom(`${run.id}/mention/${idx}`), run.id, idx, run.project_id, run.run_group_id, run.prompt_id,
        run.engine_id, run.status, run.completed_at, m.entity_type, m.competitor_id ?? null, m.name, m.position,
        m.sentiment ?? null, m.snippet ?? null);
    });
    run.citations.forEach((c, idx) => {
      this.putCitation.run(run.id, idx, c.url, domainOf(c.url), c.title ?? null, c.position ?? null);
    });
  }
}
