import type { Endpoint, PageSnapshots, ReadArgs, ReadStore } from '../../readmodels';
import type { BodySchemas } from './bodies';
import { encodeBody, encodeBodyText, type Ready } from './encode';
import { nextLink, type SigningKey } from '../request/cursor';
import { inputsVersion, projectVersions, scopeVersion } from '../../store';

export interface DataVersion {
  version: number;
  updated_at: string;
}

const NEVER: DataVersion = { version: 0, updated_at: new Date(0).toISOString() };

export function readVersion(store: ReadStore, scope: string): DataVersion {
  return scopeVersion(store, scope) ?? NEVER;
}

/** Several scopes as one version: the sum of counters changes when any does and never goes back. */
export function sumVersions(parts: DataVersion[]): DataVersion {
  let version = 0;
  let updated = NEVER.updated_at;
  for (const p of parts) {
    version += p.version;
    if (p.updated_at > updated) updated = p.updated_at;
  }
  return { version, updated_at: updated };
}

/**
 * Builds, validates and serializes one body, reading its data and its data_version in one read
 * transaction: one snapshot, even while another thread commits. That snapshot is never older than
 * the version the request was keyed with (it starts after the key was made), so a body is never
 * staler than its key. A body that fails its schema is a bug: it throws (500), it is never served.
 * A body the store keeps as text (Endpoint.text) is not validated here: the writer made it with
 * the function build() uses, whose bodies the tests check against the schema and against the text.
 * `snapshots`: the builder's kept lists of walks in progress (readmodels/paging.ts PageSnapshots).
 */
export function buildReady(store: ReadStore, schemas: BodySchemas, endpoint: Endpoint, args: ReadArgs, scopes: readonly string[], cursorKey: SigningKey, snapshots: PageSnapshots): Ready {
  const { version, asOf, inputs, text, body, next } = store.snapshot(() => {
    // Project and run group bodies: their data version, how fresh they are (X-Data-As-Of) and the
    // version of what they read (Ready.inputs), all from the snapshot the body is read in.
    const pv = args.projectId ? projectVersions(store, args.projectId) : null;
    const version = pv ?? sumVersions(scopes.map((s) => readVersion(store, s)));
    const asOf = pv?.data_as_of ?? null;
    const inputs = pv ? inputsVersion(pv, endpoint.dependsOn) : -1;
    const text = endpoint.text?.(store, args) ?? null;
    if (text !== null) return { version, asOf, inputs, text, body: null, next: null };
    // A list that pages: its body is the page's items, and where the next starts becomes a Link (cursor.ts).
    if (!endpoint.page) return { version, asOf, inputs, text, body: endpoint.build(store, args), next: null };
    const page = endpoint.page(store, args, { version: version.version, snapshots });
    return { version, asOf, inputs, text, body: page.items, next: page.next };
  });
  if (text === null) {
    const problem = schemas.check(endpoint.schema, body);
    if (problem) throw new Error(`${endpoint.name} body fails schemas/api/${endpoint.schema}.json: ${problem}`);
  }
  const headers: Record<string, string> = {};
  if (next) headers.link = nextLink(endpoint, args, next, cursorKey);
  if (asOf) headers['x-data-as-of'] = asOf;
  return text === null ? encodeBody(body, version.version, version.updated_at, headers, inputs) : encodeBodyText(text, version.version, version.updated_at, headers, inputs);
}
