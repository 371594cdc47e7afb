// The pages' HTTP side (src/serve/docs/pages.ts): the API reference is public and always on,
// the dashboard only when asked for (serve --demo), every file with an ETag, 304, gzip/br, and a
// Content-Security-Policy that keeps the pages on this origin. test/e2e/browser.test.ts renders them.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Koa from 'koa';
import t from 'tap';
import { errorMiddleware } from '../../src/serve/request/errors';
import { pagesMiddleware } from '../../src/serve/docs/pages';
import { tmpDb, tmpDir } from '../helpers/db';
import { request, startApi, type Api } from '../helpers/http';
import { ROOT } from '../helpers/paths';

const WEB = path.join(ROOT, 'dist', 'web');
const KEYS = [{ account: 'Acme <script>', key: 'k-1', revoked: false }, { account: 'Old', key: 'k-0', revoked: true }];

t.test('pages of a built checkout', async (t) => {
  t.ok(fs.existsSync(path.join(WEB, 'scalar.js')) && fs.existsSync(path.join(WEB, 'dashboard.js')), 'dist/web/ is built (npm run build)');
  const { db } = tmpDb();
  const plain = await startApi({ db, buildThreads: 0 });
  const demo = await startApi({ db, buildThreads: 0, dashboard: { keys: KEYS } });
  t.teardown(async () => {
    await plain.close();
    await demo.close();
    db.close();
  });
  const origin = (api: Api): string => new URL(api.base).origin;

  t.test('the reference: public, HTML and its scripts, all from here', async (t) => {
    const page = await request(`${plain.base}/docs`);
    t.equal(page.status, 200, 'no key needed');
    t.match(page.headers['content-type'], /^text\/html/);
    t.match(page.text, '<script src="docs/scalar.js"></script>');
    t.notMatch(page.text, /https?:\/\//, 'the page names no other host');
    t.match(page.headers['content-security-policy'], "default-src 'self'");
    t.match(page.headers['content-security-policy'], "connect-src 'self'");
    const settings = await request(`${plain.base}/docs/docs.js`);
    t.match(settings.text, "url: 'openapi.json'", 'rendered from the served document');
    t.match(settings.text, 'telemetry: false');
    t.match(settings.text, 'withDefaultFonts: false');
    const bundle = await request(`${plain.base}/docs/scalar.js`, { headers: { 'accept-encoding': 'br, gzip' } });
    t.equal(bundle.status, 200);
    t.equal(bundle.headers['content-encoding'], 'br', 'the 4 MB bundle goes compressed');
    t.match(bundle.headers['content-type'], /^text\/javascript/);
    t.equal(bundle.text, fs.readFileSync(path.join(WEB, 'scalar.js'), 'utf8'), 'the bytes of dist/web/scalar.js');
    t.notMatch(bundle.text.slice(-200), 'sourceMappingURL', 'no source map to ask for');
  });

  t.test('ETag per encoding, 304, HEAD', async (t) => {
    const id = await request(`${plain.base}/docs`);
    const gz = await request(`${plain.base}/docs`, { headers: { 'accept-encoding': 'gzip' } });
    t.match(id.headers.etag, /^"[^"]+"$/);
    t.not(gz.headers.etag, id.headers.etag, 'each representation its own tag');
    t.equal(gz.text, id.text);
    for (const tag of [id.headers.etag!, gz.headers.etag!, `W/${id.headers.etag!}`]) {
      const again = await request(`${plain.base}/docs`, { headers: { 'if-none-match': tag } });
      t.equal(again.status, 304, `If-None-Match: ${tag}`);
      t.equal(again.raw.length, 0);
    }
    const head = await request(`${plain.base}/docs`, { method: 'HEAD' });
    t.equal(head.status, 200);
    t.equal(head.headers.etag, id.headers.etag);
    t.equal(head.raw.length, 0);
    const post = await request(`${plain.base}/docs`, { method: 'POST' });
    t.equal(post.status, 405);
    t.equal(post.headers.allow, 'GET, HEAD');
  });

  t.test('the dashboard only when asked for, with its keys in the page', async (t) => {
    for (const p of ['/', '/dashboard.js', '/dashboard.css']) t.equal((await request(origin(plain) + p)).status, 404, `${p}: not served without it`);
    const page = await request(`${origin(demo)}/`);
    t.equal(page.status, 200);
    t.match(page.headers['content-type'], /^text\/html/);
    const block = /<script type="application\/json" id="demo-keys">(.*?)<\/script>/s.exec(page.text);
    t.ok(block, 'the keys as a JSON data block');
    t.notMatch(block![1]!, '<', 'no value can close the script element');
    t.same(JSON.parse(block![1]!), KEYS, 'the keys it was given, revoked ones marked');
    t.notMatch(page.text, /https?:\/\//, 'the page names no other host');
    const js = await request(`${origin(demo)}/dashboard.js`);
    t.equal(js.status, 200);
    t.match(js.headers['content-type'], /^text\/javascript/);
    t.equal(js.text, fs.readFileSync(path.join(WEB, 'dashboard.js'), 'utf8'));
    t.equal((await request(`${origin(demo)}/dashboard.css`)).status, 200);
    t.equal((await request(`${demo.base}/docs`)).status, 200, 'the reference too');
  });
});

t.test('a checkout that was never built says what to run', async (t) => {
  const app = new Koa();
  app.use(errorMiddleware(() => undefined));
  app.use(pagesMiddleware({ basePath: '/v1/public', dir: fs.realpathSync(tmpDir('vis-noweb-')) }));
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const r = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/public/docs`);
  t.equal(r.status, 503);
  t.match((r.json as { message: string }).message, /npm run build/);
});
