import type { Statement } from 'better-sqlite3';
import type { Db } from './db';

/**
 * Pushed signals (migration 021): the subscriptions the projector keeps from webhook.* events, and
 * the deliverer's durable outbox. Every message is written here before its first attempt and is
 * marked delivered only after a 2xx, so a restart (or kill -9) resends what was not acknowledged.
 */

/** A live subscription. `secret` is the whsec_ text: handed to the signer, never to a log or a body. */
export interface Subscription {
  id: string;
  account_id: string;
  /** null: every project the account sees. */
  project_ids: string[] | null;
  url: string;
  secret: string;
  events: string[];
}

export type OutboxStatus = 'pending' | 'delivered' | 'dead' | 'cancelled';

export interface OutboxRow {
  seq: number;
  message_id: string;
  webhook_id: string;
  project_id: string;
  type: string;
  payload: string;
  created_at: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: string;
  last_attempt_at: string | null;
  last_result: string | null;
  done_at: string | null;
}

/** A subscription as `visibility-api webhooks` lists it: no secret. */
export interface ListedSubscription {
  id: string;
  account_id: string | null;
  project_ids: string[] | null;
  url: string | null;
  events: string[];
  deleted: boolean;
}

/** A message to queue: its webhook-id, type and JSON body. */
export interface Message {
  message_id: string;
  type: string;
  payload: string;
}

interface SubscriptionRow { id: string; account_id: string; project_ids: string | null; url: string; secret: string; events: string }

/** Projects an account sees (as src/store/reads/catalog.ts VISIBLE_PROJECTS): owned or shared, not deleted. */
const VISIBLE = `SELECT p.id FROM projects p
  WHERE p.deleted = 0 AND p.name IS NOT NULL AND (p.company_id = @account
    OR EXISTS (SELECT 1 FROM project_access g WHERE g.project_id = p.id AND g.account_id = @account AND g.granted = 1))
  ORDER BY p.id`;

const parseList = (text: string | null): string[] | null => (text === null ? null : (JSON.parse(text) as string[]));

export class WebhookStore {
  private readonly stmts: Record<string, Statement>;
  private readonly queueTx;

  constructor(private readonly db: Db) {
    this.stmts = {
      live: db.prepare('SELECT id, account_id, project_ids, url, secret, events FROM webhooks WHERE deleted = 0 ORDER BY id'),
      one: db.prepare('SELECT id, account_id, project_ids, url, secret, events FROM webhooks WHERE id = ? AND deleted = 0'),
      listed: db.prepare('SELECT id, account_id, project_ids, url, events, deleted FROM webhooks ORDER BY deleted, id'),
      visible: db.prepare(VISIBLE).pluck(),
      sees: db.prepare(`SELECT 1 FROM projects p WHERE p.id = @project AND p.deleted = 0 AND p.name IS NOT NULL AND (p.company_id = @account
        OR EXISTS (SELECT 1 FROM project_access g WHERE g.project_id = p.id AND g.account_id = @account AND g.granted = 1))`).pluck(),
      tested: db.prepare('SELECT 1 FROM webhook_tested WHERE webhook_id = ? AND project_id = ? AND end_date = ?').pluck(),
      markTested: db.prepare('INSERT OR IGNORE INTO webhook_tested (webhook_id, project_id, end_date, tested_at) VALUES (?, ?, ?, ?)'),
      enqueue: db.prepare(`INSERT OR IGNORE INTO webhook_outbox (message_id, webhook_id, project_id, type, payload, created_at, next_attempt_at)
        VALUES (@message_id, @webhook_id, @project_id, @type, @payload, @now, @now)`),
      feedMark: db.prepare('SELECT version, queued_at FROM webhook_feed WHERE webhook_id = ? AND project_id = ?'),
      setFeed: db.prepare(`INSERT INTO webhook_feed (webhook_id, project_id, version, queued_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (webhook_id, project_id) DO UPDATE SET version = excluded.version, queued_at = excluded.queued_at`),
      due: db.prepare("SELECT * FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?"),
      nextDue: db.prepare("SELECT min(next_attempt_at) FROM webhook_outbox WHERE status = 'pending'").pluck(),
      finish: db.prepare(`UPDATE webhook_outbox SET status = @status, attempts = attempts + @attempted, last_attempt_at = coalesce(@at, last_attempt_at),
        last_result = @result, done_at = @now WHERE seq = @seq AND status = 'pending'`),
      retry: db.prepare(`UPDATE webhook_outbox SET attempts = attempts + 1, last_attempt_at = @now, last_result = @result, next_attempt_at = @next
        WHERE seq = @seq AND status = 'pending'`),
      recent: db.prepare('SELECT * FROM webhook_outbox ORDER BY seq DESC LIMIT ?'),
      counts: db.prepare('SELECT status, count(*) AS n FROM webhook_outbox GROUP BY status'),
    };
    this.queueTx = db.transaction((fn: () => void) => fn()).immediate;
  }

