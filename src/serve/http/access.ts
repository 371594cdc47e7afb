import { accountForKeyHash, projectVisible, runGroupProject, type ReadStore } from '../../readmodels';
import { homeOf, shardName } from '../../lib/partition';
import { localCommitCount, projectVersions, type HeldShard, type ProjectVersions } from '../../store';
import { readVersion, sumVersions, type DataVersion } from '../bodies/ready-body';

/** How often SQLite is asked whether another process committed. */
const OTHER_PROCESS_CHECK_MS = 1;
/**
 * Generations whose start is remembered (changedAfter): at one commit every 40 ms (a live stream),
 * about 40 s. A body confirmed current longer ago than that counts as too stale to serve stale.
 */
const CHANGE_RING = 1024;

/**
 * Who may see what, and the data_version of each scope, remembered between requests.
 * `PRAGMA data_version` on the serving connection changes whenever any other connection (the
 * projector, in this process or another) commits, so one cheap check per request tells whether
 * anything remembered may be stale; when it may, data versions and run groups are forgotten at once,
 * and keys and sight too when the 'keys' or 'catalog' scope moved. Only positive
 * answers are remembered, so unknown keys or ids cannot grow the memory.
 */
export class Access {
  private seen: unknown = undefined;
  private checkedAt = -Infinity;
  private seenLocal = -1;
  /** By generation (mod CHANGE_RING): no commit of that generation is older than this (performance.now ms). */
  private readonly changedAt = new Float64Array(CHANGE_RING).fill(-Infinity);
  /** Goes up each time data changed (and data versions are read again): whoever remembers more keys on it. */
  private generation = 0;
  private sightGeneration = 0;
  private seenSight = '';
  /** False after a commit until the 'keys' and 'catalog' versions are read again (checkSight). */
  private sightChecked = false;
  private readonly accounts = new Map<string, string>();
  private readonly visible = new Set<string>();
  private readonly groups = new Map<string, string>();
  private readonly versions = new Map<string, DataVersion>();
  private readonly projects = new Map<string, ProjectVersions>();

  /**
   * `otherProcessCheckMs`: how often to ask SQLite about other processes' commits (tests change it).
   * `shard`: what the store holds (null: every project).
   */
  constructor(private readonly store: ReadStore, private readonly otherProcessCheckMs = OTHER_PROCESS_CHECK_MS, readonly shard: HeldShard | null = null) {}

  /**
   * The shard that holds a project another shard holds, for the operator's reason (a router and its
   * shards that disagree); null when this store holds it. Every shard has every project's catalog
   * row, so without this check a misrouted request would be answered with an empty report.
   */
  elsewhere(projectId: string): string | null {
    const s = this.shard;
    if (s === null || s.n === 1) return null;
    const home = homeOf(projectId, s.partitions, s.n);
    if (home.shard.k === s.k) return null;
    return `project on shard ${shardName(home.shard)} (partition ${home.partition} of ${s.partitions}), not on this shard ${shardName(s)}`;
  }

  /**
   * Call once per request, before anything else; returns the generation of what is remembered.
   * A commit by any thread of this process (the Kafka ingest thread, a projector here) is seen on
   * the next request: the projector bumps a shared counter after each commit. A commit by another
   * process is seen through SQLite's data_version, asked at most once per millisecond (the pragma
   * costs about 4 us, as much as the rest of a cache hit): within a millisecond of its commit.
   * `now`: ask SQLite whatever the time (a request with Cache-Control: no-cache wants the data
   * committed when it arrived, another process's commit of the last millisecond included).
   */
  refresh(now = false): number {
    const local = localCommitCount();
    const at = performance.now();
    if (!now && local === this.seenLocal && at - this.checkedAt < this.otherProcessCheckMs) return this.generation;
    this.seenLocal = local;
    const before = this.checkedAt;
    this.checkedAt = at;
    const v = this.store.dataVersion();
    if (v === this.seen) return this.generation;
    this.seen = v;
    this.generation += 1;
    // The commits this check saw were not there at the previous check (data_version said so then),
    // whichever connection, thread or process made them: they are no older than that check.
    this.changedAt[this.generation % CHANGE_RING] = before;
    this.groups.clear();
    this.versions.clear();
    this.projects.clear();
    this.sightChecked = false;
    return this.generation;
  }

  /**
   * Goes up when what keys and accounts may see may have changed (the 'keys' or 'catalog' scope
   * moved): a resolution of a project request stays right until then, its data version aside.
   * Throws what SQLite throws (a damaged file): read here, not in refresh(), so that the failure
   * reaches a request's error handling.
   */
  get sight(): number {
    this.checkSight();
    return this.sightGeneration;
  }

  /**
   * Keys and sight change only with the 'keys' and 'catalog' scopes (src/store/projector.ts): a
   * stream of runs leaves them, so what was learned about keys and projects is kept across it.
   */
  private checkSight(): void {
    if (this.sightChecked) return;
    const sight = `${this.version('keys').version}|${this.version('catalog').version}`;
    if (sight !== this.seenSight) {
      this.seenSight = sight;
      this.sightGeneration += 1;
      this.accounts.clear();
      this.visible.clear();
    }
    this.sightChecked = true;
  }

  /**
   * No data committed after generation `gen` is older than this (performance.now ms): how long a body
   * known current in `gen` may have been behind is at most now minus this. A lower bound, never a
   * guess: it is the time of the last check that still saw `gen`'s data, taken before that check
   * asked, so the commit that ended `gen` came after it. The alternative, each commit's own time, is
   * known only for this process's writers (another process is seen only through data_version), and
   * the first time this process noticed a change is no bound at all (nobody may have asked for
   * seconds). A body not asked for while idle is thus judged by when it was last asked for: older,
   * so rebuilt before it is served; a dashboard's steady requests keep the checks a millisecond apart.
   * For the current generation: the last check (whatever committed since came after it). -Infinity
   * when `gen` is too old to be remembered.
   */
  changedAfter(gen: number): number {
    if (gen >= this.generation) return this.checkedAt;
    if (this.generation - gen >= CHANGE_RING) return -Infinity;
    return this.changedAt[(gen + 1) % CHANGE_RING]!;
  }

  account(keyHash: string): string | null {
    this.checkSight();
    let a = this.accounts.get(keyHash);
    if (a === undefined) {
      const found = accountForKeyHash(this.store, keyHash);
      if (found === null) return null;
      this.accounts.set(keyHash, (a = found));
    }
    return a;
  }

  canSee(accountId: string, projectId: string): boolean {
    this.checkSight();
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

  /** The version of data that depends on `scopes`: their sum (see sumVersions), each read once. */
  versionOf(scopes: readonly string[]): DataVersion {
    if (scopes.length === 1) return this.version(scopes[0]!);
    const k = scopes.join('+');
    let v = this.versions.get(k);
    if (!v) this.versions.set(k, (v = sumVersions(scopes.map((scope) => this.version(scope)))));
    return v;
  }

  /**
   * A project's data versions, its kinds' included, read in one statement: a body's data version
   * and the version of what it reads are of one snapshot (a commit between two reads could otherwise
   * pair a new data version with the old inputs, and label an old body as new). Bounded like the
   * rest: forgotten at each commit.
   */
  projectVersions(projectId: string): ProjectVersions {
    let v = this.projects.get(projectId);
    if (!v) this.projects.set(projectId, (v = projectVersions(this.store, projectId)));
    return v;
  }

  private version(scope: string): DataVersion {
    let v = this.versions.get(scope);
    if (!v) this.versions.set(scope, (v = readVersion(this.store, scope)));
    return v;
  }
}
