import type { Statement } from 'better-sqlite3';
import { accountForKeyHash, projectVisible, runGroupProject, type ReadStore } from '../readmodels';
import { localCommitCount } from '../store';
import { readVersion, sumVersions, type DataVersion } from './build';

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
  /** Goes up each time everything remembered is forgotten: whoever remembers more keys on it. */
  private generation = 0;
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
   * Call once per request, before anything else; returns the generation of what is remembered.
   * A commit on this thread is seen at once (a counter); one on another connection (the ingest
   * thread, another process) through SQLite's data_version, checked once per turn of the event
   * loop: requests answered in the same turn share the check, and a commit that lands between
   * them is no different from one that lands a moment after the last of them.
   */
  refresh(): number {
    const local = localCommitCount();
    if (this.checkedThisTick && local === this.seenLocal) return this.generation;
    this.seenLocal = local;
    this.checkedThisTick = true;
    setImmediate(this.endTick);
    const v = this.dataVersion.get();
    if (v === this.seen) return this.generation;
    this.seen = v;
    this.generation += 1;
    this.accounts.clear();
    this.visible.clear();
    this.groups.clear();
    this.versions.clear();
    return this.generation;
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

  /** Two scopes as one version (see sumVersions). */
  combined(scope: string, other: string): DataVersion {
    const k = `${scope}+${other}`;
    let v = this.versions.get(k);
    if (!v) this.versions.set(k, (v = sumVersions([this.version(scope), this.version(other)])));
    return v;
  }

  version(scope: string): DataVersion {
    let v = this.versions.get(scope);
    if (!v) this.versions.set(scope, (v = readVersion(this.store, scope)));
    return v;
  }
}
