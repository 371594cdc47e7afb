import type { JsonSchema } from '../../events';
import type { Endpoint } from '../../readmodels';
import { serviceVersion } from '../../lib/version';
import { METRIC_DEFINITIONS_VERSION } from '../../readmodels/methodology';
import { CACHE_CONTROL, CODE_HEADER, DEFINITIONS_HEADER, ERRORS, NOSNIFF, NOSNIFF_HEADER, errorDef, type ErrorCode, type ErrorPlace } from '../request/errors';
import { pathParams, queryParams, wireSchema, type ParamDef } from '../request/params';
import { CHANGES_ENDPOINT } from '../feed/change-feed';
import { STALE_CACHE_STATUS } from '../http/send';

type Json = Record<string, unknown>;

/** schemas/api/x.json is referred to as "x.json": in the document it becomes a component. */
function rewriteRefs(node: unknown, titles: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, titles));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$id' || k === '$schema') continue;
    if (k === '$ref' && typeof v === 'string' && titles.has(v.replace(/^\.\//, ''))) {
      out[k] = `#/components/schemas/${titles.get(v.replace(/^\.\//, ''))}`;
    } else out[k] = rewriteRefs(v, titles);
  }
  return out;
}

/** Parameter Objects of schemas/params (params.ts), as the document lists them (without the x- fields). */
function documented(params: readonly ParamDef[]): Json[] {
  return params.map((p) => ({
    name: p.name, in: p.in, required: p.required, description: p.description,
    ...(p.style ? { style: p.style, explode: p.explode } : {}),
    schema: wireSchema(p),
  }));
}

/**
 * An endpoint's parameters: the same objects (schemas/params) its requests are validated with
 * (params.ts), its path's then the query's it lists (with their bounds: limit's maximum and default).
 */
function parameters(e: Endpoint): Json[] {
  return documented([...pathParams(e), ...queryParams(e)]);
}

/**
 * The IETF rate-limit fields (draft-ietf-httpapi-ratelimit-headers-11) on every answer to a known key
 * when --rate-limit is on (README "Rate limits"): optional, since the limiter is off by default;
 * required on 429, which only the limiter sends. No 401 has them (no key to count against).
 */
function rateLimitHeaders(required: boolean): Json {
  return {
    'RateLimit-Policy': {
      description: 'The per-key token bucket: q requests at most in a burst, refilled from empty in w seconds (q/w per second on average)',
      required, schema: { type: 'string', pattern: '^"per-key";q=[0-9]+;w=2$' },
    },
    RateLimit: {
      description: 'r: requests the key may still send now; t: seconds until it has the whole burst (q) again',
      required, schema: { type: 'string', pattern: '^"per-key";r=[0-9]+;t=[0-9]+$' },
    },
  };
}
const RATE_LIMITED = new Set(['400', '404', '429', '500', '503']);

/**
 * On every API response: which metric definitions its numbers follow (GET /methodology), and that
 * its Content-Type is to be believed (a browser must not sniff a JSON body into HTML).
 */
const DEFINITIONS_VERSION: Json = {
  [DEFINITIONS_HEADER]: {
    description: 'The version of the metric definitions (GET /v1/public/methodology) the numbers follow: it changes when a number\'s meaning does',
    required: true, schema: { type: 'string', const: METRIC_DEFINITIONS_VERSION },
  },
  [NOSNIFF_HEADER]: {
    description: 'Browsers must not guess another type than Content-Type says',
    required: true, schema: { type: 'string', const: NOSNIFF },
  },
};

/** The table's errors that can be answered at any of `places`, by status (errors.ts ERRORS). */
function errorsByStatus(places: readonly ErrorPlace[]): Map<string, ErrorCode[]> {
  const out = new Map<string, ErrorCode[]>();
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const def = errorDef(code);
    if (!def.places.some((p) => places.includes(p))) continue;
    const status = String(def.status);
    out.set(status, [...(out.get(status) ?? []), code]);
  }
  return new Map([...out].sort((a, b) => Number(a[0]) - Number(b[0])));
}

