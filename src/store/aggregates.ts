import type { Db } from './db';
import { bestMention, bucketKey, type BatchRuns, type Bucket, type RunFacts, type StoredCitation, type StoredMention } from './runs';

interface Sums { runs: number; position_sum: number; rr_sum: number; sentiment_sum: number; sentiment_n: number }
interface UrlSums { domain: string; runs: number; first_at: string; last_at: string; title: string | null; title_at: string }
interface StoredRunRow { id: string; status: string; completed_at: string; brand_position: number | null; brand_sentiment: number | null; mentions: string; citations: string }

function emptySums(): Sums {
  return { runs: 0, position_sum: 0, rr_sum: 0, sentiment_sum: 0, sentiment_n: 0 };
}

/** Adds one run's best mention of an entity. Runs arrive in id order, so float sums are reproducible. */
function addMention(s: Sums, position: number, sentiment: number | null): void {
  s.runs += 1;
  s.position_sum += position;
  s.rr_sum += 1 / position;
  if (sentiment !== null) {
    s.sentiment_sum += sentiment;
    s.sentiment_n += 1;
  }
}

function byId(a: RunFacts, b: RunFacts): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Each tracked competitor of a run once, at its best position. */
function competitorsOf(run: RunFacts): StoredMention[] {
  const ids = new Set<string>();
  for (const m of run.mentions) if (m.entity_type === 'competitor' && m.competitor_id) ids.add(m.competitor_id);
  return [...ids].map((id) => bestMention(run.mentions, (m) => m.entity_type === 'competitor' && m.competitor_id === id)!);
}

/** Each URL of a run once (its first citation, or the first that has a title). */
function urlsOf(run: RunFacts): StoredCitation[] {
  const seen = new Map<string, StoredCitation>();
  for (const c of run.citations) {
    const prev = seen.get(c.url);
    if (!prev || (prev.title === null && c.title !== null)) seen.set(c.url, c);
  }
  return [...seen.values()];
}

/**
 * Recomputes the aggregate rows of the buckets a batch touched from the runs in each bucket.
 * Nothing is ever incremented: the rows are a function of the facts alone, whatever the batching.
 */
export class Aggregator {
  private readonly stmts;

