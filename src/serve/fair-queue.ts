/**
 * Waiting work shared fairly: one queue per account, and within it one per project, served round
 * robin at both levels, so an account waiting for one item is behind at most one item of each other
 * account, never behind another account's backlog. Two tiers: every cold item (a request waits for
 * it) is taken before any background item (a stale-while-revalidate rebuild, whose request was
 * already answered), so a rebuild is behind its own account's cold items and never ahead of
 * another account's.
 */

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
      // An account that had nothing waiting is served next: it is owed a turn, and one account's
      // single cold request is then behind nothing but the builds already running.
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

  /** The next item that `accept` takes, round robin over accounts then projects; undefined when none is. */
  take(accept: (item: T) => boolean): T | undefined {
    const n = this.accounts.length;
    for (let i = 0; i < n; i++) {
      const ai = (this.next + i) % n;
      const a = this.accounts[ai]!;
      const m = a.projects.length;
      for (let j = 0; j < m; j++) {
        const pi = (a.next + j) % m;
        const p = a.projects[pi]!;
        const k = p.items.findIndex(accept);
        if (k < 0) continue;
        const [item] = p.items.splice(k, 1);
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
    }
    return undefined;
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

  push(account: string, project: string, item: T, background = false): void {
    (background ? this.background : this.cold).push(account, project, item);
  }

  /** The next item `accept` takes (all by default): cold items first, each tier round robin. */
  take(accept: (item: T) => boolean = () => true): T | undefined {
    return this.cold.take(accept) ?? this.background.take(accept);
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