/** The headers of an error response: those every code of the status carries are required. */
function errorHeaders(codes: readonly ErrorCode[]): Json {
  const headers: Json = {};
  const names = new Set(codes.flatMap((c) => Object.keys(errorDef(c).headers ?? {})));
  for (const name of names) {
    const doc = codes.map((c) => errorDef(c).headers?.[name]).find((h) => h !== undefined)!;
    headers[name] = { description: doc.description, required: codes.every((c) => errorDef(c).headers?.[name] !== undefined), schema: doc.schema };
  }
  headers[CODE_HEADER] = { description: 'The error\'s stable code (README "Errors")', required: true, schema: { type: 'string', enum: [...codes] } };
  // One policy for every status (README "HTTP caching"), errors included.
  headers['Cache-Control'] = { required: true, schema: { type: 'string', const: CACHE_CONTROL } };
  return { ...headers, ...DEFINITIONS_VERSION };
}

/**
 * The error responses of an operation, written from the error table: those of `place` (the change
 * feed's route: ['endpoints', 'changes']). rateLimited adds the RateLimit fields where the limiter sends them.
 */
export function errorResponses(place: ErrorPlace | readonly ErrorPlace[], rateLimited = false): Json {
  const out: Json = {};
  for (const [status, codes] of errorsByStatus(typeof place === 'string' ? [place] : place)) {
    out[status] = {
      description: codes.map((c) => `${c}: ${errorDef(c).description}`).join('. '),
      headers: { ...errorHeaders(codes), ...(rateLimited && RATE_LIMITED.has(status) ? rateLimitHeaders(status === '429') : {}) },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
    };
  }
  return out;
}

/** What every 200 and 304 carries (README "HTTP caching"); required, so a response without one fails the contract. */
const CACHING_HEADERS: Json = {
  ETag: { description: 'Strong validator of this representation; send it back in If-None-Match', required: true, schema: { type: 'string', pattern: '^"[^"]+"$' } },
  'Cache-Control': { required: true, schema: { type: 'string', const: CACHE_CONTROL } },
  Vary: { required: true, schema: { type: 'string', const: 'Accept-Encoding, Authorization, X-API-Key' } },
  'X-Data-Version': { description: 'Increments whenever the underlying data changes', required: true, schema: { type: 'integer', minimum: 0 } },
  'Last-Modified': { description: 'When the underlying data last changed (HTTP date)', required: true, schema: { type: 'string' } },
  ...DEFINITIONS_VERSION,
};

const IF_NONE_MATCH: Json = {
  name: 'If-None-Match', in: 'header', required: false,
  description: 'An ETag from an earlier 200: the answer is 304 without a body while the representation is unchanged.',
  schema: { type: 'string' },
};

/** A request that wants the data committed when it arrived, not a body within the staleness bound (README "Data freshness"). */
const NO_CACHE: Json = {
  name: 'Cache-Control', in: 'header', required: false,
  description: '`no-cache`: wait for a body at least as new as the data committed when the request arrived, rather than take a cached ' +
    'body up to the service\'s staleness bound (--max-staleness, default 1000 ms) behind. What a client sends after a change-feed event.',
  schema: { type: 'string' },
};

/** On a body served older than the data, within the staleness bound (src/serve/bodies/cache.ts); absent on a current body. */
const STALE: Json = {
  'Cache-Status': {
    description: `RFC 9211: \`${STALE_CACHE_STATUS}\` when the body is older than the newest committed data (at most the service's ` +
      'staleness bound behind) and a newer one is being built; ETag, X-Data-Version and X-Data-As-Of are this body\'s own. Absent on a current body.',
    required: false, schema: { type: 'string', const: STALE_CACHE_STATUS },
  },
};

/** Lists that page (Endpoint.page): the next page, on the 200 and the 304 of every page but the last (README "Pagination"). */
const NEXT_PAGE: Json = {
  Link: {
    description: 'RFC 8288: the next page, `</v1/public/...?limit=..&cursor=..>; rel="next"`, keeping limit and filters; absent on the last page',
    required: false, schema: { type: 'string', pattern: '^<[^>]+>; rel="next"$' },
  },
};

/** Project and run group bodies (README "Data freshness"): absent while no event of the project was applied. */
const DATA_AS_OF: Json = {
  'X-Data-As-Of': {
    description: 'RFC 3339 UTC: the occurred_at of the newest event applied to the project (the max over time), read with the body',
    required: false, schema: { type: 'string', format: 'date-time' },
  },
};

