// One delivery attempt: the Standard Webhooks headers (https://www.standardwebhooks.com), a POST with
// a 10 s deadline, no redirect followed, at most 4 KiB of the answer read.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { addressProblem, guardedLookup, RefusedAddress } from './address';

export const TIMEOUT_MS = 10_000;
export const MAX_ANSWER_BYTES = 4096;

/** `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes (the base64 after whsec_). */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** delivered: a 2xx; failed: anything else worth a retry; refused: the URL or its address is not allowed (no retry). */
export interface Attempt {
  outcome: 'delivered' | 'failed' | 'refused';
  /** For the outbox and `visibility-api webhooks`: the status and the first bytes of the answer, or the error. */
  detail: string;
}

export interface SendOptions {
  allowLoopback: boolean;
  timeoutMs?: number;
  /** Aborts the attempt (the deliverer stops): the message stays pending. */
  signal?: AbortSignal;
}

/** Why the URL is refused before any connection, or null. */
export function urlProblem(url: string, allowLoopback: boolean): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && allowLoopback)) return `${u.protocol} URLs are not allowed: use https`;
  if (u.username !== '' || u.password !== '') return 'credentials in the URL are not allowed';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  // An address written in the URL is connected to without a lookup: checked here instead.
  if (net.isIP(host) !== 0) return addressProblem(host, allowLoopback, u.protocol === 'http:');
  return null;
}

/** POSTs `body` to `url`, signed with `secret` under webhook-id `id`. Never throws. */
export function post(url: string, secret: string, id: string, body: string, o: SendOptions): Promise<Attempt> {
  const problem = urlProblem(url, o.allowLoopback);
  if (problem !== null) return Promise.resolve({ outcome: 'refused', detail: problem });
  const u = new URL(url);
  const timestamp = Math.floor(Date.now() / 1000);
  const isHttp = u.protocol === 'http:';
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Attempt): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(a);
    };
    const req = (isHttp ? http : https).request(u, {
      method: 'POST',
      agent: false,
      lookup: guardedLookup(o.allowLoopback, isHttp) as unknown as net.LookupFunction,
      signal: o.signal,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'visibility-api-webhooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature(secret, id, timestamp, body),
      },
    }, (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let read = 0;
      const finish = (): void => {
        const answer = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').slice(0, 200);
        const ok = status >= 200 && status < 300;
        // A redirect is not followed (it could point anywhere, a private address included): a failure like any other.
        done({ outcome: ok ? 'delivered' : 'failed', detail: `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}${answer ? `: ${answer}` : ''}` });
        res.destroy();
      };
      res.on('data', (c: Buffer) => {
        if (read < MAX_ANSWER_BYTES) chunks.push(c.subarray(0, MAX_ANSWER_BYTES - read));
        read += c.length;
        if (read >= MAX_ANSWER_BYTES) finish(); // the rest is not read
      });
      res.on('end', finish);
      res.on('error', finish);
    });
    const deadline = setTimeout(() => {
      req.destroy();
      done({ outcome: 'failed', detail: `no answer within ${(o.timeoutMs ?? TIMEOUT_MS) / 1000} s` });
    }, o.timeoutMs ?? TIMEOUT_MS);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof RefusedAddress) done({ outcome: 'refused', detail: err.message });
      else done({ outcome: 'failed', detail: err.code ?? err.message });
    });
    req.end(body);
  });
}
