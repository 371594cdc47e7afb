// Page cursors (issue 12): opaque to clients, bound to the list they page, named in an RFC 8288 Link.
import { createHash } from 'node:crypto';
import type { ParsedUrlQuery } from 'node:querystring';
import type { Endpoint, ReadArgs } from '../readmodels';
import type { PagePosition, SortKey } from '../readmodels/args';
import { listIdentity } from '../readmodels/paging';
import { BASE_PATH } from './base-path';
import { httpError, type HttpError } from './errors';


/** The wire format's version tag: a later format gets a new tag, and old cursors stay readable or fail cleanly. */
const FORMAT = 1;
/** Longer than any sort key part this API issues (at most a URL of a few KB), as cursor.json bounds the cursor. */
const MAX_KEY_PART_CHARS = 8192;
const MAX_KEY_PARTS = 4;

/**
 * What a cursor holds: base64url of this JSON. `b` binds it to the list it pages (endpoint, project,
 * filters), so a cursor from one project, list or filter used on another is refused, never read.
 * Cursors carry no secret and grant nothing: the key's access to the path's project is checked first,
 * and a cursor only positions a page within that project's list.
 */
interface Wire {
  f: typeof FORMAT;
  b: string;
  a: SortKey;
  v?: number;
  o?: number;
}

/** The list a cursor pages (paging.ts listIdentity), as a short hash. */
export function cursorBinding(endpoint: Pick<Endpoint, 'name'>, args: Pick<ReadArgs, 'projectId' | 'engineIds' | 'entityType' | 'startDate' | 'endDate'>): string {
  return createHash('sha256').update(listIdentity(endpoint.name, args)).digest('base64url').slice(0, 16);
}

export function encodeCursor(binding: string, pos: PagePosition): string {
  const wire: Wire = { f: FORMAT, b: binding, a: pos.after, ...(pos.pinned ? { v: pos.pinned.version, o: pos.pinned.offset } : {}) };
  return Buffer.from(JSON.stringify(wire)).toString('base64url');
}

const INVALID = 'cursor is not a cursor of this list: send the one in the previous page\'s Link header (rel="next") unchanged, with the same path and filters, or omit it for the first page';

/** The table's invalid_parameter (errors.ts), with what `cursor` accepts. The wire shape (charset, length) is checked before, by schemas/params/cursor.json. */
function invalid(): HttpError {
  return httpError('invalid_parameter', INVALID);
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const isKeyPart = (p: unknown): boolean => (typeof p === 'string' && p.length <= MAX_KEY_PART_CHARS) || (typeof p === 'number' && Number.isFinite(p));

/**
 * The wire object, or null when the text is not one this API could have issued. The text's shape
 * (base64url characters, at most 8192) was checked before, by schemas/params/cursor.json.
 */
function parseWire(raw: string): Wire | null {
  let w: unknown;
  try {
    w = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (w === null || typeof w !== 'object' || Array.isArray(w)) return null;
  const o = w as Record<string, unknown>;
  if (o.f !== FORMAT || typeof o.b !== 'string' || !Array.isArray(o.a)) return null;
  if (o.a.length === 0 || o.a.length > MAX_KEY_PARTS || !o.a.every(isKeyPart)) return null;
  if ((o.v === undefined) !== (o.o === undefined) || (o.v !== undefined && (!isCount(o.v) || !isCount(o.o)))) return null;
  return o as unknown as Wire;
}

/**
 * The `cursor` query parameter of a request, decoded and checked against the list the request names;
 * null when absent. 400 naming `cursor` when repeated, malformed, forged or issued for another list.
 * Call it after the project is known and visible to the key: the binding is checked against it.
 */
export function cursorArg(query: ParsedUrlQuery, endpoint: Endpoint, args: ReadArgs): PagePosition | null {
  const raw = query.cursor;
  if (raw === undefined || !endpoint.page) return null;
  if (typeof raw !== 'string') throw invalid();
  const w = parseWire(raw);
  if (w === null || w.b !== cursorBinding(endpoint, args)) throw invalid();
  return { after: w.a, ...(w.v !== undefined ? { pinned: { version: w.v, offset: w.o! } } : {}) };
}

/** The raw cursor of a request, for the cache key (absent: ''). Only endpoints that page read it. */
export function cursorKey(query: ParsedUrlQuery, endpoint: Endpoint): string {
  const raw = query.cursor;
  return endpoint.page && typeof raw === 'string' ? raw : '';
}

/**
 * RFC 8288: `Link: </v1/public/...?limit=..&cursor=..>; rel="next"`. Built from the normalized request
 * (the body is cached per normalized request, so two spellings of one request share one Link): the
 * client follows it as it is, keeping its limit and filters.
 */
export function nextLink(endpoint: Endpoint, args: ReadArgs, next: PagePosition): string {
  const path = endpoint.path.replace(':project_id', encodeURIComponent(args.projectId)).replace(':run_group_id', encodeURIComponent(args.runGroupId));
  const q = new URLSearchParams();
  if (args.limit > 0) q.append('limit', String(args.limit));
  for (const id of args.engineIds ?? []) q.append('engine_ids', id);
  if (args.entityType) q.append('entity_type', args.entityType);
  q.append('cursor', encodeCursor(cursorBinding(endpoint, args), next));
  return `<${BASE_PATH}${path}?${q.toString()}>; rel="next"`;
}
