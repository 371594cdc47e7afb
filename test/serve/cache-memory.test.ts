// The cache's byte count is what its bodies really hold: every cached buffer owns a memory block of
// exactly its size, whether built on the event loop or in a build thread (a pooled slice would keep
// a whole 8-40 KiB block alive behind a 1 KB body, and the cache could hold several times its limit).
// And whatever a body's size (bodies over 64 KiB are compressed with less effort, and their gzip
// variant waits for a request that takes gzip but not br), its variants are its JSON.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import type { Ready } from '../../src/serve/bodies/encode';
import { gzipOf, encodeBody, readySize } from '../../src/serve/bodies/encode';
import { represent } from '../../src/serve/http/send';
import { freshDb } from '../helpers/db';
import { run, W, world, asSource } from '../helpers/events';
import { request, startApi, withKey } from '../helpers/http';

const rows = (n: number): unknown[] => Array.from({ length: n }, (_, i) => ({ i, text: `row ${i}`, score: i / 7 }));

function blocks(r: Ready): Array<[string, Buffer]> {
  return [['json', r.json], ['gzip', r.gzip], ['br', r.br]].filter((e): e is [string, Buffer] => e[1] !== null);
}

t.test('encodeBody(): small and large bodies own exactly their bytes', async (t) => {
  for (const body of [{ a: 1 }, rows(400), rows(8000)]) {
    const r = encodeBody(body, 1, '2026-01-01T00:00:00.000Z');
    for (const [name, b] of blocks(r)) t.equal(b.buffer.byteLength, b.length, `${name} (${b.length} bytes): a block of its own`);
  }
});

t.test('encodeBody(): a body of any size decompresses to its JSON from either encoding, and is smaller', async (t) => {
  for (const n of [40, 400, 8000, 40000]) {
    const r = encodeBody(rows(n), 1, '2026-01-01T00:00:00.000Z');
    t.ok(gzipOf(r) && r.br, `${n} rows (${r.json.length} bytes): compressed`);
    t.ok(gunzipSync(r.gzip!).equals(r.json), `${n} rows: gzip is the JSON`);
    t.ok(brotliDecompressSync(r.br!).equals(r.json), `${n} rows: br is the JSON`);
    t.ok(r.br!.length < r.json.length / 4 && r.gzip!.length < r.json.length / 4, `${n} rows: both at least 4x smaller`);
  }
});

t.test('a large body: brotli with the build, gzip on the first request that takes gzip but not br, once', async (t) => {
  const small = encodeBody(rows(400), 1, '2026-01-01T00:00:00.000Z');
  t.ok(small.gzip && !small.gzipLater, `a body of ${small.json.length} bytes has both variants at once`);
  const r = encodeBody(rows(8000), 1, '2026-01-01T00:00:00.000Z');
  t.ok(r.json.length > 64 * 1024 && r.br !== null, `a body of ${r.json.length} bytes has its brotli variant`);
  t.same([r.gzip, r.gzipLater], [null, true], 'and no gzip variant yet');
  const counted = readySize(r);
  t.ok(counted >= r.json.length + r.br!.length * 2, 'the cache counts the gzip variant before it is made');

  t.equal(represent(r, 'gzip, deflate, br', undefined).headers['content-encoding'], 'br', 'a client that takes br gets br');
  t.equal(represent(r, undefined, undefined).body, r.json, 'a client that takes neither gets the JSON');
  t.equal(r.gzip, null, 'neither made the gzip variant');

  const gz = represent(r, 'gzip, deflate', undefined);
  t.equal(gz.headers['content-encoding'], 'gzip', 'a gzip-only client gets gzip');
  t.ok(gz.body && gunzipSync(gz.body).equals(r.json), 'whose bytes are the JSON');
  t.equal(gz.body, r.gzip, 'kept on the body');
  t.equal(gz.headers['content-length'], String(r.gzip!.length));
  t.equal(gz.headers.etag, `"${r.etag.slice(1, -1)}-gz"`, 'with the gzip ETag');
  t.equal(represent(r, 'gzip', undefined), gz, 'the next gzip request reuses it: compressed once');
  t.equal(represent(r, 'gzip', r.etag).status, 304, 'a conditional request still gets 304');
  t.ok(readySize(r) <= counted, `the count made in advance (${counted}) covers the variant made (${readySize(r)})`);
});

for (const buildThreads of [0, 1]) {
  t.test(`bodies cached after ${buildThreads ? 'a build thread' : 'an inline build'} own exactly their bytes`, async (t) => {
    const { db, projector } = freshDb(t);
    projector.applyBatch(asSource([...world(), ...Array.from({ length: 30 }, (_, i) => run({ n: i + 1, brand: 1 + (i % 3), citations: [`https://x.com/${i}`] }))]));
    const api = await startApi({ db, buildThreads });
    t.teardown(() => api.close());
    for (const path of ['/projects', `/projects/${W.project}`, `/projects/${W.project}/citations`, `/projects/${W.project}/visibility`]) {
      t.equal((await request(api.base + path, withKey(W.key))).status, 200, path);
    }
    t.ok(api.service.cache.lru.size >= 4, 'the bodies are cached');
    for (const [key, { ready }] of api.service.cache.lru.entries()) {
      for (const [name, b] of blocks(ready)) t.equal(b.buffer.byteLength, b.length, `${key.split('|')[0]} ${name}: ${b.length} bytes in a block of ${b.buffer.byteLength}`);
    }
  });
}

for (const buildThreads of [0, 1]) {
  t.test(`a large body over HTTP (${buildThreads ? 'a build thread' : 'an inline build'}): gzip first, then br, then neither, all the same JSON`, async (t) => {
    const { db, projector } = freshDb(t);
    projector.applyBatch(asSource([...world(), ...Array.from({ length: 500 }, (_, i) => run({ n: i + 1, brand: 1, citations: [`https://example.com/a-long-path-for-a-cited-page/${i}`] }))]));
    const api = await startApi({ db, buildThreads });
    t.teardown(() => api.close());
    const url = `${api.base}/projects/${W.project}/citations?limit=1000`;
    const gz = await request(url, withKey(W.key, { 'accept-encoding': 'gzip' }));
    t.equal(gz.headers['content-encoding'], 'gzip');
    t.ok(gz.text.length > 64 * 1024, `a body of ${gz.text.length} bytes`);
    const br = await request(url, withKey(W.key, { 'accept-encoding': 'br' }));
    t.equal(br.headers['content-encoding'], 'br');
    const plain = await request(url, withKey(W.key));
    t.equal(plain.headers['content-encoding'], undefined);
    t.equal(gz.text, plain.text, 'gzip decompresses to the JSON');
    t.equal(br.text, plain.text, 'br decompresses to the JSON');
    t.equal(api.service.cache.stats('citations').builds, 1, 'built once');
    const again = await request(url, withKey(W.key, { 'accept-encoding': 'gzip' }));
    t.ok(again.raw.equals(gz.raw), 'the same gzip bytes the next time');
  });
}