  constructor(db: Db) {
    const bucket = 'project_id = ? AND engine_id = ? AND day = ? AND prompt_id = ?';
    this.stmts = {
      count: db.prepare(`SELECT count(*) FROM prompt_runs WHERE ${bucket}`).pluck(),
      runs: db.prepare(`SELECT id, status, completed_at, brand_position, brand_sentiment, mentions, citations
        FROM prompt_runs WHERE ${bucket} AND status = 'succeeded' ORDER BY id`),
      clear: ['agg_prompt_day', 'agg_competitor_day', 'agg_url_day'].map((t) => db.prepare(`DELETE FROM ${t} WHERE ${bucket}`)),
      putPrompt: db.prepare(`INSERT INTO agg_prompt_day (project_id, engine_id, day, prompt_id, runs, brand_runs, position_sum, rr_sum, sentiment_sum, sentiment_n)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      putCompetitor: db.prepare(`INSERT INTO agg_competitor_day (project_id, engine_id, day, prompt_id, competitor_id, runs, position_sum, rr_sum, sentiment_sum, sentiment_n)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      putUrl: db.prepare(`INSERT INTO agg_url_day (project_id, engine_id, day, prompt_id, url, domain, runs, first_at, last_at, title, title_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      groupCounts: db.prepare(`SELECT project_id, count(*) AS prompt_run_count,
          sum(status = 'succeeded') AS succeeded_count, sum(status = 'failed') AS failed_count
        FROM prompt_runs WHERE run_group_id = ? GROUP BY project_id ORDER BY project_id`),
      putGroup: db.prepare(`INSERT INTO agg_run_group (run_group_id, project_id, prompt_run_count, succeeded_count, failed_count)
        VALUES (?, @project_id, @prompt_run_count, @succeeded_count, @failed_count)`),
      clearGroup: db.prepare('DELETE FROM agg_run_group WHERE run_group_id = ?'),
    };
  }

  recomputeBuckets(buckets: Iterable<Bucket>, batch: BatchRuns): void {
    const unique = new Map<string, Bucket>();
    for (const b of buckets) unique.set(bucketKey(b), b);
    for (const key of [...unique.keys()].sort()) this.recomputeBucket(unique.get(key)!, key, batch);
  }

  recomputeRunGroups(ids: Iterable<string>): void {
    for (const id of [...new Set(ids)].sort()) {
      this.stmts.clearGroup.run(id);
      // Per project: a run naming another project than its group's is counted apart (see migration 003).
      for (const counts of this.stmts.groupCounts.all(id) as Array<Record<string, unknown>>) this.stmts.putGroup.run(id, counts);
    }
  }

  /**
   * The usual case, a bucket whose every run arrived in this batch, is summed from memory: there is
   * nothing to read back and no old row to delete. Otherwise the bucket is re-read from the store.
   */
  private recomputeBucket(b: Bucket, key: string, batch: BatchRuns): void {
    const k = [b.project_id, b.engine_id, b.day, b.prompt_id] as const;
    const fresh = batch.fresh.get(key);
    let runs: RunFacts[];
    if (fresh && !batch.touchedExisting.has(key) && this.stmts.count.get(...k) === fresh.length) {
      runs = fresh.filter((r) => r.status === 'succeeded').sort(byId);
    } else {
      for (const c of this.stmts.clear) c.run(...k);
      runs = (this.stmts.runs.all(...k) as StoredRunRow[]).map((r) => ({
        ...r, mentions: JSON.parse(r.mentions) as StoredMention[], citations: JSON.parse(r.citations) as StoredCitation[],
      }));
    }
    if (runs.length === 0) return;
    this.writePromptRow(k, runs);
    this.writeCompetitorRows(k, runs);
    this.writeUrlRows(k, runs);
  }

  private writePromptRow(k: readonly string[], runs: RunFacts[]): void {
    const brand = emptySums();
    for (const r of runs) if (r.brand_position !== null) addMention(brand, r.brand_position, r.brand_sentiment);
    this.stmts.putPrompt.run(...k, runs.length, brand.runs, brand.position_sum, brand.rr_sum, brand.sentiment_sum, brand.sentiment_n);
  }

  private writeCompetitorRows(k: readonly string[], runs: RunFacts[]): void {
    const byCompetitor = new Map<string, Sums>();
    for (const r of runs) {
      for (const m of competitorsOf(r)) {
        let s = byCompetitor.get(m.competitor_id!);
        if (!s) byCompetitor.set(m.competitor_id!, (s = emptySums()));
        addMention(s, m.position, m.sentiment);
      }
    }
    for (const [id, s] of byCompetitor) this.stmts.putCompetitor.run(...k, id, s.runs, s.position_sum, s.rr_sum, s.sentiment_sum, s.sentiment_n);
  }

  private writeUrlRows(k: readonly string[], runs: RunFacts[]): void {
    const byUrl = new Map<string, UrlSums>();
    for (const r of runs) {
      for (const c of urlsOf(r)) {
        const u = byUrl.get(c.url);
        if (!u) {
          byUrl.set(c.url, { domain: c.domain, runs: 1, first_at: r.completed_at, last_at: r.completed_at, title: c.title, title_at: c.title ? r.completed_at : '' });
          continue;
        }
        u.runs += 1;
        if (r.completed_at < u.first_at) u.first_at = r.completed_at;
        if (r.completed_at > u.last_at) u.last_at = r.completed_at;
        // The latest titled citation wins; runs come in id order, so ties resolve the same way every time.
        if (c.title && r.completed_at >= u.title_at) {
          u.title = c.title;
          u.title_at = r.completed_at;
        }
      }
    }
    for (const [url, u] of byUrl) this.stmts.putUrl.run(...k, url, u.domain, u.runs, u.first_at, u.last_at, u.title, u.title ? u.title_at : null);
  }
}
