// Request parameters as schemas (issue 12; fastify's route schemas are the model). Each parameter is
// one file in schemas/params/: an OpenAPI Parameter Object whose `schema` is the JSON Schema of the
// value and whose `x-accepts` says, for the 400 message, what the parameter accepts. An endpoint's
// query is the object of the parameters its QuerySpec names, compiled once per endpoint with the same
// ajv the bodies use; the OpenAPI document copies the same objects (openapi.ts endpointParams).
//
// Adding a query parameter (e.g. `cursor`, which every endpoint with `page` accepts):
//   1. schemas/params/<name>.json: name, in: "query", description, x-accepts, schema;
//   2. in queryParams() below, say which endpoints take it (a QuerySpec flag, or as for cursor a
//      property of the Endpoint);
//   3. read the validated value where it is used (queryArgs, or cursor.ts for the cursor);
//   4. say how its normalized value is spelled in WIRE_VALUES below: the Link of a page repeats it
//      (cursor.ts nextLink), and queryString throws for a parameter it has no entry for.
// Validation, the 400 message ("<name> must be <x-accepts>, got <at most 64 chars>") and the OpenAPI
// parameter follow from the file.
import type { ParsedUrlQuery } from 'node:querystring';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createAjv, readSchemaDir, type JsonSchema } from '../events';
import type { Endpoint, ReadArgs } from '../readmodels';
import { rangeDays } from '../readmodels/endpoint';
import { addDays } from '../lib/time';
import { httpError, type HttpError } from './errors';

/** A parameter as schemas/params/<name>.json states it (with an endpoint's own bounds, e.g. limit's maximum). */
export interface ParamDef {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description: string;
  'x-accepts': string;
  style?: string;
  explode?: boolean;
  schema: JsonSchema;
}

let files: Map<string, ParamDef> | undefined;
function paramFile(name: string): ParamDef {
  files ??= readSchemaDir('schemas/params') as unknown as Map<string, ParamDef>;
  const def = files.get(name);
  if (!def) throw new Error(`schemas/params/${name}.json is missing`);
  return def;
}

/** The query parameters an endpoint accepts, in the order the document lists them. */
export function queryParams(e: Pick<Endpoint, 'query' | 'page'>): ParamDef[] {
  const out: ParamDef[] = [];
  if (e.query.engineIds) out.push(paramFile('engine_ids'));
  if (e.query.limit) {
    const { default: dflt, max } = e.query.limit;
    const limit = paramFile('limit');
    // default 0 means "no cap": there is no default value to document then.
    out.push({ ...limit, schema: { ...limit.schema, maximum: max, ...(dflt > 0 ? { default: dflt } : {}) } });
  }
  if (e.query.entityType) out.push(paramFile('entity_type'));
  if (e.query.range) out.push(paramFile('start_date'), paramFile('end_date'));
  if (e.query.interval) out.push(paramFile('interval'));
  if (e.page) out.push(paramFile('cursor'));
  return out;
}

/** The path parameters of an endpoint: one file per `:name` of its path. */
export function pathParams(e: Pick<Endpoint, 'path'>): ParamDef[] {
  return [...e.path.matchAll(/:(\w+)/g)].map((m) => paramFile(m[1]!));
}

/** The JSON Schema of an endpoint's query, as it is validated (unknown parameters are ignored: cache busters). */
export function querySchema(params: readonly ParamDef[]): JsonSchema {
  return { type: 'object', properties: Object.fromEntries(params.map((p) => [p.name, p.schema])) };
}

/** How the wire's strings become the schema's values, decided once per parameter. */
interface Wire {
  name: string;
  array: boolean;
  integer: boolean;
  /** uuids are accepted in any letter case; stored ids are lowercase. */
  lower: boolean;
}

interface Compiled {
  wire: Wire[];
  params: Map<string, ParamDef>;
  validate: ValidateFunction;
}

let ajv: ReturnType<typeof createAjv> | undefined;
const compiled = new WeakMap<Pick<Endpoint, 'query' | 'page'>, Compiled>();
const pathValidators = new Map<string, { def: ParamDef; validate: ValidateFunction }>();

/** The parameter is a uuid or a list of them: any letter case is accepted (stored ids are lowercase), over HTTP and MCP alike. */
export function takesUuids(p: ParamDef): boolean {
  const value = p.schema.type === 'array' ? (p.schema.items as JsonSchema | undefined) : p.schema;
  return value?.format === 'uuid';
}

