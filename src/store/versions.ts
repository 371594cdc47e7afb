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

/** The scopes a batch changed; each gets its data_version bumped once, in the same transaction. */
export class ChangeSet {
  readonly scopes = new Set<string>();
  project(id: string | null | undefined): void {
    if (id) this.scopes.add(`project:${id}`);
  }
  catalog(): void {
    this.scopes.add('catalog');
  }
  keys(): void {
    this.scopes.add('keys');
  }
  engines(): void {
    this.scopes.add('engines');
  }
}
