import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BodyCache, RouteStats } from '../serve';
import { LatencyHistogram } from './latency';
import type { ThreadHeaps } from '../lib/thread-heap';
import type { AccountFigures, AccountRow } from './accounts';

/** Figures an ingest source reports (Kafka or a replay in the same process). */
export interface IngestFigures {
  applied: number;
  duplicate: number;
  stale: number;
  deadLettered: number;
  batches: number;
  /** Seconds each recent batch took to apply; drained by every scrape. */
  drainBatchSeconds(): number[];
  lag(): Array<{ topic: string; partition: number; lag: number }>;
}

export interface Metrics {
  registry: Registry;
  /** Called by the HTTP layer once per response. */
  observeRequest(route: string, status: number, seconds: number): void;
  render(): Promise<{ contentType: string; body: string }>;
}

/**
 * Prometheus metrics: request latency per route, the cache figures of /cache, and ingestion
 * (events by outcome, dead letters, lag per partition, batch apply time).
 */
/** A sharded service's figures: which shard, and the requests for projects another shard holds. */
export interface ShardFigures {
  name: string;
  partitions: number;
  misrouted(): number;
}

export function createMetrics(cache: BodyCache, ingest?: () => IngestFigures | null, threads?: ThreadHeaps, shard?: ShardFigures, accounts?: AccountFigures): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const latency = new LatencyHistogram('visibility_http_request_duration_seconds', 'Time to answer a request, by route and status',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]);
  latency.register(registry);
  const perRoute = (name: string, help: string, pick: (s: RouteStats) => number): void => {
    new Gauge({
      name, help, labelNames: ['route'], registers: [registry],
      collect() {
        this.reset();
        for (const [route, s] of cache.routes) this.set({ route }, pick(s));
      },
    });
  };
  perRoute('visibility_cache_hits', 'Cache hits by route', (s) => s.hits);
  perRoute('visibility_cache_kept', 'Of the hits, bodies the project\'s last commits did not change, sent as of the new data version without a build, by route', (s) => s.kept);
  perRoute('visibility_cache_misses', 'Cache misses by route', (s) => s.misses);
  perRoute('visibility_cache_builds', 'Bodies built (read model run, validated, serialized, compressed) by route', (s) => s.builds);
  new Gauge({ name: 'visibility_cache_entries', help: 'Bodies in the cache', registers: [registry], collect() { this.set(cache.lru.size); } });
  new Gauge({ name: 'visibility_cache_bytes', help: 'Bytes held by the cache', registers: [registry], collect() { this.set(cache.lru.calculatedSize); } });
  new Gauge({ name: 'visibility_cache_max_bytes', help: 'CACHE_MAX_BYTES', registers: [registry], collect() { this.set(cache.maxBytes); } });
  new Gauge({ name: 'visibility_cache_evictions', help: 'Bodies evicted to stay within CACHE_MAX_BYTES', registers: [registry], collect() { this.set(cache.evictions); } });
  if (accounts) registerAccounts(registry, accounts);
  if (ingest) registerIngest(registry, ingest);
  if (shard) {
    new Gauge({
      name: 'visibility_shard_info', help: 'The shard this process holds (K/N) and the partition count of the events topics', labelNames: ['shard', 'partitions'],
      registers: [registry], collect() { this.set({ shard: shard.name, partitions: String(shard.partitions) }, 1); },
    });
    new Counter({
      name: 'visibility_shard_misrouted_total', help: 'Requests for a project another shard holds (answered 404): the router and the shards disagree',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(shard.misrouted());
      },
    });
  }
  if (threads) {
    new Gauge({
      name: 'visibility_thread_heap_bytes', help: 'V8 heap of each worker thread (build, ingest), used, total and its limit, as it last reported (every 5 s)',
      labelNames: ['thread', 'kind'], registers: [registry],
      collect() {
        this.reset();
        for (const h of threads.list()) {
          this.set({ thread: h.thread, kind: 'used' }, h.used);
          this.set({ thread: h.thread, kind: 'total' }, h.total);
          this.set({ thread: h.thread, kind: 'limit' }, h.limit);
        }
      },
    });
  }
  return {
    registry,
    observeRequest: (route, status, seconds) => latency.observe(route, status, seconds),
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}

