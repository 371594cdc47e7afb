import type { ParsedUrlQuery } from 'node:querystring';
import { UUID_PATTERN } from '../lib/ids';
import type { QuerySpec, ReadArgs } from '../readmodels';
import { HttpError } from './errors';

const ENTITY_TYPES = ['brand', 'competitor'] as const;

function bad(message: string): HttpError {
  return new HttpError(400, message);
}

/** The caller's input as a message shows it: enough to recognise, never a long echo of what was sent. */
const SHOWN_MAX = 64;
function shown(value: string): string {
  return JSON.stringify(value.length > SHOWN_MAX ? `${value.slice(0, SHOWN_MAX)}...` : value);
}

/** Path ids: any letter case is accepted and stored ids are lowercase. */
export function pathUuid(value: string | undefined, name: string): string {
  const v = (value ?? '').toLowerCase();
  if (!UUID_PATTERN.test(v)) throw bad(`${name} must be a uuid (e.g. 3f1c2a7e-5b1d-4c8a-9e0f-1a2b3c4d5e6f), got ${shown(value ?? '')}`);
  return v;
}

function values(query: ParsedUrlQuery, name: string): string[] {
  const v = query[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** engine_ids=<uuid>&engine_ids=<uuid> (form, exploded). Sorted and de-duplicated so equal filters share a cache entry. */
function engineIds(query: ParsedUrlQuery): string[] | null {
  const raw = values(query, 'engine_ids');
  if (raw.length === 0) return null;
  const ids = new Set<string>();
  for (const v of raw) {
    const id = v.toLowerCase();
    if (!UUID_PATTERN.test(id)) throw bad(`engine_ids must be repeated uuids (engine_ids=<uuid>&engine_ids=<uuid>), got ${shown(v)}`);
    ids.add(id);
  }
  return [...ids].sort();
}

function limit(query: ParsedUrlQuery, spec: { default: number; max: number }): number {
  const raw = values(query, 'limit');
  if (raw.length === 0) return spec.default;
  const v = raw[0]!;
  if (raw.length > 1 || !/^\d+$/.test(v) || Number(v) < 1 || Number(v) > spec.max) {
    throw bad(`limit must be an integer from 1 to ${spec.max}, got ${shown(raw.join(','))}`);
  }
  return Number(v);
}

function entityType(query: ParsedUrlQuery): ReadArgs['entityType'] {
  const raw = values(query, 'entity_type');
  if (raw.length === 0) return null;
  const v = raw[0]!;
  if (raw.length > 1 || !(ENTITY_TYPES as readonly string[]).includes(v)) {
    throw bad(`entity_type must be one of ${ENTITY_TYPES.join(', ')}, got ${shown(raw.join(','))}`);
  }
  return v as ReadArgs['entityType'];
}

/** The validated query of an endpoint. Parameters an endpoint does not accept are ignored (cache busters). */
export function queryArgs(query: ParsedUrlQuery, spec: QuerySpec): Pick<ReadArgs, 'engineIds' | 'limit' | 'entityType'> {
  return {
    engineIds: spec.engineIds ? engineIds(query) : null,
    limit: spec.limit ? limit(query, spec.limit) : 0,
    entityType: spec.entityType ? entityType(query) : null,
  };
}

/** The normalized query as a cache-key fragment: equal requests, equal key. */
export function queryKey(q: Pick<ReadArgs, 'engineIds' | 'limit' | 'entityType'>): string {
  return `${q.engineIds ? q.engineIds.join(',') : '*'}|${q.limit}|${q.entityType ?? '*'}`;
}
