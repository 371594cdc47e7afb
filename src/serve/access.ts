import type { Statement } from 'better-sqlite3';
import { accountForKeyHash, projectVisible, runGroupProject, type ReadStore } from '../readmodels';
import { localCommitCount } from '../store';

export interface DataVersion {
  version: number;
  updated_at: string;
}

const VERSION_SQL = 'SELECT version, updated_at FROM data_versions WHERE scope = ?';
const NEVER: DataVersion = { version: 0, updated_at: new Date(0).toISOString() };

/**
 * Who may see what, and the data_version of each scope, remembered between requests.
 * `PRAGMA data_version` on the serving connection changes whenever any other connection (the
 * projector, in this process or another) commits, so one cheap check per request tells whether
 * anything remembered may be stale; when it may, everything is forgotten at once. Only positive
 * answers are remembered, so unknown keys or ids cannot grow the memory.
 */
export class Access {
  private readonly dataVersion: Statement;
  private seen: unknown = undefined;
  private checkedThisTick = false;
  private seenLocal = -1;
  private readonly endTick = (): void => {
    this.checkedThisTick = false;
  };
  private readonly accounts = new Map<string, string>();
  private readonly visible = new Set<string>();
  private readonly groups = new Map<string, string>();
  private readonly versions = new Map<string, DataVersion>();

  constructor(private readonly store: ReadStore) {
    this.dataVersion = store.db.prepare('PRAGMA data_version').pluck();
  }

  /**
   * Call once per request, before anything else. A commit of this process is seen at once (a
   * counter); one of another process through SQLite's data_version, checked once per turn of the
   * event loop: requests answered in the same turn share the check, and a commit that lands
   * between them is no different from one that lands a moment after the last of them.
   */
  refresh(): void {
    const local = localCommitCount();
    if (this.checkedThisTick && local === this.seenLocal) return;
    this.seenLocal = local;
    this.checkedThisTick = true;
    setImmediate(this.endTick);
    const v = this.dataVersion.get();
    if (v === this.seen) return;
    this.seen = v;
    this.accounts.clear();
    this.visible.clear();
    this.groups.clear();
    this.versions.clear();
  }

  account(keyHash: string): string | null {
    let a = this.accounts.get(keyHash);
    if (a === undefined) {
      const found = accountForKeyHash(this.store, keyHash);
      if (found === null) return null;
      this.accounts.set(keyHash, (a = found));
    }
    return a;
  }

  canSee(accountId: string, projectId: string): boolean {
    const k = `${accountId}|${projectId}`;
    if (this.visible.has(k)) return true;
    if (!projectVisible(this.store, accountId, projectId)) return false;
    this.visible.add(k);
    return true;
  }

  groupProject(runGroupId: string): string | null {
    let p = this.groups.get(runGroupId);
    if (p === undefined) {
      const found = runGroupProject(this.store, runGroupId);
      if (found === null) return null;
      this.groups.set(runGroupId, (p = found));
    }
    return p;
  }

  /** Two scopes as one version: the sum of two counters changes when either does and never goes back. */
  combined(scope: string, other: string): DataVersion {
    const k = `${scope}+${other}`;
    let v = this.versions.get(k);
    if (!v) {
      const a = this.version(scope);
      const b = this.version(other);
      this.versions.set(k, (v = { version: a.version + b.version, updated_at: a.updated_at > b.updated_at ? a.updated_at : b.updated_at }));
    }
    return v;
  }

  version(scope: string): DataVersion {
    let v = this.versions.get(scope);
    if (!v) this.versions.set(scope, (v = this.store.get<DataVersion>(VERSION_SQL, scope) ?? NEVER));
    return v;
  }
}