function registerIngest(registry: Registry, ingest: () => IngestFigures | null): void {
  new Gauge({
    name: 'visibility_ingest_events', help: 'Events taken in, by outcome (applied, duplicate, stale, dead_lettered)',
    labelNames: ['outcome'], registers: [registry],
    collect() {
      const f = ingest();
      if (!f) return;
      this.set({ outcome: 'applied' }, f.applied);
      this.set({ outcome: 'duplicate' }, f.duplicate);
      this.set({ outcome: 'stale' }, f.stale);
      this.set({ outcome: 'dead_lettered' }, f.deadLettered);
    },
  });
  new Gauge({
    name: 'visibility_ingest_dead_letters', help: 'Events sent to the dead letters', registers: [registry],
    collect() { this.set(ingest()?.deadLettered ?? 0); },
  });
  new Gauge({
    name: 'visibility_kafka_consumer_lag', help: 'Messages behind the high watermark, by topic and partition',
    labelNames: ['topic', 'partition'], registers: [registry],
    collect() {
      this.reset();
      for (const l of ingest()?.lag() ?? []) this.set({ topic: l.topic, partition: String(l.partition) }, l.lag);
    },
  });
  new Histogram({
    name: 'visibility_ingest_batch_apply_seconds', help: 'Time to apply one batch (one SQLite transaction)', registers: [registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    // Observed when scraped, before this histogram is written out.
    collect() {
      for (const s of ingest()?.drainBatchSeconds() ?? []) this.observe(s);
    },
  });
  new Counter({
    name: 'visibility_ingest_batches_total', help: 'Batches applied', registers: [registry],
    collect() {
      const f = ingest();
      if (!f) return;
      this.reset();
      this.inc(f.batches);
    },
  });
}

/**
 * What each account takes of what accounts share (fair sharing: builders.ts, cache.ts, ratelimit.ts),
 * labelled by account id (never a key): build time, builds waiting and running, refusals at the cap,
 * cache bytes, 429s. One series per account seen since the start.
 */
function registerAccounts(registry: Registry, accounts: AccountFigures): void {
  const perAccount = (name: string, help: string, pick: (r: AccountRow) => number): void => {
    new Gauge({
      name, help, labelNames: ['account'], registers: [registry],
      collect() {
        this.reset();
        for (const [account, r] of accounts.rows()) this.set({ account }, pick(r));
      },
    });
  };
  perAccount('visibility_account_build_seconds', 'Time spent building bodies for the account (its requests\' cache misses and rebuilds), in seconds', (r) => r.build_ms / 1000);
  perAccount('visibility_account_builds', 'Bodies built for the account', (r) => r.builds);
  perAccount('visibility_account_builds_queued', 'The account\'s builds waiting for a build thread now', (r) => r.queued);
  perAccount('visibility_account_builds_running', 'The account\'s builds in a build thread now', (r) => r.running);
  perAccount('visibility_account_builds_refused', 'Builds refused because the account had --max-builds-per-account queued or running (answered stale, or 429)', (r) => r.refused);
  perAccount('visibility_account_cache_bytes', 'Bytes of the body cache charged to the account', (r) => r.cache_bytes);
  perAccount('visibility_account_throttled', 'Requests of the account answered 429 (rate limit or build cap)', (r) => r.throttled);
  new Gauge({ name: 'visibility_builds_queued', help: 'Builds waiting for a build thread, all accounts', registers: [registry], collect() { this.set(accounts.queued()); } });
  new Gauge({ name: 'visibility_cache_fair_share_bytes', help: 'What one account may hold of a full cache before its own bodies are evicted first', registers: [registry], collect() { this.set(accounts.fairShareBytes()); } });
}
