// A webhook receiver over loopback that verifies every delivery twice: with the `standardwebhooks`
// package (the reference verifier of https://www.standardwebhooks.com) and by the spec's own steps,
// and a world whose brand mention rate moves (or not) between the last two complete 7-day periods.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedDay } from '../../src/deliver';
import { addDays } from '../../src/lib/time';
import { ev, id, run, W, world, type Ev } from './events';

interface StandardWebhook { verify(payload: string, headers: Record<string, string>): unknown }
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Webhook } = require('standardwebhooks') as { Webhook: new (secret: string) => StandardWebhook };

export interface Received {
  id: string;
  timestamp: number;
  body: { type: string; timestamp: string; data: Record<string, unknown> & { signal?: Record<string, unknown> } };
  raw: string;
}

export type Mode = 'ok' | 'fail' | 'hang';

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The spec's verification: v1 = base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes, timestamp within 5 minutes. */
export function verifyBySpec(secret: string, headers: http.IncomingHttpHeaders, body: string): boolean {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sigs = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof ts !== 'string' || typeof sigs !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update(`${id}.${ts}.${body}`).digest();
  return sigs.split(' ').some((s) => {
    const [v, sig] = s.split(',');
    const got = Buffer.from(sig ?? '', 'base64');
    return v === 'v1' && got.length === expected.length && timingSafeEqual(got, expected);
  });
}

export class Receiver {
  readonly received: Received[] = [];
  readonly unverified: string[] = [];
  /** The webhook-ids of requests left unanswered ('hang'). */
  readonly hung: string[] = [];
  mode: Mode = 'ok';
  private server: http.Server | null = null;
  port = 0;

  constructor(private readonly secret: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook?token=receiver-own-token`;
  }

  /** Distinct webhook-ids received (verified ones only). */
  ids(): Set<string> {
    return new Set(this.received.map((r) => r.id));
  }

  async listen(port = 0): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        let viaPackage = true;
        try {
          new Webhook(this.secret).verify(raw, headers);
        } catch {
          viaPackage = false;
        }
        if (!viaPackage || !verifyBySpec(this.secret, req.headers, raw)) {
          this.unverified.push(raw);
          res.writeHead(400).end();
          return;
        }
        if (this.mode === 'hang') {
          this.hung.push(headers['webhook-id']!);
          return; // never answers
        }
        this.received.push({ id: headers['webhook-id']!, timestamp: Number(headers['webhook-timestamp']), body: JSON.parse(raw) as Received['body'], raw });
        if (this.mode === 'fail') res.writeHead(503).end('down for maintenance');
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening: connections are refused until listen(this.port) again. */
  async close(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** The two periods a delivery made now tests: the current D-6..D and the previous D-13..D-7. */
export function periods(nowMs = Date.now(), graceMs = 0): { end: string; start: string; prevEnd: string; prevStart: string } {
  const end = closedDay(nowMs, graceMs);
  return { end, start: addDays(end, -6), prevEnd: addDays(end, -7), prevStart: addDays(end, -13) };
}

/**
 * W's world with 20 runs of prompt1 on engine A in each period, the brand named in `before` of them
 * then and in `after` of them now (18 vs 2: a signal in each slice of the brand; equal: none).
 */
export function plantedWorld(before: number, after: number, nowMs = Date.now()): Ev[] {
  const p = periods(nowMs);
  const events = world();
  let n = 1;
  for (const [start, named] of [[p.prevStart, before], [p.start, after]] as const) {
    for (let i = 0; i < 20; i++) events.push(run({ n: n++, day: addDays(start, i % 7), brand: i < named ? 1 : null }));
  }
  return events;
}

export function subscribed(hook: string, account: string, url: string, secret: string, events: string[] = ['signal.detected'], projectIds?: string[] | null, at = '2026-01-02T00:00:00Z'): Ev {
  return ev('webhook.subscribed', { id: hook, account_id: account, url, secret, events, ...(projectIds !== undefined ? { project_ids: projectIds } : {}) }, at);
}

export const HOOK = id(1, '12121212');
export const OTHER_HOOK = id(2, '12121212');
export { W };
