import type { JsonSchema } from '../events';
import type { Endpoint } from '../readmodels';

type Json = Record<string, unknown>;

const ERRORS: Record<string, string> = {
  '400': 'A malformed uuid, limit, entity_type or engine_ids; the message names the parameter and what it accepts',
  '401': 'Missing, unknown or revoked API key (message "Invalid API key")',
  '404': 'Unknown route, or a project or run group that does not exist or that the key cannot see',
  '405': 'Method other than GET or HEAD (the Allow header lists them)',
  '429': 'Per-key rate limit exceeded (see Retry-After; RateLimit says r=0)',
  '431': 'The request line and headers together exceed 16 KiB',
  '500': 'Internal error; the message shows no internals',
  '503': 'The read model is still loading, or a body cannot be built right now (the service is stopping or its build threads keep failing); retry after Retry-After',
};

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

function parameters(e: Endpoint): Json[] {
  const params: Json[] = [...e.path.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1], in: 'path', required: true, schema: { type: 'string', format: 'uuid' },
  }));
  if (e.query.engineIds) {
    params.push({
      name: 'engine_ids', in: 'query', required: false, style: 'form', explode: true,
      description: 'Restrict the result to these engines; repeat once per value.',
      schema: { type: 'array', items: { type: 'string', format: 'uuid' } },
    });
  }
  if (e.query.limit) {
    params.push({
      name: 'limit', in: 'query', required: false, description: 'Caps the number of rows returned.',
      schema: { type: 'integer', minimum: 1, maximum: e.query.limit.max, default: e.query.limit.default },
    });
  }
  if (e.query.entityType) {
    params.push({ name: 'entity_type', in: 'query', required: false, schema: { type: 'string', enum: ['brand', 'competitor'] } });
  }
  return params;
}

/** Headers an error response always carries, by status (README "Errors"). */
const ERROR_HEADERS: Record<string, Json> = {
  '401': { 'WWW-Authenticate': { description: 'The authentication scheme: send the key as X-API-Key or Authorization: ApiKey', required: true, schema: { type: 'string', const: 'ApiKey' } } },
  '405': { Allow: { description: 'The methods the path serves', required: true, schema: { type: 'string', const: 'GET, HEAD' } } },
  '429': { 'Retry-After': { description: 'Seconds until a request will be accepted again: the t of RateLimit', required: true, schema: { type: 'integer', minimum: 1 } } },
  '503': { 'Retry-After': { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer', minimum: 1 } } },
};

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

function errorResponses(statuses: readonly string[] = Object.keys(ERRORS), rateLimited = false): Json {
  const out: Json = {};
  for (const status of statuses) {
    const description = ERRORS[status]!;
    const headers: Json = {
      ...ERROR_HEADERS[status],
      ...(rateLimited && RATE_LIMITED.has(status) ? rateLimitHeaders(status === '429') : {}),
    };
    out[status] = {
      description,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
    };
  }
  return out;
}

/** What every 200 and 304 carries (README "HTTP caching"); required, so a response without one fails the contract. */
const CACHING_HEADERS: Json = {
  ETag: { description: 'Strong validator of this representation; send it back in If-None-Match', required: true, schema: { type: 'string', pattern: '^"[^"]+"$' } },
  'Cache-Control': { required: true, schema: { type: 'string', const: 'private, no-cache' } },
  Vary: { required: true, schema: { type: 'string', const: 'Accept-Encoding, Authorization, X-API-Key' } },
  'X-Data-Version': { description: 'Increments whenever the underlying data changes', required: true, schema: { type: 'integer', minimum: 0 } },
  'Last-Modified': { description: 'When the underlying data last changed (HTTP date)', required: true, schema: { type: 'string' } },
};

const IF_NONE_MATCH: Json = {
  name: 'If-None-Match', in: 'header', required: false,
  description: 'An ETag from an earlier 200: the answer is 304 without a body while the representation is unchanged.',
  schema: { type: 'string' },
};

function operation(e: Endpoint, titles: Map<string, string>): Json {
  return {
    operationId: e.name,
    summary: e.summary,
    parameters: [...parameters(e), IF_NONE_MATCH],
    responses: {
      '200': {
        description: e.summary,
        headers: { ...CACHING_HEADERS, ...rateLimitHeaders(false) },
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${titles.get(`${e.schema}.json`)}` } } },
      },
      '304': { description: 'Not modified (If-None-Match matched the ETag)', headers: { ...CACHING_HEADERS, ...rateLimitHeaders(false) } },
      ...errorResponses(undefined, true),
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
          ...errorResponses(['405', '431', '500']), // public, not rate-limited, served while the read model loads
        },
      },
    },
  };
  for (const e of endpoints) paths[e.path.replace(/:(\w+)/g, '{$1}')] = { get: operation(e, titles) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Visibility Dashboard API',
      version: '1.0.0',
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
