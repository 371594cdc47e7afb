import { HttpError } from './errors';

/**
 * Per-key token bucket: `rate` requests per second on average, bursts of up to 2 x rate.
 * Keyed by the key's hash. rate 0 turns it off.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly rate: number, private readonly now: () => number = () => performance.now()) {}

  take(keyHash: string): void {
    if (this.rate <= 0) return;
    const t = this.now();
    const burst = this.rate * 2;
    const b = this.buckets.get(keyHash) ?? { tokens: burst, at: t };
    b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * this.rate);
    b.at = t;
    this.buckets.set(keyHash, b);
    if (b.tokens < 1) {
      const wait = Math.max(1, Math.ceil((1 - b.tokens) / this.rate));
      throw new HttpError(429, `Rate limit of ${this.rate} requests per second per API key exceeded`, { 'Retry-After': String(wait) });
    }
    b.tokens -= 1;
  }
}
