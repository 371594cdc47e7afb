import type { Db } from './db';
import { bucketKey, type Bucket } from './runs';

interface RunRow { brand_position: number | null; brand_sentiment: number | null }
interface CompetitorRow { run_id: string; competitor_id: string; position: number; sentiment: number | null }
interface UrlRow { run_id: string; url: string; domain: string; title: string | null; cited_at: string }

interface Sums { runs: number; position_sum: number; rr_sum: number; sentiment_sum: number; sentiment_n: number }

function emptySums(): Sums {
  return { runs: 0, position_sum: 0, rr_sum: 0, sentiment_sum: 0, sentiment_n: 0 };
}

/** Adds one run's best mention of an entity. Callers feed runs in id order, so float sums are reproducible. */
function addMention(s: Sums, position: number, sentiment: number | null): void {
  s.runs += 1;
  s.position_sum += position;
  s.rr_sum += 1 / position;
  if (sentiment !== null) {
    s.sentiment_sum += sentiment;
    s.sentiment_n += 1;
  }
}

/**
 * Recomputes the aggregate rows of the buckets a batch touched, from the runs in each bucket.
 * Nothing is ever incremented: the rows are a function of the facts alone.
 */
export class Aggregator {
  private readonly bucketSql = 'project_id = @project_id AND engine_id = @engine_id AND day = @day AND prompt_id = @prompt_id';
  private readonly runBucketSql = `r.project_id = @project_id AND r.engine_id = @engine_id AND r.day = @day AND r.prompt_id = @prompt_id
    AND r.status = 'succeeded'`;
  private readonly runs;
  private readonly competitors;
  private readonly urls;
  private readonly clear;
  private readonly putPrompt;
  private readonly putCompetitor;
  private readonly putUrl;
  private readonly groupCounts;
  private readonly putGroup;
  private readonly clearGroup;

  constructor(db: Db) {
    const w = this.bucketSql;
    this.runs = db.prepare(`SELECT brand_position, brand_sentiment FROM prompt_runs WHERE ${w} AND status = 'succeeded' ORDER BY id`);
    const r = this.runBucketSql;
    this.competitors = db.prepare(`SELECT r.id AS run_id, m.competitor_id, m.position, m.sentiment
      FROM prompt_runs r JOIN run_mentions m ON m.prompt_run_id = r.id
      WHERE ${r} AND m.entity_type = 'competitor' AND m.competitor_id IS NOT NULL ORDER BY r.id, m.idx`);
    this.urls = db.prepare(`SELECT r.id AS run_id, c.url, c.domain, c.title, r.completed_at AS cited_at
      FROM prompt_runs r JOIN run_citations c ON c.prompt_run_id = r.id WHERE ${r} ORDER BY r.id, c.idx`);
    this.clear = ['agg_prompt_day', 'agg_competitor_day', 'agg_url_day'].map((t) => db.prepare(`DELETE FROM ${t} WHERE ${w}`));
    this.putPrompt = db.prepare(`INSERT INTO agg_prompt_day (project_id, day, engine_id, prompt_id, runs, brand_runs, position_sum, rr_sum, sentiment_sum, sentiment_n)
      VALUES (@project_id, @day, @engine_id, @prompt_id, @runs, @brand_runs, @position_sum, @rr_sum, @sentiment_sum, @sentiment_n)`);
    this.putCompetitor = db.prepare(`INSERT INTO agg_competitor_day (project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum, rr_sum, sentiment_sum, sentiment_n)
      VALUES (@project_id, @day, @engine_id, @prompt_id, @competitor_id, @runs, @position_sum, @rr_sum, @sentiment_sum, @sentiment_n)`);
    this.putUrl = db.prepare(`INSERT INTO agg_url_day (project_id, day, engine_id, prompt_id, url, domain, runs, first_at, last_at, title)
      VALUES (@project_id, @day, @engine_id, @prompt_id, @url, @domain, @runs, @first_at, @last_at, @title)`);
    this.groupCounts = db.prepare(`SELECT count(*) AS prompt_run_count,
        coalesce(sum(status = 'succeeded'), 0) AS succeeded_count, coalesce(sum(status = 'failed'), 0) AS failed_count
      FROM prompt_runs WHERE run_group_id = ?`);
    this.putGroup = db.prepare(`INSERT INTO agg_run_group (run_group_id, prompt_run_count, succeeded_count, failed_count)
      VALUES (?, @prompt_run_count, @succeeded_count, @failed_count)`);
    this.clearGroup = db.prepare('DELETE FROM agg_run_group WHERE run_group_id = ?');
  }

