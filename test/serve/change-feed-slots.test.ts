// Change-feed slots (the per-key cap on open streams) are given back on every way a stream can end:
// requests pipelined on one connection, a client that half-closes its side, a connection reset.
// Raw sockets over loopback, so the bytes on the wire are exactly what a proxy or client would send.
// After each, the key must be able to open as many streams as the cap allows, over HTTP.
import http from 'node:http';
import net from 'node:net';
import t, { type Test } from 'tap';
import { freshDb } from '../helpers/db';
import { asSource, run, W, world } from '../helpers/events';
import { startApi, type Api } from '../helpers/http';

const CAP = 3;

async function open(tt: Test): Promise<{ api: Api; port: number; path: string }> {
  const { db, projector } = freshDb(tt);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  const api = await startApi({ db, buildThreads: 0, changeFeed: { heartbeatMs: 60_000, pollMs: 10, maxStreamsPerKey: CAP, retryMs: 50 } });
  tt.teardown(() => api.close());
  const url = new URL(`${api.base}/projects/${W.project}/changes`);
  return { api, port: Number(url.port), path: url.pathname };
}

const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${W.key}\r\naccept: text/event-stream\r\n\r\n`;

/** A raw connection that sent `requests` (pipelined when more than one), resolved once the first stream said `ready`. */
function rawStreams(port: number, path: string, requests: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(get(path).repeat(requests)));
    let text = '';
    const onData = (c: Buffer): void => {
      text += c.toString();
      if (text.includes('event: ready')) {
        s.off('data', onData);
        s.on('data', () => undefined); // keep reading: a client that is alive
        resolve(s);
      }
    };
    s.on('data', onData);
    s.on('error', () => undefined); // a reset is what some tests do
    s.once('close', () => reject(new Error(`closed before ready: ${text}`)));
  });
}

/** Waits (bounded) for the feed to count no open stream: the server noticed every way they ended. */
async function noneOpen(api: Api): Promise<number> {
  for (let i = 0; i < 1000 && api.service.changes.open > 0; i++) await new Promise((r) => setTimeout(r, 10));
  return api.service.changes.open;
}

/** Opens CAP streams of the key over HTTP: their statuses; closes them. */
async function openCap(port: number, path: string): Promise<number[]> {
  const reqs: http.ClientRequest[] = [];
  const statuses = await Promise.all(Array.from({ length: CAP }, () => new Promise<number>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { 'x-api-key': W.key }, agent: false }, (res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    req.on('error', reject);
    reqs.push(req);
  })));
  for (const r of reqs) r.destroy();
  return statuses;
}

const ALL_OK = Array.from({ length: CAP }, () => 200);

t.test('streams pipelined on one connection, the connection then closed: every slot is given back', async (t) => {
  const { api, port, path } = await open(t);
  const s = await rawStreams(port, path, CAP);
  // The later two wait behind the first response, which never ends; they hold slots all the same.
  for (let i = 0; i < 1000 && api.service.changes.open < CAP; i++) await new Promise((r) => setTimeout(r, 10));
  t.equal(api.service.changes.open, CAP, 'the pipelined requests took the key\'s slots');
  s.destroy();
  t.equal(await noneOpen(api), 0, 'no stream counted open after the connection closed');
  t.same(await openCap(port, path), ALL_OK, `the key opens ${CAP} streams again`);
});

t.test('a client that half-closes its side: the stream ends and its slot is given back', async (t) => {
  const { api, port, path } = await open(t);
  const s = await rawStreams(port, path, 1);
  const ended = new Promise<void>((resolve) => s.once('end', resolve));
  s.end(); // FIN: nothing more will be asked on this connection
  await ended;
  t.pass('the server ended its side too');
  t.equal(await noneOpen(api), 0, 'no stream counted open');
  t.same(await openCap(port, path), ALL_OK, `the key opens ${CAP} streams again`);
});

t.test('pipelined streams, then a half-close: every slot is given back', async (t) => {
  const { api, port, path } = await open(t);
  const s = await rawStreams(port, path, CAP);
  for (let i = 0; i < 1000 && api.service.changes.open < CAP; i++) await new Promise((r) => setTimeout(r, 10));
  const ended = new Promise<void>((resolve) => s.once('end', resolve));
  s.end();
  await ended;
  t.equal(await noneOpen(api), 0, 'no stream counted open');
  t.same(await openCap(port, path), ALL_OK, `the key opens ${CAP} streams again`);
  s.destroy();
});

t.test('a connection reset (RST): every slot is given back', async (t) => {
  const { api, port, path } = await open(t);
  const s = await rawStreams(port, path, 2);
  for (let i = 0; i < 1000 && api.service.changes.open < 2; i++) await new Promise((r) => setTimeout(r, 10));
  s.resetAndDestroy();
  t.equal(await noneOpen(api), 0, 'no stream counted open');
  t.same(await openCap(port, path), ALL_OK, `the key opens ${CAP} streams again`);
});
