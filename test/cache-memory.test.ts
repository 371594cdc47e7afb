// The cache's byte count is what its bodies really hold: every cached buffer owns a memory block of
// exactly its size, whether built on the event loop or in a build thread (a pooled slice would keep
// a whole 8-40 KiB block alive behind a 1 KB body, and the cache could hold several times its limit).
// And whatever a body's size (bodies over 64 KiB are compressed with less effort), its variants are its JSON.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import type { Ready } from '../src/serve/cache';
import { prepare } from '../src/serve/cache';
import { freshDb, run, W, world, asSource } from './helpers';
import { request, startApi, withKey } from './http';

const rows = (n: number): unknown[] => Array.from({ length: n }, (_, i) => ({ i, text: `row ${i}`, score: i / 7 }));

function blocks(r: Ready): Array<[string, Buffer]> {
  return [['json', r.json], ['gzip', r.gzip], ['br', r.br]].filter((e): e is [string, Buffer] => e[1] !== null);
}

t.test('prepare(): small and large bodies own exactly their bytes', async (t) => {
  for (const body of [{ a: 1 }, rows(400), rows(8000)]) {
    const r = prepare(body, 1, '2026-01-01T00:00:00.000Z');
    for (const [name, b] of blocks(r)) t.equal(b.buffer.byteLength, b.length, `${name} (${b.length} bytes): a block of its own`);
  }
});

t.test('prepare(): a body of any size decompresses to its JSON from either encoding, and is smaller', async (t) => {
  for (const n of [40, 400, 8000, 40000]) {
    const r = prepare(rows(n), 1, '2026-01-01T00:00:00.000Z');
    t.ok(r.gzip && r.br, `${n} rows (${r.json.length} bytes): compressed`);
    t.ok(gunzipSync(r.gzip!).equals(r.json), `${n} rows: gzip is the JSON`);
    t.ok(brotliDecompressSync(r.br!).equals(r.json), `${n} rows: br is the JSON`);
    t.ok(r.br!.length < r.json.length / 4 && r.gzip!.length < r.json.length / 4, `${n} rows: both at least 4x smaller`);
  }
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
    for (const [key, ready] of api.service.cache.lru.entries()) {
      for (const [name, b] of blocks(ready)) t.equal(b.buffer.byteLength, b.length, `${key.split('|')[0]} ${name}: ${b.length} bytes in a block of ${b.buffer.byteLength}`);
    }
  });
}
