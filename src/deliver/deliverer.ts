// The deliverer: plans (plan.ts) and sends what the outbox holds, in the process that serves a
// database. Durable by the outbox: a message is written before its first attempt and marked delivered
// only after a 2xx, so a restart, or kill -9 mid-delivery, sends again what was not acknowledged (with
// the same webhook-id: receivers deduplicate by it). Retries back off exponentially with jitter until
// the retry period (24 h) has passed since the message was queued; then it is dead-lettered.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../lib/log';
import { openDb, openReadStore, type ReadStore } from '../store';
import { WebhookStore, type OutboxRow } from '../store/webhooks';
import { DEFAULT_GRACE_MS, planFeed, planSignals } from './plan';
import { post, TIMEOUT_MS } from './post';

export interface DelivererOptions {
  dbFile: string;
  logger: Logger;
  /** Loopback addresses (and plain http to them) allowed: tests and development only. */
  allowLoopback?: boolean;
  /** The first retry's delay; each next one doubles, up to MAX_RETRY_DELAY_MS, with jitter (default 5 s). */
  retryBaseMs?: number;
  /** How long after it was queued a message is retried before it is dead-lettered (default 24 h). */
  retryForMs?: number;
  /** How long after a UTC day closes it is tested (default 2 h). */
  graceMs?: number;
  /** How often subscriptions are planned (default 30 s). */
  planEveryMs?: number;
  /** How often the outbox is looked at for due messages (default 1 s). */
  tickMs?: number;
  timeoutMs?: number;
  /** Planning waits while this says the data is not caught up (a Kafka consumer's start). */
  ready?: () => boolean;
  /** Whether this replica is its shard's deliverer now (election.ts); absent: always (a single process). */
  leads?: () => boolean;
}

export const DEFAULT_RETRY_BASE_MS = 5000;
export const DEFAULT_RETRY_FOR_MS = 24 * 3600_000;
export const MAX_RETRY_DELAY_MS = 3600_000;
/** Messages sent at once. */
const PARALLEL = 8;

export type DeliveryOutcome = 'delivered' | 'failed' | 'dead' | 'refused' | 'cancelled';

/** The delay before retry `attempt` (1: the first retry): base * 2^(attempt-1), capped, times a jitter in [0.5, 1). */
export function retryDelay(attempt: number, baseMs: number, random = Math.random): number {
  const d = Math.min(baseMs * 2 ** Math.min(attempt - 1, 30), MAX_RETRY_DELAY_MS);
  return Math.round(d * (0.5 + random() / 2));
}

