// The pages served beside the API: the API reference at {base}/docs (always; public, it
// shows only the public OpenAPI document) and, with `serve --demo`, the reference dashboard at /.
// Their files are made by `npm run build` (scripts/build-web.ts) into dist/web/: the reference's
// standalone bundle copied from its npm package, the dashboard bundled by esbuild. Every asset a page
// loads is one of these files, served from here: no CDN, and the Content-Security-Policy keeps the
// browser from fetching anything from elsewhere.
import fs from 'node:fs';
import path from 'node:path';
import type { Context } from 'koa';
import { packageRoot } from '../../lib/root';
import { compressed, strongEtag, THOROUGH } from '../bodies/encode';
import { httpError } from '../request/errors';
import { encodedEtag, etagMatches, type Encoding } from '../http/send';

/** A demo fixture key, listed on the dashboard (they are public in the README too). */
export interface DemoKey {
  account: string;
  key: string;
  revoked: boolean;
}

export interface PagesOptions {
  basePath: string;
  /** Serve the dashboard at / with these keys to pick from (serve --demo); no dashboard when absent. */
  dashboard?: { keys: readonly DemoKey[] };
  /** Where the built files are (dist/web/ under the package by default); tests point elsewhere. */
  dir?: string;
}

/** What a page may load: only this origin (plus the data:/blob: URLs the reference makes itself). */
const CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob:",
  "font-src 'self' data:", "connect-src 'self'", "worker-src 'self' blob:", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
].join('; ');

/** A file ready to send: compressed once, on its first request (the reference's bundle is 4 MB). */
interface Asset {
  type: string;
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
  etag: string;
}

function asset(type: string, bytes: Buffer): Asset {
  return { type, identity: bytes, ...compressed(bytes, THOROUGH), etag: strongEtag(bytes) };
}

/** One route: the built file it serves, and what the bytes become (the dashboard's page gets its keys). */
interface Page {
  route: string;
  file: string;
  type: string;
  fill?: (text: string) => string;
}

const HTML = 'text/html; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** The keys as a JSON data block inside the page: `<` escaped so no value can close the script element. */
function withKeys(keys: readonly DemoKey[]): (text: string) => string {
  const json = JSON.stringify(keys.map((k) => ({ account: k.account, key: k.key, revoked: k.revoked }))).replace(/</g, '\\u003c');
  return (text) => text.replace('"__DEMO_KEYS__"', json);
}

function pagesOf(o: PagesOptions): Map<string, Page> {
  const pages: Page[] = [
    { route: 'docs', file: 'docs.html', type: HTML },
    { route: 'docs', file: 'docs.js', type: JS },
    { route: 'docs', file: 'scalar.js', type: JS },
  ];
  const byPath = new Map<string, Page>([
    [`${o.basePath}/docs`, pages[0]!],
    [`${o.basePath}/docs/docs.js`, pages[1]!],
    [`${o.basePath}/docs/scalar.js`, pages[2]!],
  ]);
  if (o.dashboard) {
    byPath.set('/', { route: 'dashboard', file: 'index.html', type: HTML, fill: withKeys(o.dashboard.keys) });
    byPath.set('/dashboard.js', { route: 'dashboard', file: 'dashboard.js', type: JS });
    byPath.set('/dashboard.css', { route: 'dashboard', file: 'dashboard.css', type: CSS });
  }
  return byPath;
}

/** Koa middleware answering the pages' paths (GET, HEAD; other methods 405); other paths pass on. */
export function pagesMiddleware(o: PagesOptions) {
  const dir = o.dir ?? path.join(packageRoot(), 'dist', 'web');
  const pages = pagesOf(o);
  const loaded = new Map<string, Asset>();

  function load(page: Page): Asset {
    let a = loaded.get(page.file);
    if (a) return a;
    let text: Buffer;
    try {
      text = fs.readFileSync(path.join(dir, page.file));
    } catch {
      // Served from a checkout that was never built (tsx from src/): say what to run.
      throw httpError('pages_not_built', `The web pages are not built (${page.file} is missing): run npm run build`);
    }
    a = asset(page.type, page.fill ? Buffer.from(page.fill(text.toString('utf8'))) : text);
    loaded.set(page.file, a);
    return a;
  }

  return async function servePage(ctx: Context, next: () => Promise<void>): Promise<void> {
    const page = pages.get(ctx.path);
    if (!page) return next();
    ctx.state.route = page.route;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw httpError('method_not_allowed');
    send(ctx, load(page));
  };
}

function send(ctx: Context, a: Asset): void {
  const accepted = ctx.acceptsEncodings('br', 'gzip', 'identity');
  const encoding: Encoding = accepted === 'br' || accepted === 'gzip' ? accepted : 'identity';
  ctx.set({
    ETag: encodedEtag(a.etag, encoding),
    // Revalidated on every load (a 304 when unchanged): a rebuilt bundle is picked up at once.
    'Cache-Control': 'public, no-cache',
    Vary: 'Accept-Encoding',
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
  });
  const inm = ctx.get('if-none-match');
  if (inm && etagMatches(inm, a.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = a.type;
  if (encoding !== 'identity') ctx.set('Content-Encoding', encoding);
  ctx.body = encoding === 'br' ? a.br : encoding === 'gzip' ? a.gzip : a.identity;
}
