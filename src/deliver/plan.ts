// What is queued. Signals: once per closed period, not at every change. When a UTC day D has closed
// and its late runs have had the grace time, each watched project's days D-6..D are compared with
// D-13..D-7 exactly as GET /signals?start_date=D-6&end_date=D does (the same read model, so the same
// numbers), and each signal found is queued once. The change feed: a project whose data version moved
// is queued as data.changed, coalesced to at most one message a minute a project.
import { createHash } from 'node:crypto';
import type { Signal, Signals } from '../readmodels/bodies.gen';
import type { ReadArgs } from '../readmodels';
import { endpoint as signalsEndpoint } from '../readmodels/endpoints/signals';
import { addDays } from '../lib/time';
import { changesAfter, projectVersions, type ReadStore } from '../store';
import type { Message, Subscription, WebhookStore } from '../store/webhooks';
import { queryArgs } from '../serve/request/params';

/** The days a tested period holds (and the period before it). */
export const PERIOD_DAYS = 7;
/** How long after a UTC day closes its runs may still arrive before the day is tested (default of --webhooks-grace). */
export const DEFAULT_GRACE_MS = 2 * 3600_000;
/** data.changed: at most one message a project a minute. */
export const FEED_COALESCE_MS = 60_000;

const DAY_MS = 86_400_000;

/** The last UTC day that has closed and had its grace time at `nowMs`. */
export function closedDay(nowMs: number, graceMs: number): string {
  const d = new Date(Math.floor((nowMs - graceMs) / DAY_MS) * DAY_MS - DAY_MS);
  return d.toISOString().slice(0, 10);
}

/** A webhook-id: the same for the same message whoever queues it and however often (the receiver's dedup key). */
function messageId(...parts: Array<string | number | null>): string {
  return `msg_${createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 27)}`;
}

/** GET /signals?start_date=D-6&end_date=D for the subscription's account, built by the read model itself. */
export function periodSignals(read: ReadStore, accountId: string, projectId: string, endDate: string): Signals {
  const q = queryArgs({ start_date: addDays(endDate, -(PERIOD_DAYS - 1)), end_date: endDate }, signalsEndpoint, PERIOD_DAYS);
  const args: ReadArgs = { ...q, accountId, projectId, runGroupId: '', windowDays: PERIOD_DAYS };
  return signalsEndpoint.build(read, args) as Signals;
}

/** A project's period as every subscription to it is sent it: the /signals body and the versions it was read at. */
interface Tested {
  body: Signals;
  version: number;
  asOf: string | null;
}

/** GET /signals for the period and the project's versions, in one read snapshot. */
function testPeriod(read: ReadStore, accountId: string, projectId: string, endDate: string): Tested {
  return read.snapshot(() => {
    const v = projectVersions(read, projectId);
    return { body: periodSignals(read, accountId, projectId, endDate), version: v.version, asOf: v.data_as_of };
  });
}

/** The signal.detected messages of one project's period, for one subscription. */
function signalMessages(t: Tested, s: Subscription, projectId: string, endDate: string, now: string): Message[] {
  const body = t.body;
  return body.signals.map((signal: Signal) => {
    const id = messageId(s.id, projectId, endDate, signal.entity_type, signal.competitor_id, signal.engine_id, signal.segment_id, signal.country);
    const payload = {
      type: 'signal.detected',
      timestamp: now,
      data: {
        subscription_id: s.id,
        project_id: projectId,
        start_date: body.start_date, end_date: body.end_date,
        compare_start_date: body.compare_start_date, compare_end_date: body.compare_end_date,
        slices_tested: body.slices_tested, slices_skipped: body.slices_skipped, min_runs: body.min_runs,
        false_discovery_rate: body.false_discovery_rate,
        data_version: t.version, data_as_of: t.asOf,
        signal,
      },
    };
    return { message_id: id, type: 'signal.detected', payload: JSON.stringify(payload) };
  });
}

/** Tests each watched project's newest closed period that was not tested yet for each subscription; returns the messages queued. */
export function planSignals(read: ReadStore, hooks: WebhookStore, nowMs: number, graceMs: number): number {
  const endDate = closedDay(nowMs, graceMs);
  const now = new Date(nowMs).toISOString();
  // A project watched by several subscriptions is tested once a plan: the body does not depend on who asks.
  const tested = new Map<string, Tested>();
  let queued = 0;
  for (const s of hooks.subscriptions()) {
    if (!s.events.includes('signal.detected')) continue;
    for (const projectId of hooks.watched(s)) {
      if (hooks.isTested(s.id, projectId, endDate)) continue;
      let t = tested.get(projectId);
      if (t === undefined) tested.set(projectId, (t = testPeriod(read, s.account_id, projectId, endDate)));
      queued += hooks.queueTested(s.id, projectId, endDate, signalMessages(t, s, projectId, endDate, now), now);
    }
  }
  return queued;
}

/**
 * data.changed: a watched project whose data version moved since the last message (or since the
 * subscription's start, which sends nothing) and whose last message is a minute old or more.
 */
export function planFeed(read: ReadStore, hooks: WebhookStore, nowMs: number, coalesceMs = FEED_COALESCE_MS): number {
  const now = new Date(nowMs).toISOString();
  let queued = 0;
  for (const s of hooks.subscriptions()) {
    if (!s.events.includes('data.changed')) continue;
    for (const projectId of hooks.watched(s)) {
      const v = projectVersions(read, projectId);
      const mark = hooks.feedMark(s.id, projectId);
      if (mark === undefined) {
        // The start: nothing sent, and the first change after it is not held back by the minute.
        hooks.queueFeed(s.id, projectId, v.version, null, now, new Date(0).toISOString());
        continue;
      }
      if (v.version <= mark.version || nowMs - Date.parse(mark.queued_at) < coalesceMs) continue;
      const kinds = new Set<string>();
      for (const c of changesAfter(read, projectId, mark.version, 1000)) for (const k of c.kinds) kinds.add(k);
      const payload = {
        type: 'data.changed',
        timestamp: now,
        data: { subscription_id: s.id, project_id: projectId, data_version: v.version, previous_data_version: mark.version, kinds: [...kinds].sort(), data_as_of: v.data_as_of },
      };
      hooks.queueFeed(s.id, projectId, v.version, { message_id: messageId(s.id, projectId, 'changed', v.version), type: 'data.changed', payload: JSON.stringify(payload) }, now);
      queued += 1;
    }
  }
  return queued;
}
