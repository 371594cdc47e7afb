import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import type { Endpoint } from '../readmodels';
import { keyHash as hashOf, presentedKey } from './auth';
import type { RateLimiter } from './ratelimit';
import type { Responder } from './responder';
import { represent } from './send';

interface Route {
  endpoint: Endpoint;
  pattern: RegExp;
  names: string[];
}

/** A request line and key resolved to a cache entry: valid for one Access generation. */
interface Resolution {
  route: string;
  cacheKey: string;
}

const NO_QUERY: querystring.ParsedUrlQuery = Object.freeze({}) as querystring.ParsedUrlQuery;
/** Resolutions remembered at most; the memo is emptied when full (dashboards ask for few distinct URLs). */
const MEMO_MAX = 50_000;

/** '/projects/:project_id/visibility' -> /^\/v1\/public\/projects\/([^/]+)\/visibility$/ */
function compile(basePath: string, endpoint: Endpoint): Route {
  const names: string[] = [];
  const source = (basePath + endpoint.path).split('/').map((seg) => {
    if (!seg.startsWith(':')) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    names.push(seg.slice(1));
    return '([^/]+)';
  }).join('\\/');
  return { endpoint, pattern: new RegExp(`^${source}$`), names };
}

export interface HotPathOptions {
  basePath: string;
  endpoints: readonly Endpoint[];
  responder: Responder;
  limiter: RateLimiter;
  /** Requests the hot path turned away for their rate: the Koa path answers 429 without charging again. */
  limited: WeakSet<IncomingMessage>;
  isReady: () => boolean;
  onResponse?: (route: string, status: number, seconds: number) => void;
}

/**
 * The hot path: a GET or HEAD whose body is already in the cache is answered straight from
 * node:http with the ready bytes and prepared headers (no Koa, no JSON.stringify, no ajv, no
 * SQLite unless data changed). Everything else (misses, errors, other methods) returns false and
 * goes to the Koa app, which shares the same Responder, so both paths give the same answer.
 *
 * Resolving a request (route, key, scope, cache key) is remembered per key hash and URL until the
 * Responder's generation changes (any commit): a repeated request costs one SHA-256 of the key
 * and two map lookups before its bytes are written.
 */
export function createHotPath(o: HotPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const routes = o.endpoints.map((e) => compile(o.basePath, e));
  const memo = new Map<string, Resolution | null>();
  let generation = -1;

  function resolve(url: string, keyHash: string): Resolution | null {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    for (const r of routes) {
      const m = r.pattern.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      try {
        r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
        const query = q < 0 ? NO_QUERY : querystring.parse(url.slice(q + 1));
        return { route: r.endpoint.name, cacheKey: o.responder.resolve(r.endpoint, { params, query, keyHash }).cacheKey };
      } catch {
        return null; // 400 / 401 / 404: the Koa path answers with the error contract
      }
    }
    return null;
  }

  return function serveHot(req, res): boolean {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !o.isReady()) return false;
    const started = o.onResponse ? performance.now() : 0;
    const key = presentedKey(req.headers);
    if (key === null) return false;
    const keyHash = hashOf(key);
    const url = req.url ?? '/';
    const gen = o.responder.refresh();
    if (gen !== generation) {
      memo.clear();
      generation = gen;
    }
    const memoKey = `${keyHash} ${url}`;
    let r = memo.get(memoKey);
    if (r === undefined) {
      if (memo.size >= MEMO_MAX) memo.clear();
      memo.set(memoKey, (r = resolve(url, keyHash)));
    }
    if (r === null) return false;
    const ready = o.responder.cache.hit(r.route, r.cacheKey);
    if (!ready) return false;
    if (!o.limiter.tryTake(keyHash)) {
      o.limited.add(req);
      return false;
    }
    const rep = represent(ready, req.headers['accept-encoding'], req.headers['if-none-match'] as string | undefined);
    res.writeHead(rep.status, rep.headers);
    res.end(req.method === 'HEAD' ? undefined : (rep.body ?? undefined));
    o.onResponse?.(r.route, rep.status, (performance.now() - started) / 1000);
    return true;
  };
}
