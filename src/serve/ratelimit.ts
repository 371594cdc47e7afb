import { HttpError } from './errors';

/**
 * Per-key token bucket: `rate` requests per second on average, bursts of up to 2 x rate.
 * Keyed by the key's hash. rate 0 turns it off.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly rate: number, private readonly now: () => number = () => performance.now()) {}

  /** Takes a token when one is there; false when the key is over its rate. */
  tryTake(keyHash: string): boolean {
    if (this.rate <= 0) return true;
    const b = this.refill(keyHash);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** The 429 for a key over its rate, with the seconds until a token is back. */
  exceeded(keyHash: string): HttpError {
    const b = this.refill(keyHash);
    const wait = Math.max(1, Math.ceil((1 - b.tokens) / this.rate));
    return new HttpError(429, `Rate limit of ${this.rate} requests per second per API key exceeded`, { 'Retry-After': String(wait) });
  }

  private refill(keyHash: string): { tokens: number; at: number } {
    const t = this.now();
    const burst = this.rate * 2;
    const b = this.buckets.get(keyHash) ?? { tokens: burst, at: t };
    b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * this.rate);
    b.at = t;
    this.buckets.set(keyHash, b);
    return b;
  }
}