  recomputeBuckets(buckets: Iterable<Bucket>): void {
    const unique = new Map<string, Bucket>();
    for (const b of buckets) unique.set(bucketKey(b), b);
    for (const key of [...unique.keys()].sort()) this.recomputeBucket(unique.get(key)!);
  }

  recomputeRunGroups(ids: Iterable<string>): void {
    for (const id of [...new Set(ids)].sort()) {
      this.clearGroup.run(id);
      const counts = this.groupCounts.get(id) as { prompt_run_count: number };
      if (counts.prompt_run_count > 0) this.putGroup.run(id, counts);
    }
  }

  private recomputeBucket(b: Bucket): void {
    const key = { project_id: b.project_id, engine_id: b.engine_id, day: b.day, prompt_id: b.prompt_id };
    for (const c of this.clear) c.run(key);
    this.writePromptRow(key);
    this.writeCompetitorRows(key);
    this.writeUrlRows(key);
  }

  private writePromptRow(key: Bucket): void {
    const brand = emptySums();
    let runs = 0;
    for (const r of this.runs.iterate(key) as Iterable<RunRow>) {
      runs += 1;
      if (r.brand_position !== null) addMention(brand, r.brand_position, r.brand_sentiment);
    }
    if (runs === 0) return;
    this.putPrompt.run({ ...key, ...brand, runs, brand_runs: brand.runs });
  }

  /** Each competitor once per run, at its best position (the first of equal positions), summed in run-id order. */
  private writeCompetitorRows(key: Bucket): void {
    const best = new Map<string, CompetitorRow>();
    for (const m of this.competitors.iterate(key) as Iterable<CompetitorRow>) {
      const k = `${m.run_id}|${m.competitor_id}`;
      const seen = best.get(k);
      if (!seen || m.position < seen.position) best.set(k, m);
    }
    const byCompetitor = new Map<string, Sums>();
    for (const m of best.values()) {
      let s = byCompetitor.get(m.competitor_id);
      if (!s) byCompetitor.set(m.competitor_id, (s = emptySums()));
      addMention(s, m.position, m.sentiment);
    }
    for (const [competitor_id, s] of byCompetitor) this.putCompetitor.run({ ...key, competitor_id, ...s });
  }

  private writeUrlRows(key: Bucket): void {
    const byUrl = new Map<string, { url: string; domain: string; runs: number; first_at: string; last_at: string; title: string | null; title_at: string }>();
    const counted = new Set<string>();
    for (const r of this.urls.iterate(key) as Iterable<UrlRow>) {
      // A URL counts once per run, however often the answer cites it.
      const once = `${r.run_id}|${r.url}`;
      if (counted.has(once)) continue;
      counted.add(once);
      const u = byUrl.get(r.url);
      if (!u) {
        byUrl.set(r.url, { url: r.url, domain: r.domain, runs: 1, first_at: r.cited_at, last_at: r.cited_at, title: r.title, title_at: r.title ? r.cited_at : '' });
        continue;
      }
      u.runs += 1;
      if (r.cited_at < u.first_at) u.first_at = r.cited_at;
      if (r.cited_at > u.last_at) u.last_at = r.cited_at;
      // Latest titled citation wins; rows come in run-id order, so ties resolve the same way every time.
      if (r.title && r.cited_at >= u.title_at) {
        u.title = r.title;
        u.title_at = r.cited_at;
      }
    }
    for (const u of byUrl.values()) {
      this.putUrl.run({ ...key, url: u.url, domain: u.domain, runs: u.runs, first_at: u.first_at, last_at: u.last_at, title: u.title });
    }
  }
}