function wireOf(p: ParamDef): Wire {
  return { name: p.name, array: p.schema.type === 'array', integer: p.schema.type === 'integer', lower: takesUuids(p) };
}

function compile(e: Pick<Endpoint, 'query' | 'page'>): Compiled {
  let c = compiled.get(e);
  if (c === undefined) {
    ajv ??= createAjv();
    const params = queryParams(e);
    c = { wire: params.map(wireOf), params: new Map(params.map((p) => [p.name, p])), validate: ajv.compile(querySchema(params)) };
    compiled.set(e, c);
  }
  return c;
}

/**
 * A wire value as its schema's type: repeated values of a scalar stay an array (the schema refuses it);
 * an integer only from plain digits ("1e3", " 5" and "1.5" stay strings, which the schema refuses).
 */
function decode(w: Wire, raw: string | string[]): unknown {
  if (w.array) {
    const list = Array.isArray(raw) ? raw : [raw];
    return w.lower ? list.map((v) => v.toLowerCase()) : list;
  }
  if (Array.isArray(raw)) return raw;
  if (w.integer) return /^\d+$/.test(raw) ? Number(raw) : raw;
  return w.lower ? raw.toLowerCase() : raw;
}

/** The caller's input as a message shows it: enough to recognise, never a long echo of what was sent. */
const SHOWN_MAX = 64;
export function shown(value: string): string {
  return JSON.stringify(value.length > SHOWN_MAX ? `${value.slice(0, SHOWN_MAX)}...` : value);
}

/** "an integer from {minimum} to {maximum}" with the parameter's own schema filled in. */
export function accepts(p: ParamDef): string {
  return p['x-accepts'].replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = p.schema[k];
    return Array.isArray(v) ? v.join(', ') : String(v);
  });
}

function invalid(p: ParamDef, value: string): HttpError {
  return httpError('invalid_parameter', `${p.name} must be ${accepts(p)}, got ${shown(value)}`);
}

/** The 400 for the first ajv error: names the parameter, says what it accepts, shows the offending value. */
function queryError(c: Compiled, query: ParsedUrlQuery, errors: ErrorObject[] | null | undefined): HttpError {
  const [, name = '', index] = (errors?.[0]?.instancePath ?? '').split('/');
  const p = c.params.get(name);
  if (!p) return httpError('invalid_parameter');
  const raw = query[name] ?? '';
  const one = Array.isArray(raw) ? (p.schema.type === 'array' && index !== undefined ? raw[Number(index)] ?? '' : raw.join(',')) : raw;
  return invalid(p, one);
}

/** The query's values as the endpoint's schema validated them (absent parameters absent). Throws the 400. */
function validQuery(e: Pick<Endpoint, 'query' | 'page'>, query: ParsedUrlQuery): Record<string, unknown> {
  const c = compile(e);
  const values: Record<string, unknown> = {};
  for (const w of c.wire) {
    const raw = query[w.name];
    if (raw !== undefined) values[w.name] = decode(w, raw);
  }
  if (!c.validate(values)) throw queryError(c, query, c.validate.errors);
  return values;
}

/** The longest range start_date..end_date may span, both days included (a leap year). */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/**
 * The days a date parameter accepts (schemas/params/start_date.json and end_date.json: their pattern
 * and x-accepts say the same; test/date-ranges.test.ts checks that they agree).
 */
export const FIRST_DAY = '1970-01-01';
export const LAST_DAY = '8999-12-31';

/**
 * Both ends given: start on or before end, at most MAX_RANGE_DAYS days. The 400 names start_date.
 * One end alone: the range is the endpoint's `days` days from or to it (windows.ts requestedWindow),
 * which must stay within the days the parameters accept (a window_end of 9000-01-06 is none the API
 * could be asked for): the 400 names the end given.
 */
