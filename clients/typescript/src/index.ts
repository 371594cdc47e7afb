// @visibility-api/client: a typed client for the Visibility Dashboard API. The types are
// generated from the service's OpenAPI document (openapi.gen.ts, `npm run gen:client` in the
// repository); the calls are openapi-fetch's. Added here: the API key on every request, iteration
// over cursor pages (the `Link: <...>; rel="next"` header), and the RateLimit fields parsed.
import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './openapi.gen';

export type { components, operations, paths } from './openapi.gen';

/** The API's base path: every path of the document is under it. */
export const BASE_PATH = '/v1/public';

export interface ClientOptions {
  /** Where the API listens, e.g. http://localhost:8080 (the client adds /v1/public unless it is there). */
  baseUrl: string;
  /** Sent as X-API-Key on every request. */
  apiKey: string;
  /** A fetch of your own (tests, proxies); globalThis.fetch by default. */
  fetch?: typeof globalThis.fetch;
}

/**
 * The RateLimit fields of an answer (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy:
 * "per-key";q=20;w=2` and `RateLimit: "per-key";r=19;t=1`. null when the service sends none (its
 * limiter is off).
 */
export interface RateLimitInfo {
  policy: string;
  /** q: the requests the quota allows per window (the bucket's size). */
  quota: number | null;
  /** w: the window, in seconds. */
  windowSeconds: number | null;
  /** r: requests left. */
  remaining: number;
  /** t: seconds until the quota is whole again (on a 429: until a retry can succeed). */
  resetSeconds: number;
}

/** The parameters (key=value) of an sf-item such as `"per-key";r=19;t=1`, and its name. */
function sfItem(value: string): { name: string; params: Map<string, string> } {
  const [first = '', ...rest] = value.split(';').map((s) => s.trim());
  const params = new Map<string, string>();
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq > 0) params.set(p.slice(0, eq), p.slice(eq + 1));
  }
  return { name: first.replace(/^"|"$/g, ''), params };
}

function num(v: string | undefined): number | null {
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : null;
}

/** The RateLimit fields of a response, parsed; null when absent. */
export function rateLimitOf(response: Response): RateLimitInfo | null {
  const field = response.headers.get('ratelimit');
  if (field === null) return null;
  const limit = sfItem(field);
  const policy = sfItem(response.headers.get('ratelimit-policy') ?? '');
  return {
    policy: limit.name,
    quota: num(policy.params.get('q')),
    windowSeconds: num(policy.params.get('w')),
    remaining: num(limit.params.get('r')) ?? 0,
    resetSeconds: num(limit.params.get('t')) ?? 0,
  };
}

/** The target of `Link: <...>; rel="next"` (RFC 8288), or null on the last page. */
export function nextLink(response: Response): string | null {
  const link = response.headers.get('link');
  if (link === null) return null;
  for (const part of link.split(',')) {
    const m = /^\s*<([^>]*)>\s*(.*)$/.exec(part);
    if (m && /(^|;)\s*rel="?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(m[2]!)) return m[1]!;
  }
  return null;
}

/** A non-2xx answer: its status and the API's error body ({ error: true, message }). */
export class ApiError extends Error {
  constructor(readonly status: number, readonly body: unknown, readonly response: Response) {
    super(`${status}: ${typeof body === 'object' && body !== null && 'message' in body ? String((body as { message: unknown }).message) : response.statusText}`);
  }
}

type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type GetOp<P extends GetPath> = paths[P] extends { get: infer O } ? O : never;
type Ok<P extends GetPath> = GetOp<P> extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
/** The GET paths whose 200 body is a list: the ones a cursor can page. */
export type ListPath = { [P in GetPath]: Ok<P> extends readonly unknown[] ? P : never }[GetPath];
/** One item of a list path's body. */
export type ListItem<P extends ListPath> = Ok<P> extends ReadonlyArray<infer I> ? I : never;
/** The path and query parameters of a GET path, as openapi-fetch takes them. */
export type GetParams<P extends GetPath> = GetOp<P> extends { parameters: infer Q } ? Omit<Q, 'header' | 'cookie'> : never;

export interface Page<P extends ListPath> {
  items: Array<ListItem<P>>;
  rateLimit: RateLimitInfo | null;
  /** The next page's URL (path and query, from the Link header), or null on the last page. */
  next: string | null;
}

export interface VisibilityClient extends Pick<Client<paths>, 'GET' | 'use' | 'eject'> {
  /**
   * Every page of a list, first to last, following the Link header: each item once, in the list's
   * order. A failed page throws ApiError (e.g. 429: wait its rateLimit.resetSeconds and iterate again).
   */
  pages<P extends ListPath>(path: P, params?: GetParams<P>): AsyncGenerator<Page<P>, void, undefined>;
  /** The items of every page, one by one. */
  items<P extends ListPath>(path: P, params?: GetParams<P>): AsyncGenerator<ListItem<P>, void, undefined>;
  /** The RateLimit fields of the last answer received (null before any, or when the service sends none). */
  lastRateLimit(): RateLimitInfo | null;
}

function apiBase(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith(BASE_PATH) ? trimmed : trimmed + BASE_PATH;
}

async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (a proxy's page): keep the text
  }
  return new ApiError(response.status, body, response);
}

export function createClient(options: ClientOptions): VisibilityClient {
  const base = apiBase(options.baseUrl);
  const doFetch = options.fetch ?? globalThis.fetch;
  const headers = { 'X-API-Key': options.apiKey };
  const client = createFetchClient<paths>({ baseUrl: base, headers, fetch: doFetch });
  let last: RateLimitInfo | null = null;
  const remember: Middleware = {
    onResponse({ response }) {
      last = rateLimitOf(response);
      return undefined;
    },
  };
  client.use(remember);

  async function* pages<P extends ListPath>(path: P, params?: GetParams<P>): AsyncGenerator<Page<P>, void, undefined> {
    // The first page through openapi-fetch (it serializes the typed parameters as the document says);
    // openapi-fetch's GET is generic over every path, which one call site cannot name: hence the cast.
    const get = client.GET as unknown as (p: string, init: { params?: unknown }) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const first = await get(path, { params: params ?? {} });
    if (!first.response.ok) throw new ApiError(first.response.status, first.error, first.response);
    let page: Page<P> = { items: first.data as Array<ListItem<P>>, rateLimit: rateLimitOf(first.response), next: nextLink(first.response) };
    for (;;) {
      yield page;
      if (page.next === null) return;
      // The Link target is a path on the same server: resolved against the base, fetched as it is.
      const response = await doFetch(new URL(page.next, base).toString(), { headers });
      last = rateLimitOf(response);
      if (!response.ok) throw await errorOf(response);
      page = { items: (await response.json()) as Array<ListItem<P>>, rateLimit: last, next: nextLink(response) };
    }
  }

  async function* items<P extends ListPath>(path: P, params?: GetParams<P>): AsyncGenerator<ListItem<P>, void, undefined> {
    for await (const page of pages(path, params)) yield* page.items;
  }

  return {
    GET: client.GET.bind(client),
    use: client.use.bind(client),
    eject: client.eject.bind(client),
    pages,
    items,
    lastRateLimit: () => last,
  };
}
