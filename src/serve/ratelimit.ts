import { httpError, type HttpError } from './errors';

/** The one quota policy's name in both fields (an sf-string, as draft -11 requires). */
export const POLICY_NAME = 'per-key';

/** Seconds a full bucket takes to refill from empty: the burst is twice the rate. */
const WINDOW_SECONDS = 2;

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
 * earlier than the end of the effective window.
 */
export class RateLimiter {
  /** False when the rate is 0. */
  readonly on: boolean;
  /** The RateLimit-Policy field value: the same on every response. '' when off. */
  readonly policy: string;
  private readonly burst: number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly rate: number, private readonly now: () => number = () => performance.now()) {
    this.on = rate > 0;
    this.burst = rate * WINDOW_SECONDS;
    this.policy = this.on ? `"${POLICY_NAME}";q=${Math.floor(this.burst)};w=${WINDOW_SECONDS}` : '';
  }

  /**
   * Charges the key one request: the RateLimit field value to answer with, or null when the key
   * is over its rate (answer with exceeded()). Only called when `on`.
   */
  take(keyHash: string): string | null {
    const b = this.refill(keyHash);
    if (b.tokens < 1) return null;
    b.tokens -= 1;
    return this.field(b.tokens);
  }

  /**
   * One request of the key: the two fields to answer with ({} when the limiter is off), or throws
   * the 429 when the key is over its rate.
   */
  charge(keyHash: string): Record<string, string> {
    if (!this.on) return {};
    const field = this.take(keyHash);
    if (field === null) throw this.exceeded(keyHash);
    return { 'RateLimit-Policy': this.policy, RateLimit: field };
  }

  /** The 429 for a key over its rate: Retry-After, and the fields saying r=0. */
  exceeded(keyHash: string): HttpError {
    const b = this.refill(keyHash);
    const field = this.field(b.tokens);
    return httpError('rate_limited', `Rate limit of ${this.rate} requests per second per API key exceeded`, {
      'Retry-After': String(Math.max(1, this.secondsToFull(b.tokens))),
      'RateLimit-Policy': this.policy,
      RateLimit: field,
    });
  }

  /** r is what take() would still grant (a take needs a whole token); t per the class comment. */
  private field(tokens: number): string {
    return `"${POLICY_NAME}";r=${Math.floor(tokens)};t=${this.secondsToFull(tokens)}`;
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
