import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { Endpoint } from '../../readmodels';
import { keyFrom, keyHash as hashOf } from '../request/api-key';
import { errorBody, errorFields, NOSNIFF, NOSNIFF_HEADER } from '../request/errors';
import { parseQuery } from '../request/params';
import type { Admission } from './admission';
import { wantsFresh, type Resolved, type Responder } from './responder';
import { represent, type Representation } from './send';
import { requestIdFrom, type ResponseObserver } from './served';

interface Route {
  endpoint: Endpoint;
  /** basePath + the endpoint's path: what the access log names. */
  template: string;
  pattern: RegExp;
  names: string[];
}

/** What the access log and /metrics are told of a 429: its route and template, the key's account. */
interface Refused {
  route: string;
  template: string | null;
  accountId: string;
}

/** A request line and key resolved to a cache entry: valid for one Access generation. */
interface Resolution {
  template: string;
  resolved: Resolved;
}

/** The request headers the hot path reads. */
interface HotHeaders {
  xApiKey: string | undefined;
  authorization: string | undefined;
  acceptEncoding: string | undefined;
  ifNoneMatch: string | undefined;
  xRequestId: string | undefined;
  cacheControl: string | undefined;
  /** Read by POST /mcp's 429 only (its 406 and 415 come first). */
  accept: string | undefined;
  contentType: string | undefined;
}

/** Which of the eight a header name is; undefined for any other. Compared by length first. */
function fieldOf(name: string): keyof HotHeaders | undefined {
  switch (name.length) {
    case 6: return name.toLowerCase() === 'accept' ? 'accept' : undefined;
    case 9: return name.toLowerCase() === 'x-api-key' ? 'xApiKey' : undefined;
    case 12: {
      const lower = name.toLowerCase();
      return lower === 'x-request-id' ? 'xRequestId' : lower === 'content-type' ? 'contentType' : undefined;
    }
    case 13: {
      const lower = name.toLowerCase();
      return lower === 'authorization' ? 'authorization' : lower === 'if-none-match' ? 'ifNoneMatch' : lower === 'cache-control' ? 'cacheControl' : undefined;
    }
    case 15: return name.toLowerCase() === 'accept-encoding' ? 'acceptEncoding' : undefined;
    default: return undefined;
  }
}

/**
 * The eight headers, read from rawHeaders: reading `req.headers` makes node:http build an object of
 * every header, which costs more than the rest of a hit. null when one of them is repeated: node
 * would join the values, and the Koa path (which reads req.headers) answers instead.
 */
function hotHeaders(raw: string[]): HotHeaders | null {
  const h: HotHeaders = { xApiKey: undefined, authorization: undefined, acceptEncoding: undefined, ifNoneMatch: undefined, xRequestId: undefined, cacheControl: undefined, accept: undefined, contentType: undefined };
  for (let i = 0; i < raw.length; i += 2) {
    const field = fieldOf(raw[i]!);
    if (field === undefined) continue;
    if (h[field] !== undefined) return null;
    h[field] = raw[i + 1]!;
  }
  return h;
}

/** Where a connection keeps the hash of the last key it presented (see hashFor). */
const LAST_KEY = Symbol('visibility.lastKey');
type KeyedSocket = { [LAST_KEY]?: { key: string; hash: string } };

const NO_QUERY: ParsedUrlQuery = Object.freeze({}) as ParsedUrlQuery;
/**
 * What the remembered resolutions may cost, estimated in bytes; the memo is emptied when full
 * (dashboards ask for few distinct URLs). Bytes, not entries: a URL can be 16 KB long.
 */
export const MEMO_MAX_BYTES = 4 * 1024 * 1024;
/** Per entry beyond its strings: the Map slots, the Resolution, its resolved request (arguments, scopes, build closure), the key hash. */
const ENTRY_OVERHEAD_BYTES = 600;

