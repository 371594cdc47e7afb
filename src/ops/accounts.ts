import type { BodyCache, Builder } from '../serve';

/** One account's share of what the service shares, as operators see it (an account id, never a key). */
export interface AccountRow {
  /** Builds waiting for a thread, and in one, now. */
  queued: number;
  running: number;
  /** Builds so far and the ms they took. */
  builds: number;
  build_ms: number;
  /** Builds refused at the account's cap (answered stale, or 429). */
  refused: number;
  /** Bytes of the body cache charged to the account. */
  cache_bytes: number;
  /** Answers of 429 (rate limit, build cap) to the account's keys. */
  throttled: number;
}

export interface AccountFigures {
  rows(): Map<string, AccountRow>;
  /** What one account may hold when the cache is full (an equal part per account holding bodies). */
  fairShareBytes(): number;
  /** Builds waiting for a thread, all accounts. */
  queued(): number;
}

/** Counts the 429s answered per account (fed by the service's onResponse). */
export class Throttled {
  readonly byAccount = new Map<string, number>();

  observe(status: number, accountId: string | null | undefined): void {
    if (status === 429 && accountId) this.byAccount.set(accountId, (this.byAccount.get(accountId) ?? 0) + 1);
  }
}

/** The per-account figures of a service: its builder's ledger, its cache's shares, its 429s. */
export function accountFigures(builder: Builder, cache: BodyCache, throttled: Throttled): AccountFigures {
  return {
    rows() {
      const rows = new Map<string, AccountRow>();
      const row = (a: string): AccountRow => {
        let r = rows.get(a);
        if (!r) rows.set(a, (r = { queued: 0, running: 0, builds: 0, build_ms: 0, refused: 0, cache_bytes: 0, throttled: 0 }));
        return r;
      };
      for (const [a, b] of builder.accounts()) Object.assign(row(a), { queued: b.queued, running: b.running, builds: b.builds, build_ms: Math.round(b.buildMs), refused: b.refused });
      for (const [a, bytes] of cache.accountBytes()) row(a).cache_bytes = bytes;
      for (const [a, n] of throttled.byAccount) row(a).throttled = n;
      return new Map([...rows].sort((x, y) => (x[0] < y[0] ? -1 : 1)));
    },
    fairShareBytes: () => cache.fairShare(),
    queued() {
      let n = 0;
      for (const b of builder.accounts().values()) n += b.queued;
      return n;
    },
  };
}
