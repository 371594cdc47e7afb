/** A version: the event's occurred_at (UTC ISO) then event_id. Last writer wins by this order. */
export interface Version {
  at: string;
  id: string;
}

export function isNewer(v: Version, at: string | null, id: string | null): boolean {
  if (at === null || id === null) return true;
  return v.at > at || (v.at === at && v.id > id);
}

export function isSame(v: Version, at: string | null, id: string | null): boolean {
  return v.at === at && v.id === id;
}

export function minIso(a: string | null | undefined, b: string): string {
  return a && a < b ? a : b;
}

export type Outcome = 'applied' | 'duplicate' | 'stale';

/**
 * What changed in a project, for the change feed (see change-log.ts): 'runs' (prompt runs, run groups),
 * 'forum' (forum posts), 'project' (the project itself), 'setup' (engines tracked, terms, segments,
 * prompts, competitors), 'engines' (an engine every project shows).
 */
export type ChangeKind = 'engines' | 'forum' | 'project' | 'runs' | 'setup';

/** Every ChangeKind, in the order they are named. */
export const CHANGE_KINDS: readonly ChangeKind[] = ['engines', 'forum', 'project', 'runs', 'setup'];

/**
 * The data_version scope that counts one kind of change of one project: 'kind:<kind>:<id>', bumped in
 * the transaction that bumps 'project:<id>' (change-log.ts). A read model that depends on some kinds only
 * (Endpoint.dependsOn) is current while theirs have not moved, whatever else the project's version
 * says. 'engines' has none per project: it is the shared 'engines' scope. A missing row reads as 0
 * (a database written before these scopes: the first change of a kind makes it 1).
 */
export function kindScope(kind: Exclude<ChangeKind, 'engines'>, projectId: string): string {
  return `kind:${kind}:${projectId}`;
}

/** One project's changes in a batch: the kinds, the newest event time (occurred_at) among them, and the months ('YYYY-MM') of the runs it added, replaced or moved (migration 017). */
export interface ProjectChange {
  kinds: Set<ChangeKind>;
  newest: string;
  months: Set<string>;
}

const PROJECT_PREFIX = 'project:';

/**
 * The scopes an event or a batch changed; each gets its data_version bumped once, in the same
 * transaction. Projects are kept by id (their scope is 'project:<id>'): a run names its project
 * thousands of times a batch, and building that text for each was garbage the writer collected.
 */
export class ChangeSet {
  /** The scopes every project shares: 'catalog', 'keys', 'engines'. */
  readonly shared = new Set<string>();
  /** The projects one event changed. */
  readonly projectIds = new Set<string>();
  /** By project id: filled by absorb(), so only the batch's set has it. */
  readonly projects = new Map<string, ProjectChange>();

  /** Adds one applied event's changes: its scopes, and for each project it changed, its kind and time. */
  absorb(event: ChangeSet, kind: ChangeKind, at: string): void {
    for (const s of event.shared) this.shared.add(s);
    for (const id of event.projectIds) this.note(id, kind, at);
  }

  /** One applied event's change of one project (absorb's work for an event that changed only that project). */
  note(projectId: string, kind: ChangeKind, at: string): void {
    const p = this.projects.get(projectId);
    if (!p) this.projects.set(projectId, { kinds: new Set([kind]), newest: at, months: new Set() });
    else {
      p.kinds.add(kind);
      if (at > p.newest) p.newest = at;
    }
  }

  /** A run of the project completed at `completedAt` was added, replaced or taken away: its month changed (migration 017). */
  noteRun(projectId: string, completedAt: string, at: string): void {
    this.note(projectId, 'runs', at);
    this.projects.get(projectId)!.months.add(completedAt.slice(0, 7));
  }

  /** The batch's scopes, projects as 'project:<id>', sorted. */
  scopes(): string[] {
    return [...this.shared, ...[...this.projects.keys()].map((id) => `${PROJECT_PREFIX}${id}`)].sort();
  }

  /** Empty again (one event's set, used for the next event). */
  clear(): void {
    this.shared.clear();
    this.projectIds.clear();
    this.projects.clear();
  }

  project(id: string | null | undefined): void {
    if (id) this.projectIds.add(id);
  }
  catalog(): void {
    this.shared.add('catalog');
  }
  keys(): void {
    this.shared.add('keys');
  }
  engines(): void {
    this.shared.add('engines');
  }
}