/** '/projects/:project_id/visibility' -> /^\/v1\/public\/projects\/([^/]+)\/visibility$/ */
function compile(basePath: string, endpoint: Endpoint): Route {
  const names: string[] = [];
  const template = basePath + endpoint.path;
  const source = template.split('/').map((seg) => {
    if (!seg.startsWith(':')) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    names.push(seg.slice(1));
    return '([^/]+)';
  }).join('\\/');
  return { endpoint, template, pattern: new RegExp(`^${source}$`), names };
}

export interface HotPathOptions {
  basePath: string;
  endpoints: readonly Endpoint[];
  responder: Responder;
  /**
   * The admission step every transport shares: the hot path takes its steps in its order (ready,
   * key, resolve, charge), answers the 429 of a request it resolved itself and hands any other
   * refusal to the Koa path, which answers it (admission.ts).
   */
  admission: Admission;
  onResponse?: ResponseObserver;
  /**
   * The POST the hot path answers 429 when its key is over its rate (POST /mcp: app.ts), as that
   * POST's handler would after its earlier refusals; without it every POST goes to the handlers.
   */
  post?: RefusablePost;
}

/** A POST's URL, what the access log names it, and the refusals its handler makes before it charges. */
export interface RefusablePost {
  isFor(url: string | undefined): boolean;
  route: string;
  template: string;
  /** Accept and Content-Type would pass the handler (its 406 and 415 come before its 429). */
  admits(accept: string | undefined, contentType: string | undefined): boolean;
}

/**
 * The hot path: a GET or HEAD whose body is already in the cache is answered straight from
 * node:http with the ready bytes and prepared headers (no Koa, no JSON.stringify, no ajv, no
 * SQLite unless data changed), and so is the 429 of a request it resolved whose key is over its rate,
 * and of a POST /mcp whose key is (HotPathOptions.post). Everything else (misses, other errors, other methods) returns false and goes to the Koa app, which
 * shares the same Responder and error fields, so both paths give the same answer.
 *
 * Resolving a request (route, key, scope, cache key) is remembered per key hash and URL until keys
 * or sight may have changed (Responder.sight); after any other commit only its data version is read
 * again (once per scope and commit), so a stream of runs does not make every request resolve anew.
 * A repeated request on a keep-alive connection costs a counter load and two map lookups before its
 * bytes are written.
 */
export interface HotPath {
  /** Answers the request and returns true when its body is ready; false hands it to the Koa app. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
  /** The estimated bytes of remembered resolutions (at most MEMO_MAX_BYTES): shown on /cache. */
  memoBytes(): number;
}