  /** The live subscriptions, by id. */
  subscriptions(): Subscription[] {
    return (this.stmts.live.all() as SubscriptionRow[]).map(toSubscription);
  }

  /** A live subscription, or undefined once it was unsubscribed (or never was). */
  subscription(id: string): Subscription | undefined {
    const row = this.stmts.one.get(id) as SubscriptionRow | undefined;
    return row && toSubscription(row);
  }

  /** Every subscription, live first, without the secrets. */
  listed(): ListedSubscription[] {
    return (this.stmts.listed.all() as Array<Omit<SubscriptionRow, 'secret'> & { deleted: number }>).map((r) => ({
      id: r.id, account_id: r.account_id, project_ids: parseList(r.project_ids), url: r.url, events: parseList(r.events) ?? [], deleted: r.deleted === 1,
    }));
  }

  /** The projects the subscription watches now: those its account sees, narrowed to its project_ids. */
  watched(s: Subscription): string[] {
    const seen = this.stmts.visible.all({ account: s.account_id }) as string[];
    if (s.project_ids === null) return seen;
    const asked = new Set(s.project_ids);
    return seen.filter((p) => asked.has(p));
  }

  /** Whether the account sees the project now (a revoked share or a deleted project: no). */
  sees(accountId: string, projectId: string): boolean {
    return this.stmts.sees.get({ account: accountId, project: projectId }) !== undefined;
  }

  isTested(webhookId: string, projectId: string, endDate: string): boolean {
    return this.stmts.tested.get(webhookId, projectId, endDate) !== undefined;
  }

  /** The period's test is done: its messages queued (a message queued before is not queued again) and the period marked, in one commit. */
  queueTested(webhookId: string, projectId: string, endDate: string, messages: readonly Message[], now: string): number {
    let queued = 0;
    this.queueTx(() => {
      for (const m of messages) queued += this.stmts.enqueue.run({ ...m, webhook_id: webhookId, project_id: projectId, now }).changes;
      this.stmts.markTested.run(webhookId, projectId, endDate, now);
    });
    return queued;
  }

  /** The change-feed version last queued (or taken as the start) for a subscription's project. */
  feedMark(webhookId: string, projectId: string): { version: number; queued_at: string } | undefined {
    return this.stmts.feedMark.get(webhookId, projectId) as { version: number; queued_at: string } | undefined;
  }

  /** Moves the feed mark, queueing `message` with it (none: the mark only, a subscription's start). */
  queueFeed(webhookId: string, projectId: string, version: number, message: Message | null, now: string, markedAt = now): void {
    this.queueTx(() => {
      if (message !== null) this.stmts.enqueue.run({ ...message, webhook_id: webhookId, project_id: projectId, now });
      this.stmts.setFeed.run(webhookId, projectId, version, markedAt);
    });
  }

  /** Pending messages whose next attempt is due at `now`, soonest first. */
  due(now: string, limit: number): OutboxRow[] {
    return this.stmts.due.all(now, limit) as OutboxRow[];
  }

  /** When the soonest pending message is due; null when none is pending. */
  nextDue(): string | null {
    return (this.stmts.nextDue.get() as string | null) ?? null;
  }

  /** An attempt ended the message: delivered (2xx), dead (gave up, or refused), cancelled (not sent: the subscription or the access ended). */
  finish(seq: number, status: Exclude<OutboxStatus, 'pending'>, result: string, now: string, attempted: boolean): void {
    this.stmts.finish.run({ seq, status, result, now, at: attempted ? now : null, attempted: attempted ? 1 : 0 });
  }

  /** An attempt failed: the next one at `next`. */
  retryAt(seq: number, result: string, now: string, next: string): void {
    this.stmts.retry.run({ seq, result, now, next });
  }

  /** The newest messages, newest first. */
  recent(limit: number): OutboxRow[] {
    return this.stmts.recent.all(limit) as OutboxRow[];
  }

  /** Messages by status. */
  counts(): Record<OutboxStatus, number> {
    const out: Record<OutboxStatus, number> = { pending: 0, delivered: 0, dead: 0, cancelled: 0 };
    for (const r of this.stmts.counts.all() as Array<{ status: OutboxStatus; n: number }>) out[r.status] = r.n;
    return out;
  }

  close(): void {
    this.db.close();
  }
}

function toSubscription(r: SubscriptionRow): Subscription {
  return { id: r.id, account_id: r.account_id, project_ids: parseList(r.project_ids), url: r.url, secret: r.secret, events: parseList(r.events) ?? [] };
}