/** GET /projects/{project_id}/changes: a stream of Server-Sent Events, not a body (src/serve/feed/change-feed.ts, README "Change feed"). */
function changeFeedOperation(): Json {
  const e = CHANGES_ENDPOINT;
  return {
    operationId: e.name,
    summary: e.summary,
    description: 'text/event-stream. `event: change` per committed change to the project, `id` = its X-Data-Version, ' +
      '`data` = {"project_id", "data_version", "endpoints": [operationIds that may have changed], "data_as_of"}; `event: ready` (same data ' +
      'without endpoints) first on a fresh stream; `event: reset` (endpoints: all) when Last-Event-ID cannot be resumed from; ' +
      'comment lines as heartbeats. The stream ends when the key or the project\'s share is revoked, or the service stops.',
    parameters: [
      ...documented(pathParams(e)),
      { name: 'Last-Event-ID', in: 'header', required: false, description: 'Resume after this event id (EventSource sends it on reconnection)', schema: { type: 'string' } },
      ...documented(queryParams(e)),
    ],
    responses: {
      '200': {
        description: 'The stream',
        headers: { 'Cache-Control': { required: true, schema: { type: 'string', const: 'no-store' } }, ...rateLimitHeaders(false) },
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      ...errorResponses(['endpoints', 'changes'], true),
    },
  };
}

function operation(e: Endpoint, titles: Map<string, string>): Json {
  // Headers of this body: the next page's Link on lists that page, X-Data-As-Of on project data.
  const perBody = { ...(e.page ? NEXT_PAGE : {}), ...(e.scope === 'account' ? {} : DATA_AS_OF), ...STALE };
  return {
    operationId: e.name,
    summary: e.summary,
    parameters: [...parameters(e), IF_NONE_MATCH, NO_CACHE],
    responses: {
      '200': {
        description: e.summary,
        headers: { ...CACHING_HEADERS, ...rateLimitHeaders(false), ...perBody },
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${titles.get(`${e.schema}.json`)}` } } },
      },
      '304': { description: 'Not modified (If-None-Match matched the ETag)', headers: { ...CACHING_HEADERS, ...rateLimitHeaders(false), ...perBody } },
      ...errorResponses('endpoints', true),
    },
  };
}

/** The OpenAPI 3.1 document, generated from the endpoint table and the same schemas that validate the bodies. */
export function buildOpenApi(endpoints: readonly Endpoint[], schemas: Map<string, JsonSchema>, basePath: string): Json {
  const titles = new Map([...schemas].map(([file, s]) => [`${file}.json`, String(s.title)]));
  const components: Json = {};
  for (const [file, s] of schemas) components[titles.get(`${file}.json`)!] = rewriteRefs(s, titles);
  const paths: Json = {
    '/openapi.json': {
      get: {
        operationId: 'openapi', summary: 'This document', security: [],
        responses: {
          '200': { description: 'OpenAPI 3.1 document', headers: CACHING_HEADERS, content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } } },
          '304': { description: 'Not modified (If-None-Match matched the ETag)', headers: CACHING_HEADERS },
          ...errorResponses('public'), // public, not rate-limited, served while the read model loads
        },
      },
    },
    '/methodology': {
      get: {
        operationId: 'methodology', summary: 'What every metric, window and ordering means (its version is the Metric-Definitions-Version header)', security: [],
        responses: {
          '200': { description: 'The metric definitions', headers: CACHING_HEADERS, content: { 'application/json': { schema: { $ref: `#/components/schemas/${titles.get('methodology.json')}` } } } },
          '304': { description: 'Not modified (If-None-Match matched the ETag)', headers: CACHING_HEADERS },
          ...errorResponses('public'),
        },
      },
    },
  };
  for (const e of endpoints) paths[e.path.replace(/:(\w+)/g, '{$1}')] = { get: operation(e, titles) };
  paths[CHANGES_ENDPOINT.path.replace(/:(\w+)/g, '{$1}')] = { get: changeFeedOperation() };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Visibility Dashboard API',
      version: serviceVersion(),
      description: 'Read-only API serving AI-search-visibility dashboards. Every endpoint is GET and scoped to the account of the API key.',
    },
    servers: [{ url: basePath }],
    security: [{ ApiKeyHeader: [] }, { ApiKeyAuthorization: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        ApiKeyAuthorization: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Authorization: ApiKey <API_KEY>' },
      },
    },
  };
}