/** Only the scheme and host of a URL: its path or query may carry a token of the receiver's. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}

export class Deliverer {
  readonly outcomes: Record<DeliveryOutcome, number> = { delivered: 0, failed: 0, dead: 0, refused: 0, cancelled: 0 };
  private readonly hooks: WebhookStore;
  private readonly read: ReadStore;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastPlan = -Infinity;
  private readonly abort = new AbortController();
  private stopped = false;

  constructor(private readonly o: DelivererOptions) {
    this.hooks = new WebhookStore(openDb(o.dbFile, { mustExist: true }));
    this.read = openReadStore(o.dbFile);
  }

  start(): this {
    const loop = (): void => {
      this.timer = setTimeout(() => {
        this.running = this.tick().catch((err: unknown) => this.o.logger.error({ err }, 'webhooks: tick failed')).finally(() => {
          this.running = null;
          if (!this.stopped) loop();
        });
      }, this.o.tickMs ?? 1000);
    };
    loop();
    return this;
  }

  /** Whether any subscription is live. */
  hasSubscriptions(): boolean {
    return this.hooks.subscriptions().length > 0;
  }

  /** Plans when due, then sends every due message (PARALLEL at a time). */
  async tick(nowMs = Date.now()): Promise<void> {
    // Another replica of the shard delivers: this one neither plans nor sends (its outbox stays as it was).
    if (this.o.leads && !this.o.leads()) return;
    if (nowMs - this.lastPlan >= (this.o.planEveryMs ?? 30_000) && (this.o.ready?.() ?? true)) {
      this.lastPlan = nowMs;
      const signals = planSignals(this.read, this.hooks, nowMs, this.o.graceMs ?? DEFAULT_GRACE_MS);
      const changes = planFeed(this.read, this.hooks, nowMs);
      if (signals + changes > 0) this.o.logger.info({ signals, changes }, 'webhooks: queued');
    }
    for (;;) {
      if (this.stopped) return;
      const due = this.hooks.due(new Date(Math.max(nowMs, Date.now())).toISOString(), PARALLEL);
      if (due.length === 0) return;
      await Promise.all(due.map((row) => this.attempt(row)));
    }
  }

  private count(outcome: DeliveryOutcome): void {
    this.outcomes[outcome] += 1;
  }

  private async attempt(row: OutboxRow): Promise<void> {
    const now = (): string => new Date().toISOString();
    const sub = this.hooks.subscription(row.webhook_id);
    // What the subscription may no longer see is not sent: it ended, or its account lost the project.
    const gone = sub === undefined ? 'the subscription ended'
      : !this.hooks.sees(sub.account_id, row.project_id) || (sub.project_ids !== null && !sub.project_ids.includes(row.project_id)) ? "the project is no longer the subscription's" : null;
    if (gone !== null || sub === undefined) {
      this.hooks.finish(row.seq, 'cancelled', gone ?? '', now(), false);
      this.count('cancelled');
      return;
    }
    const a = await post(sub.url, sub.secret, row.message_id, row.payload, { allowLoopback: this.o.allowLoopback === true, timeoutMs: this.o.timeoutMs ?? TIMEOUT_MS, signal: this.abort.signal });
    if (this.stopped) return; // cut by stop(): still pending, sent again at the next start
    const log = { message_id: row.message_id, subscription_id: row.webhook_id, to: origin(sub.url), attempt: row.attempts + 1, result: a.detail };
    if (a.outcome === 'delivered') {
      this.hooks.finish(row.seq, 'delivered', a.detail, now(), true);
      this.count('delivered');
      return;
    }
    if (a.outcome === 'refused') {
      this.hooks.finish(row.seq, 'dead', `refused: ${a.detail}`, now(), true);
      this.count('refused');
      this.o.logger.warn(log, 'webhooks: delivery refused (dead-lettered)');
      return;
    }
    const next = Date.now() + retryDelay(row.attempts + 1, this.o.retryBaseMs ?? DEFAULT_RETRY_BASE_MS);
    if (next > Date.parse(row.created_at) + (this.o.retryForMs ?? DEFAULT_RETRY_FOR_MS)) {
      this.hooks.finish(row.seq, 'dead', a.detail, now(), true);
      this.count('dead');
      this.o.logger.warn(log, 'webhooks: delivery gave up (dead-lettered)');
      return;
    }
    this.hooks.retryAt(row.seq, a.detail, now(), new Date(next).toISOString());
    this.count('failed');
    this.o.logger.info({ ...log, next_attempt_at: new Date(next).toISOString() }, 'webhooks: delivery failed, will retry');
  }

  /** /metrics: deliveries by outcome, and the outbox's messages by status. */
  register(registry: Registry): void {
    const outcomes = this.outcomes;
    const hooks = this.hooks;
    new Counter({
      name: 'visibility_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (delivered, failed: retried later, dead: gave up, refused: address or URL not allowed, cancelled: not sent, the subscription or access ended)',
      labelNames: ['outcome'], registers: [registry],
      collect() {
        this.reset();
        for (const [outcome, n] of Object.entries(outcomes)) this.inc({ outcome }, n);
      },
    });
    new Gauge({
      name: 'visibility_webhook_outbox', help: 'Webhook messages in the outbox by status (dead: dead-lettered)', labelNames: ['status'], registers: [registry],
      collect() {
        this.reset();
        for (const [status, n] of Object.entries(hooks.counts())) this.set({ status }, n);
      },
    });
  }

  /** Stops: an attempt under way is cut (its message stays pending) and the connections closed. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
    this.hooks.close();
    this.read.close();
  }
}
