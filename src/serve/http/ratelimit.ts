import { httpError, type HttpError } from '../request/errors';

/** The one quota policy's name in both fields (an sf-string, as draft -11 requires). */
export const POLICY_NAME = 'per-key';

/** Seconds a full bucket takes to refill from empty: the burst is twice the rate. */
const WINDOW_SECONDS = 2;

/**
 * The rate `serve` runs with unless told (--rate-limit, RATE_LIMIT; 0 turns it off): requests a
 * second per key, bursts of twice that. The dashboard's first load (a dozen bodies, most built cold)
 * costs well under one burst; a client polling a few reports every second never meets it; a key
 * flooding expensive reports does, within a second or two.
 */
export const DEFAULT_RATE_LIMIT = 50;

/**
 * A build costs one request more per this many ms it took (as its build thread measured it). The
 * ordinary builds (a few ms to a few tens) cost nothing more than their request; a year of signals
 * (~1.5 s) costs 30 more.
 */
export const BUILD_MS_PER_REQUEST = 50;
/** An answer costs one request more per this many bytes of its JSON (before compression). */
export const BYTES_PER_REQUEST = 128 * 1024;

/**
 * What an answer costs beyond its one request: the build it waited for (0 ms for a cached body) and
 * its bytes. A plain hit or a small, quick build costs exactly one request.
 */
export function extraCost(buildMs: number, bytes: number): number {
  return Math.floor(buildMs / BUILD_MS_PER_REQUEST) + Math.floor(bytes / BYTES_PER_REQUEST);
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Per-key token bucket: `rate` requests per second on average, bursts of up to 2 x rate. Keyed by
 * the key's hash, and only ever asked about keys that authenticated, so an unknown key costs no
 * memory. rate 0 turns it off: no limit and no RateLimit fields (there is no policy to describe).
 *
 * The IETF fields (draft-ietf-httpapi-ratelimit-headers-11) describe the bucket this way:
 *   RateLimit-Policy: "per-key";q=<2 x rate>;w=2   the bucket holds q requests and refills from
 *                                                   empty in w seconds, so q/w is the rate
 *   RateLimit: "per-key";r=<R>;t=<T>               R: whole requests left after this one;
 *                                                   T: seconds until the bucket is full again (r = q), rounded up
 * A client that spends at most r in the next t seconds is never turned away, and has q again after t.
 * A 429 says r=0 and has Retry-After equal to its t: the draft asks that Retry-After not point
 * earlier than the end of the effective window. A JSON-RPC batch on POST /mcp costs one request per
 * message (mcp.ts): its 429 can say r>0, the requests left, which are fewer than the batch needed.
 */
export class RateLimiter {
  /** False when the rate is 0. */
  readonly on: boolean;
  /** The RateLimit-Policy field value: the same on every response. '' when off. */
  readonly policy: string;
  /** The most requests a key may send at once (q): twice the rate. */
  readonly burst: number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly rate: number, private readonly now: () => number = () => performance.now()) {
    this.on = rate > 0;
    this.burst = rate * WINDOW_SECONDS;
    this.policy = this.on ? `"${POLICY_NAME}";q=${Math.floor(this.burst)};w=${WINDOW_SECONDS}` : '';
  }

  /**
   * Charges the key `cost` requests (one, or one per message of a JSON-RPC batch): the RateLimit
   * field value to answer with, or null when fewer than `cost` are left (nothing is charged then:
   * answer with exceeded()). Only called when `on`.
   */
  take(keyHash: string, cost = 1, after = 0): string | null {
    const b = this.refill(keyHash);
    if (b.tokens < cost) return null;
    this.spend(b, cost + after);
    return this.field(b.tokens);
  }

  /** Whether take(keyHash, cost) would refuse, without charging anything. Only called when `on`. */
  short(keyHash: string, cost = 1): boolean {
    return this.refill(keyHash).tokens < cost;
  }

  /**
   * Charges what an answer cost once it is known (its build, its bytes: extraCost), without turning
   * it away: the bucket may go below empty, down to minus one burst, and the key's next requests
   * wait for it to refill. The RateLimit field value after it ('' when off).
   */
  debit(keyHash: string, cost: number): string {
    if (!this.on) return '';
    const b = this.refill(keyHash);
    this.spend(b, cost);
    return this.field(b.tokens);
  }

  /** Debt is bounded: one answer, however costly, keeps its key waiting at most two windows. */
  private spend(b: Bucket, cost: number): void {
    b.tokens = Math.max(-this.burst, b.tokens - cost);
  }

  /**
   * `cost` requests of the key: the two fields to answer with ({} when the limiter is off), or
   * throws the 429 when fewer than `cost` are left (`detail` ends its message: what needed them).
   */
  charge(keyHash: string, cost = 1, detail?: string): Record<string, string> {
    if (!this.on) return {};
    const field = this.take(keyHash, cost);
    if (field === null) throw this.exceeded(keyHash, detail);
    return { 'RateLimit-Policy': this.policy, RateLimit: field };
  }

  /**
   * The 429 for a key over its rate: Retry-After, and the fields saying what is left (r=0 for a
   * single request). `detail` ends the message (e.g. what a batch costs).
   */
  exceeded(keyHash: string, detail?: string): HttpError {
    const { retryAfter, field } = this.refusal(keyHash);
    const message = `Rate limit of ${this.rate} requests per second per API key exceeded${detail === undefined ? '' : `: ${detail}`}`;
    return httpError('rate_limited', message, { 'Retry-After': retryAfter, 'RateLimit-Policy': this.policy, RateLimit: field });
  }

  /**
   * The two values of exceeded()'s headers that follow the key's bucket, alone: the hot path answers
   * a flood's 429s from one prepared answer with only these written in (hot.ts).
   */
  refusal(keyHash: string): { retryAfter: string; field: string } {
    const b = this.refill(keyHash);
    return { retryAfter: String(Math.max(1, this.secondsToFull(b.tokens))), field: this.field(b.tokens) };
  }

  /** r is what take() would still grant (a take needs a whole token); t per the class comment. */
  private field(tokens: number): string {
    return `"${POLICY_NAME}";r=${Math.max(0, Math.floor(tokens))};t=${this.secondsToFull(tokens)}`;
  }

  private secondsToFull(tokens: number): number {
    return Math.ceil((this.burst - tokens) / this.rate);
  }

  private refill(keyHash: string): Bucket {
    const t = this.now();
    let b = this.buckets.get(keyHash);
    if (b === undefined) this.buckets.set(keyHash, (b = { tokens: this.burst, at: t }));
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.rate);
    b.at = t;
    return b;
  }
}
