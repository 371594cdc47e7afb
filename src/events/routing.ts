// Which events are account-wide facts, and which project an event is about. A sharded
// fleet holds each project's data on one shard, chosen by the partition of the project id; the
// account-wide facts (the catalog) go to a topic every shard consumes whole, so that every shard can
// tell who a key is, what an engine is called and which projects an account sees.
import type { EventType } from './types.gen';

/**
 * A project's catalog row (its Project fields, its deletion, who may see it) is account-wide on
 * purpose: `GET /projects` is then answered by any shard, with no fan-out. Its data is not.
 */
export const CATALOG_TYPES: ReadonlySet<string> = new Set<EventType>([
  'account.upserted', 'api_key.issued', 'api_key.revoked', 'engine.upserted',
  'project.upserted', 'project.deleted', 'project.access_granted', 'project.access_revoked',
  // A subscription is an account's: every shard delivers the signals of the projects it holds.
  'webhook.subscribed', 'webhook.unsubscribed',
]);

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Types whose project_id is optional (their entity is known by its own id). */
const PROJECT_OPTIONAL: ReadonlySet<string> = new Set<EventType>(['run_group.completed', 'forum_post.updated']);

/** The project whose data an event changes: null for catalog events and for events that do not name one. */
export function projectOfEvent(type: string, data: unknown): string | null {
  if (CATALOG_TYPES.has(type) || typeof data !== 'object' || data === null) return null;
  return str((data as { project_id?: unknown }).project_id);
}

/**
 * Whether every shard needs the event: a catalog fact, or an event that may leave out its project
 * (a run_group.completed or forum_post.updated without project_id), since no partition is then its
 * project's. Such an event is kept by every shard and shows on the one that holds its entity.
 */
export function isCatalogEvent(type: string, data: unknown): boolean {
  return CATALOG_TYPES.has(type) || (PROJECT_OPTIONAL.has(type) && projectOfEvent(type, data) === null);
}