export function createHotPath(o: HotPathOptions): HotPath {
  const routes = o.endpoints.map((e) => compile(o.basePath, e));
  // url -> key hash -> resolution. The key hash string comes from the per-connection memo below,
  // so V8 has its hash code already; only the URL is hashed anew.
  // Only successful resolutions are remembered: what an unknown key or a bad URL sends costs no memory.
  const memo = new Map<string, Map<string, Resolution>>();
  let memoBytes = 0;
  let sightSeen = -1;
  // A keep-alive connection presents the same key request after request: the hash of the last one
  // is kept on the connection (never in a table of keys), so it is computed once per connection.
  function hashFor(req: IncomingMessage, key: string): string {
    const socket = req.socket as unknown as KeyedSocket;
    const last = socket[LAST_KEY];
    if (last !== undefined && last.key === key) return last.hash;
    const hash = hashOf(key);
    socket[LAST_KEY] = { key, hash };
    return hash;
  }

  function resolve(url: string, keyHash: string): Resolution | null {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    for (const r of routes) {
      const m = r.pattern.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      try {
        r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
        const query = q < 0 ? NO_QUERY : parseQuery(url.slice(q + 1));
        return { template: r.template, resolved: o.responder.resolve(r.endpoint, { params, query, keyHash }) };
      } catch {
        return null; // 400 / 401 / 404: the Koa path answers with the error contract
      }
    }
    return null;
  }

  // Each representation's headers as a flat [name, value, ...] list, made once: node:http turns a
  // list into the header block with a plain loop, cheaper than its for-in over an object. The list
  // ends in X-Request-Id and, with the limiter on, the two RateLimit fields; the per-request values
  // are written into their slots just before writeHead, which reads the list at once: one list
  // serves every request, and a hit allocates nothing but those values' strings.
  const lists = new WeakMap<Representation, { list: string[]; idSlot: number }>();
  const limiter = o.admission.limiter;
  function headerList(rep: Representation): { list: string[]; idSlot: number } {
    let entry = lists.get(rep);
    if (entry === undefined) {
      const list = Object.entries(rep.headers).flat();
      list.push('x-request-id', '');
      const idSlot = list.length - 1;
      if (limiter?.on) list.push('ratelimit-policy', limiter.policy, 'ratelimit', '');
      lists.set(rep, (entry = { list, idSlot }));
    }
    return entry;
  }

  // The 429 of a key over its rate, as the Koa path writes it (errors.ts errorFields, errorBody):
  // the status, header list and body made once from the limiter's own error, for the first key
  // refused; a refusal writes its request id, Retry-After and RateLimit into their slots. A flooding
  // key's requests are mostly these: through Koa each cost the serving thread tens of microseconds.
  let refused: { status: number; list: string[]; idSlot: number; retrySlot: number; fieldSlot: number; body: Buffer } | undefined;
  function refusalFor(keyHash: string): NonNullable<typeof refused> {
    if (refused !== undefined) return refused;
    const err = limiter!.exceeded(keyHash);
    const body = Buffer.from(errorBody(err.message));
    // The order the Koa path sets them: the request id (served.ts noteRequest), nosniff (app.ts), the error's.
    const list = ['X-Request-Id', '', NOSNIFF_HEADER, NOSNIFF, ...errorFields(err), 'Content-Length', String(body.length)];
    const slot = (name: string): number => list.findIndex((v, i) => i % 2 === 0 && v === name) + 1;
    return (refused = { status: err.status, list, idSlot: 1, retrySlot: slot('Retry-After'), fieldSlot: slot('RateLimit'), body });
  }

  function refuse(res: ServerResponse, r: Refused, keyHash: string, method: string, xRequestId: string | undefined, started: number): void {
    const answer = refusalFor(keyHash);
    const { retryAfter, field } = limiter!.refusal(keyHash);
    const requestId = requestIdFrom(xRequestId);
    const list = answer.list;
    list[answer.idSlot] = requestId;
    list[answer.retrySlot] = retryAfter;
    list[answer.fieldSlot] = field;
    res.writeHead(answer.status, list);
    const body = method === 'HEAD' ? undefined : answer.body;
    res.end(body);
    // As the Koa path would report it: not a hit (the access log writes every such line), the account's 429.
    o.onResponse?.({
      method, route: r.route, template: r.template, status: answer.status, bytes: body === undefined ? 0 : body.length,
      seconds: (performance.now() - started) / 1000, requestId, accountId: r.accountId, hit: false,
    });
  }
  const refusedRead = (r: Resolution): Refused => ({ route: r.resolved.route, template: r.template, accountId: r.resolved.args.accountId });

  /**
   * A POST /mcp (o.post) from a key over its rate: the 429 its handler would write after its 503,
   * 401, 406 and 415 (mcp.ts createMcpHttpHandler), from the same prepared answer as a GET's; any
   * other POST returns false for its handler. The batch's body is never read: node:http discards it
   * once the answer is written and the connection stays open for the next request, as it did when
   * the handler answered (a close would make a flooding client open a connection per post, which
   * costs the serving thread more than the discarded bytes).
   */
  function refusePost(req: IncomingMessage, res: ServerResponse): boolean {
    const post = o.post;
    if (post === undefined || limiter === undefined || !limiter.on || !post.isFor(req.url) || !o.admission.isReady()) return false;
    const started = performance.now();
    const headers = hotHeaders(req.rawHeaders);
    if (headers === null) return false;
    const key = keyFrom(headers.xApiKey, headers.authorization);
    if (key === null || !post.admits(headers.accept, headers.contentType)) return false;
    const keyHash = hashFor(req, key);
    // The account first: an unknown key gets no bucket (its 401 is the handler's).
    const accountId = o.admission.account(keyHash);
    if (accountId === null || !o.admission.overRate(keyHash)) return false;
    refuse(res, { route: post.route, template: post.template, accountId }, keyHash, 'POST', headers.xRequestId, started);
    return true;
  }

  function serveHot(req: IncomingMessage, res: ServerResponse): boolean {
    const method = req.method;
    if (method === 'POST') return refusePost(req, res);
    if ((method !== 'GET' && method !== 'HEAD') || !o.admission.isReady()) return false;
    const started = performance.now();
    const headers = hotHeaders(req.rawHeaders);
    if (headers === null) return false;
    const key = keyFrom(headers.xApiKey, headers.authorization);
    if (key === null) return false;
    const keyHash = hashFor(req, key);
    const url = req.url ?? '/';
    const fresh = wantsFresh(headers.cacheControl);
    const gen = o.responder.refresh(fresh);
    let byKey: Map<string, Resolution> | undefined;
    let r: Resolution | undefined;
    try {
      const sight = o.responder.sight();
      if (sight !== sightSeen || memoBytes >= MEMO_MAX_BYTES) {
        memo.clear();
        memoBytes = 0;
        sightSeen = sight;
      }
      byKey = memo.get(url);
      r = byKey?.get(keyHash);
      // Resolved before the last commit: a project request keeps its resolution (keys and sight have
      // not changed) with its data version read again; a run group's project is looked up again.
      if (r !== undefined && r.resolved.gen !== gen) {
        if (r.resolved.endpoint.scope === 'run_group') r = undefined;
        else byKey!.set(keyHash, (r = { template: r.template, resolved: o.responder.at(r.resolved, gen) }));
      }
    } catch {
      return false; // a failed read (a damaged file): the Koa path answers it with the error contract
    }
    if (r === undefined) {
      const found = resolve(url, keyHash);
      if (found === null) return false;
      if (!byKey) memo.set(url, (byKey = new Map()));
      if (!byKey.has(keyHash)) memoBytes += url.length + found.resolved.cacheKey.length + ENTRY_OVERHEAD_BYTES;
      byKey.set(keyHash, (r = found));
    }
    // A current body, or one within the staleness bound (whose rebuild this starts); else the Koa path waits for a build.
    const answer = o.responder.cached(r.resolved, fresh);
    if (!answer) {
      // No body, and the key over its rate: the Koa path would resolve it as here and answer 429.
      if (!o.admission.overRate(keyHash)) return false;
      refuse(res, refusedRead(r), keyHash, method, headers.xRequestId, started);
      return true;
    }
    // One request, and what its bytes cost beyond that (ratelimit.ts extraCost: a cached body cost no build).
    const rateLimit = o.admission.chargeHit(keyHash, answer.ready);
    if (rateLimit === false) {
      refuse(res, refusedRead(r), keyHash, method, headers.xRequestId, started);
      return true;
    }
    const rep = represent(answer.ready, headers.acceptEncoding, headers.ifNoneMatch, answer.stale);
    const { list, idSlot } = headerList(rep);
    const requestId = requestIdFrom(headers.xRequestId);
    list[idSlot] = requestId;
    if (rateLimit !== '') list[list.length - 1] = rateLimit;
    res.writeHead(rep.status, list);
    const body = method === 'HEAD' ? undefined : (rep.body ?? undefined);
    res.end(body);
    o.onResponse?.({
      method, route: r.resolved.route, template: r.template, status: rep.status, bytes: body === undefined ? 0 : body.length,
      seconds: (performance.now() - started) / 1000, requestId, accountId: r.resolved.args.accountId, hit: true,
    });
    return true;
  }

  return { serve: serveHot, memoBytes: () => memoBytes };
}
