import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import type { Endpoint } from '../readmodels';
import { keyHash, presentedKey } from './auth';
import type { RateLimiter } from './ratelimit';
import type { Responder } from './responder';
import { represent } from './send';

interface Route {
  endpoint: Endpoint;
  pattern: RegExp;
  names: string[];
}

const NO_QUERY: querystring.ParsedUrlQuery = Object.freeze({}) as querystring.ParsedUrlQuery;

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
 * node:http with the ready bytes (no Koa, no JSON.stringify, no ajv, no SQLite unless data changed).
 * Everything else (misses, errors, other methods) returns false and goes to the Koa app, which
 * shares the same Responder, so both paths give the same answer.
 */
export function createHotPath(o: HotPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const routes = o.endpoints.map((e) => compile(o.basePath, e));
  return function serveHot(req, res): boolean {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !o.isReady()) return false;
    const started = performance.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    let route: Route | undefined;
    let m: RegExpExecArray | null = null;
    for (const r of routes) if ((m = r.pattern.exec(path))) { route = r; break; }
    const key = presentedKey(req.headers);
    if (!route || !m || key === null) return false;
    const params: Record<string, string> = {};
    route.names.forEach((n, i) => (params[n] = decodeURIComponent(m![i + 1]!)));
    let cacheKey: string;
    let hash: string;
    try {
      const resolved = o.responder.resolve(route.endpoint, { params, query: q < 0 ? NO_QUERY : querystring.parse(url.slice(q + 1)), keyHash: keyHash(key) });
      cacheKey = resolved.cacheKey;
      hash = resolved.keyHash;
    } catch {
      return false;
    }
    const ready = o.responder.cache.hit(route.endpoint.name, cacheKey);
    if (!ready) return false;
    if (!o.limiter.tryTake(hash)) {
      o.limited.add(req);
      return false;
    }
    const rep = represent(ready, req.headers['accept-encoding'], req.headers['if-none-match'] as string | undefined);
    if (rep.body) rep.headers['content-length'] = String(rep.body.length);
    res.writeHead(rep.status, rep.headers);
    res.end(req.method === 'HEAD' ? undefined : (rep.body ?? undefined));
    o.onResponse?.(route.endpoint.name, rep.status, (performance.now() - started) / 1000);
    return true;
  };
}