function checkRange(start: string | null, end: string | null, days: number): void {
  if (start !== null && end !== null) {
    const span = (Date.parse(end) - Date.parse(start)) / DAY_MS + 1;
    if (span < 1) throw httpError('invalid_parameter', `start_date must be on or before end_date (${end}), got ${shown(start)}`);
    if (span > MAX_RANGE_DAYS) {
      throw httpError('invalid_parameter', `start_date must be at most ${MAX_RANGE_DAYS - 1} days before end_date (${end}: a range of at most ${MAX_RANGE_DAYS} days), got ${shown(start)}`);
    }
  } else if (start !== null && addDays(start, days - 1) > LAST_DAY) {
    throw httpError('invalid_parameter', `start_date must be on or before ${addDays(LAST_DAY, -(days - 1))} without end_date (the range is then the ${days} days from start_date, which must end by ${LAST_DAY}), got ${shown(start)}`);
  } else if (end !== null && addDays(end, -(days - 1)) < FIRST_DAY) {
    throw httpError('invalid_parameter', `end_date must be on or after ${addDays(FIRST_DAY, days - 1)} without start_date (the range is then the ${days} days to end_date, which must begin on or after ${FIRST_DAY}), got ${shown(end)}`);
  }
}

export type QueryArgs = Pick<ReadArgs, 'engineIds' | 'limit' | 'entityType' | 'startDate' | 'endDate' | 'interval'>;

/**
 * The validated query of an endpoint, as read-model arguments. engine_ids sorted and de-duplicated so
 * equal filters share a cache entry. `windowDays`: the service's current window, the length of a
 * range given by one end on the endpoints whose range is 'window'.
 */
export function queryArgs(query: ParsedUrlQuery, e: Pick<Endpoint, 'query' | 'page'>, windowDays: number): QueryArgs {
  const v = validQuery(e, query);
  const ids = v.engine_ids as string[] | undefined;
  const startDate = (v.start_date as string | undefined) ?? null;
  const endDate = (v.end_date as string | undefined) ?? null;
  checkRange(startDate, endDate, rangeDays(e.query, windowDays));
  return {
    engineIds: ids === undefined ? null : [...new Set(ids)].sort(),
    limit: (v.limit as number | undefined) ?? e.query.limit?.default ?? 0,
    entityType: (v.entity_type as ReadArgs['entityType'] | undefined) ?? null,
    startDate, endDate,
    interval: (v.interval as ReadArgs['interval'] | undefined) ?? 'day',
  };
}

/** A path id (schemas/params/<name>.json): any letter case is accepted, and stored ids are lowercase. */
export function pathUuid(value: string | undefined, name: string): string {
  let v = pathValidators.get(name);
  if (v === undefined) {
    ajv ??= createAjv();
    const def = paramFile(name);
    pathValidators.set(name, (v = { def, validate: ajv.compile(def.schema) }));
  }
  const id = (value ?? '').toLowerCase();
  if (!v.validate(id)) throw invalid(v.def, value ?? '');
  return id;
}

/**
 * Each query parameter's normalized value as the query string spells it (none: left out), the
 * inverse of queryArgs: a query built from these asks for the same QueryArgs. A parameter of
 * queryParams() without an entry here is an error (queryString throws), so the Link of a page
 * (cursor.ts nextLink) cannot leave a filter out.
 */
const WIRE_VALUES: Readonly<Record<string, (q: QueryArgs & { cursor: string | null }) => readonly string[]>> = {
  engine_ids: (q) => q.engineIds ?? [],
  // 0 is "no cap", what leaving limit out means on the lists without a default.
  limit: (q) => (q.limit > 0 ? [String(q.limit)] : []),
  entity_type: (q) => (q.entityType === null ? [] : [q.entityType]),
  start_date: (q) => (q.startDate === null ? [] : [q.startDate]),
  end_date: (q) => (q.endDate === null ? [] : [q.endDate]),
  interval: (q) => [q.interval],
  cursor: (q) => (q.cursor === null ? [] : [q.cursor]),
};

/**
 * The query string of a request to `e` with these normalized arguments and cursor: every parameter
 * the endpoint takes (queryParams, in the document's order), each with its normalized value.
 */
export function queryString(e: Pick<Endpoint, 'query' | 'page'>, q: QueryArgs, cursor: string | null): string {
  const out = new URLSearchParams();
  const args = { ...q, cursor };
  for (const p of queryParams(e)) {
    const values = WIRE_VALUES[p.name];
    if (values === undefined) throw new Error(`params.ts WIRE_VALUES has no entry for the query parameter ${p.name}`);
    for (const v of values(args)) out.append(p.name, v);
  }
  return out.toString();
}

/** The normalized query as a cache-key fragment: equal requests, equal key. */
export function queryKey(q: QueryArgs): string {
  return `${q.engineIds ? q.engineIds.join(',') : '*'}|${q.limit}|${q.entityType ?? '*'}|${q.startDate ?? '*'}|${q.endDate ?? '*'}|${q.interval}`;
}
