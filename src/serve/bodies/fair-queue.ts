/**
 * Waiting work shared fairly: one queue per account, and within it one per project. Accounts are
 * served by the time their work has taken (start-time fair queuing): the account that has used the
 * least goes next, ties in turn, so an account whose builds are quick is not held behind another
 * account whose builds take seconds, and an account waiting for one item is never behind another
 * account's backlog. Every item counts at least QUANTUM_MS, so quick items of several accounts
 * take turns (round robin). An account that had nothing waiting starts level with the work in hand
 * (the system's virtual time): idle time is not saved up. Within an account its projects take turns.
 *
 * Two tiers: every cold item (a request waits for it) is taken before any background item (a
 * stale-while-revalidate rebuild, whose request was already answered), so a rebuild is behind its
 * own account's cold items and never ahead of another account's.
 */

/** What an item counts at least, in ms: quick builds of several accounts then simply take turns. */
export const QUANTUM_MS = 20;

interface ProjectQueue<T> {
  project: string;
  items: T[];
}

/** One account's items of one tier: its projects in the order they are served. */
interface AccountQueue<T> {
  account: string;
  projects: Array<ProjectQueue<T>>;
  /** The project whose turn is next. */
  next: number;
  size: number;
}

/** Accounts of one tier, served round robin. */
class Tier<T> {
  private readonly accounts: Array<AccountQueue<T>> = [];
  private readonly byAccount = new Map<string, AccountQueue<T>>();
  /** The account whose turn is next. */
  private next = 0;
  size = 0;

  push(account: string, project: string, item: T): void {
    let a = this.byAccount.get(account);
    if (!a) {
      a = { account, projects: [], next: 0, size: 0 };
      this.byAccount.set(account, a);
      // Placed before the account whose turn is next: among accounts that have used as much, it goes first.
      this.accounts.splice(this.next, 0, a);
    }
    let p = a.projects.find((q) => q.project === project);
    if (!p) {
      p = { project, items: [] };
      a.projects.splice(a.next, 0, p);
    }
    p.items.push(item);
    a.size += 1;
    this.size += 1;
  }

  /**
   * The next item that `accept` takes: of the accounts with one, the least served (`served`), ties
   * in turn from the account after the last served; within it, its projects in turn. Undefined when none is.
   */
  take(accept: (item: T) => boolean, served: (account: string) => number, taken: (account: string) => void): T | undefined {
    const n = this.accounts.length;
    let best = -1;
    let bestServed = Infinity;
    for (let i = 0; i < n; i++) {
      const ai = (this.next + i) % n;
      const a = this.accounts[ai]!;
      const s = served(a.account);
      if (s < bestServed && a.projects.some((p) => p.items.some(accept))) {
        best = ai;
        bestServed = s;
      }
    }
    if (best < 0) return undefined;
    const ai = best;
    const a = this.accounts[ai]!;
    const m = a.projects.length;
    for (let j = 0; j < m; j++) {
      const pi = (a.next + j) % m;
      const p = a.projects[pi]!;
      const k = p.items.findIndex(accept);
      if (k < 0) continue;
      const [item] = p.items.splice(k, 1);
      taken(a.account);
      a.size -= 1;
      this.size -= 1;
      // The next turn goes to the project (and account) after this one.
      if (p.items.length === 0) a.projects.splice(pi, 1);
      a.next = a.projects.length === 0 ? 0 : (p.items.length === 0 ? pi : pi + 1) % a.projects.length;
      if (a.size === 0) {
        this.accounts.splice(ai, 1);
        this.byAccount.delete(a.account);
        this.next = this.accounts.length === 0 ? 0 : ai % this.accounts.length;
      } else {
        this.next = (ai + 1) % this.accounts.length;
      }
      return item;
    }
    return undefined;
  }

  /** Whether the account has items waiting in this tier. */
  has(account: string): boolean {
    return this.byAccount.has(account);
  }



  /** Every item, emptied (a stop). */
  drain(): T[] {
    const out = this.accounts.flatMap((a) => a.projects.flatMap((p) => p.items));
    this.accounts.length = 0;
    this.byAccount.clear();
    this.next = 0;
    this.size = 0;
    return out;
  }

  /** Items waiting per account. */
  depths(into: Map<string, number>): void {
    for (const a of this.accounts) into.set(a.account, (into.get(a.account) ?? 0) + a.size);
  }
}

export class FairQueue<T> {
  private readonly cold = new Tier<T>();
  private readonly background = new Tier<T>();
  /** Ms of work each account was charged (charge): its place in the order. */
  private readonly used = new Map<string, number>();
  private readonly servedOf = (account: string): number => this.used.get(account) ?? 0;
  /**
   * The system's virtual time: what the account of the item taken last had used when it was taken
   * (the start tag of the work in service). An account back from idle starts there: level with the
   * work in hand, never ahead of the others by time saved up while idle, never behind them either.
   */
  private now = 0;

  push(account: string, project: string, item: T, background = false): void {
    if (!this.cold.has(account) && !this.background.has(account) && this.servedOf(account) < this.now) this.used.set(account, this.now);
    (background ? this.background : this.cold).push(account, project, item);
  }

  /**
   * The next item `accept` takes (all by default): cold items first, each tier to the least served
   * account. Taking an item charges its account QUANTUM_MS at once (so several threads do not all
   * go to one account before its first item ends); charge() adds what the item took beyond that.
   */
  take(accept: (item: T) => boolean = () => true): { item: T; account: string } | undefined {
    for (const tier of [this.cold, this.background]) {
      let account = '';
      const item = tier.take(accept, this.servedOf, (a) => (account = a));
      if (item !== undefined) {
        this.now = this.servedOf(account);
        this.used.set(account, this.now + QUANTUM_MS);
        return { item, account };
      }
    }
    return undefined;
  }

  /** An item of the account took `ms`: what it took beyond the QUANTUM_MS charged when it was taken. */
  charge(account: string, ms: number): void {
    if (ms > QUANTUM_MS) this.used.set(account, this.servedOf(account) + ms - QUANTUM_MS);
  }

  /** With nothing waiting, every account starts anew (the map would otherwise keep every account ever seen). */
  forgetIdle(): void {
    if (this.size > 0) return;
    this.used.clear();
    this.now = 0;
  }

  get size(): number {
    return this.cold.size + this.background.size;
  }

  /** Items waiting, per account (both tiers). */
  depths(): Map<string, number> {
    const m = new Map<string, number>();
    this.cold.depths(m);
    this.background.depths(m);
    return m;
  }

  drain(): T[] {
    return [...this.cold.drain(), ...this.background.drain()];
  }
}
