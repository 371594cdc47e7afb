// Page cursors: opaque to clients, bound to the list they page, named in an RFC 8288 Link.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ParsedUrlQuery } from 'node:querystring';
import type { Endpoint, ReadArgs } from '../../readmodels';
import type { PagePosition, SortKey } from '../../readmodels/args';
import { listIdentity, type ListOf } from '../../readmodels/paging';
import type { QueryArgs } from '../../readmodels/params.gen';
import type { ReadStore } from '../../readmodels';
import { BASE_PATH } from './base-path';
import { cursorSecretProblem } from './cursor-secret';
import { httpError, type HttpError } from './errors';
import { queryString } from './params';


/** The wire format's version tag: a later format gets a new tag, and old cursors stay readable or fail cleanly. */
const FORMAT = 2;
/** Longer than any sort key part this API issues (at most a URL of a few KB), as cursor.json bounds the cursor. */
const MAX_KEY_PART_CHARS = 8192;
const MAX_KEY_PARTS = 4;
/** Bytes of HMAC-SHA256 a cursor carries: 128 bits, 22 characters of the cursor. */
const MAC_BYTES = 16;

/**
 * What signs and checks cursors: HMAC-SHA256 with this key. The database's own (migration 014, 32
 * random bytes) unless the service is configured with one (serve --cursor-secret, CURSOR_SECRET).
 */
export type SigningKey = Buffer;

/** A configured secret's UTF-8 bytes. Throws an operator's message when it cannot be a key. */
export function configuredKey(configured: string): SigningKey {
  const problem = cursorSecretProblem(configured);
  if (problem !== null) throw new Error(`the cursor secret ${problem}`);
  return Buffer.from(configured, 'utf8');
}

/** The key of a service: the configured secret's UTF-8 bytes, else the database's. Throws an operator's message. */
export function signingKey(configured: string | undefined, store: ReadStore): SigningKey {
  if (configured !== undefined) return configuredKey(configured);
  const stored = store.cursorSecret();
  if (stored === null) throw new Error(`database ${store.file} has no cursor secret (schema before 014): open it once for writing to migrate it, or configure --cursor-secret`);
  return stored;
}

/**
 * What a cursor holds: base64url of this JSON followed by MAC_BYTES of HMAC-SHA256, keyed with the
 * SigningKey, over the list it pages (paging.ts listIdentity: endpoint, project, filters, range) and
 * the JSON. So a cursor of another project, list, filter or range, or with any byte changed, is
 * refused, never read, and only this service (or one sharing its key) can make one.
 * Cursors grant nothing: the key's access to the path's project is checked first, and a cursor only
 * positions a page within that project's list.
 */
interface Wire {
  f: typeof FORMAT;
  a: SortKey;
  v?: number;
  o?: number;
}

function mac(key: SigningKey, identity: string, payload: Buffer): Buffer {
  return createHmac('sha256', key).update(identity).update('\0').update(payload).digest().subarray(0, MAC_BYTES);
}

export function encodeCursor(key: SigningKey, endpoint: ListOf, args: Pick<ReadArgs, 'projectId'> & QueryArgs, pos: PagePosition): string {
  const wire: Wire = { f: FORMAT, a: pos.after, ...(pos.pinned ? { v: pos.pinned.version, o: pos.pinned.offset } : {}) };
  const payload = Buffer.from(JSON.stringify(wire));
  return Buffer.concat([payload, mac(key, listIdentity(endpoint, args), payload)]).toString('base64url');
}

const INVALID = 'cursor is not a cursor of this list: send the one in the previous page\'s Link header (rel="next") unchanged, with the same path and filters, or omit it for the first page';

/** The table's invalid_parameter (errors.ts), with what `cursor` accepts. The wire shape (charset, length) is checked before, by schemas/params/cursor.json. */
function invalid(): HttpError {
  return httpError('invalid_parameter', INVALID);
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const isKeyPart = (p: unknown): boolean => (typeof p === 'string' && p.length <= MAX_KEY_PART_CHARS) || (typeof p === 'number' && Number.isFinite(p));

/**
 * The wire object of a signed payload, or null when it is not one this API could have issued (a
 * cursor of an older format, or one signed with a key that signed something else).
 */
function parseWire(payload: Buffer): Wire | null {
  let w: unknown;
  try {
    w = JSON.parse(payload.toString('utf8'));
  } catch {
    return null;
  }
  if (w === null || typeof w !== 'object' || Array.isArray(w)) return null;
  const o = w as Record<string, unknown>;
  if (o.f !== FORMAT || !Array.isArray(o.a)) return null;
  if (o.a.length === 0 || o.a.length > MAX_KEY_PARTS || !o.a.every(isKeyPart)) return null;
  if ((o.v === undefined) !== (o.o === undefined) || (o.v !== undefined && (!isCount(o.v) || !isCount(o.o)))) return null;
  return o as unknown as Wire;
}

/**
 * The `cursor` query parameter of a request, decoded and checked against the list the request names;
 * null when absent. 400 naming `cursor` when repeated, malformed, forged or issued for another list.
 * Call it after the project is known and visible to the key: the binding is checked against it.
 */
export function cursorArg(query: ParsedUrlQuery, endpoint: Endpoint, args: ReadArgs, key: SigningKey): PagePosition | null {
  const raw = query.cursor;
  if (raw === undefined || !endpoint.page) return null;
  if (typeof raw !== 'string') throw invalid();
  // The text's shape (base64url characters, at most 8192) was checked before, by schemas/params/cursor.json.
  // Decoding ignores the unused low bits of a last character: a text that is not the bytes' one
  // spelling is refused, so that every changed character changes what is checked.
  const bytes = Buffer.from(raw, 'base64url');
  if (bytes.length <= MAC_BYTES || bytes.toString('base64url') !== raw) throw invalid();
  const payload = bytes.subarray(0, bytes.length - MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(bytes.length - MAC_BYTES), mac(key, listIdentity(endpoint, args), payload))) throw invalid();
  const w = parseWire(payload);
  if (w === null) throw invalid();
  return { after: w.a, ...(w.v !== undefined ? { pinned: { version: w.v, offset: w.o! } } : {}) };
}

/**
 * RFC 8288: `Link: </v1/public/...?limit=..&cursor=..>; rel="next"`. Built from the normalized request
 * (the body is cached per normalized request, so two spellings of one request share one Link), with
 * every query parameter the endpoint lists (params.ts queryString): the client follows it as it is,
 * keeping its limit, filters and range.
 */
export function nextLink(endpoint: Endpoint, args: ReadArgs, next: PagePosition, key: SigningKey): string {
  const path = endpoint.path.replace(':project_id', encodeURIComponent(args.projectId)).replace(':run_group_id', encodeURIComponent(args.runGroupId));
  return `<${BASE_PATH}${path}?${queryString(endpoint, args, { cursor: encodeCursor(key, endpoint, args, next) })}>; rel="next"`;
}
