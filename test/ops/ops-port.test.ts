// The operators' port and the cache-stats command.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { bootstrapFrom } from '../../src/ingest/bootstrap';
import { createMetrics, createOpsServer } from '../../src/ops';
import { digest, openDb } from '../../src/store';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, snapshotPort, startApi, withKey } from '../helpers/http';
import { ROOT } from '../helpers/paths';
import { sleep } from '../helpers/wait';
import { cliArgv, CLI_STACK } from '../helpers/processes';

const run = promisify(execFile);

t.test('/healthz, /readyz, /cache, /metrics and cache-stats', async (t) => {
  const { db } = await demoDb();
  let observe: (r: string, s: number, sec: number) => void = () => {};
  const api = await startApi({ db, onResponse: (s) => observe(s.route, s.status, s.seconds), cacheMaxBytes: 64 * 1024 * 1024 });
  const metrics = createMetrics(api.service.cache);
  observe = metrics.observeRequest;
  let ready = true;
  const ops = createOpsServer({ cache: api.service.cache, readiness: () => ({ ready, reasons: ready ? [] : ['loading'] }), metrics: metrics.render });
  await new Promise<void>((resolve) => ops.listen(0, '127.0.0.1', resolve));
  const opsUrl = `http://127.0.0.1:${(ops.address() as AddressInfo).port}`;
  t.teardown(async () => {
    ops.close();
    await api.close();
    db.close();
  });
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  for (let i = 0; i < 3; i++) await request(`${api.base}/projects/${project}/visibility`, withKey(key));
  await request(`${api.base}/projects/${project}/nope`, withKey(key));

  t.same((await request(`${opsUrl}/healthz`)).json, { status: 'ok' });
  t.equal((await request(`${opsUrl}/readyz`)).status, 200);
  ready = false;
  const notReady = await request(`${opsUrl}/readyz`);
  t.equal(notReady.status, 503);
  t.same((notReady.json as { reasons: string[] }).reasons, ['loading']);

  const cache = (await request(`${opsUrl}/cache`)).json as Record<string, unknown> & { routes: Record<string, { hits: number; misses: number; builds: number; hit_ratio: number }> };
  t.equal(cache.max_bytes, 64 * 1024 * 1024);
  t.equal(cache.entries, 2, 'the project list and one visibility report');
  t.ok((cache.bytes as number) > 0);
  t.same(cache.routes.visibility, { hits: 2, stale: 0, kept: 0, misses: 1, builds: 1, capped: 0, hit_ratio: 2 / 3 });
  for (const k of ['hits', 'misses', 'hit_ratio', 'evictions', 'builds']) t.ok(k in cache, `/cache has ${k}`);

  const prom = (await request(`${opsUrl}/metrics`)).text;
  t.match(prom, /visibility_http_request_duration_seconds_count\{route="visibility",status="200"\} 3/);
  t.match(prom, /visibility_http_request_duration_seconds_count\{route="unmatched",status="404"\} 1/);
  t.match(prom, /visibility_cache_hits\{route="visibility"\} 2/);
  t.match(prom, /visibility_cache_max_bytes 67108864/);

  const cli = await run(process.execPath, cliArgv(['cache-stats', '--ops-url', opsUrl], CLI_STACK), { cwd: ROOT });
  t.match(cli.stdout, /entries 2 +bytes/);
  t.match(cli.stdout, /visibility +2 +1 +1 +66\.7%/);
  const down = await run(process.execPath, cliArgv(['cache-stats', '--ops-url', 'http://127.0.0.1:9'], CLI_STACK), { cwd: ROOT }).catch((e: { code: number; stderr: string }) => e);
  t.equal((down as { code: number }).code, 2);
  t.match((down as { stderr: string }).stderr, /cannot reach the ops endpoint at http:\/\/127\.0\.0\.1:9/);
  t.equal((down as { stderr: string }).stderr.trim().split('\n').length, 1, 'one line');
});

t.test('the LRU stays within CACHE_MAX_BYTES and counts evictions', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db, cacheMaxBytes: 40 * 1024 });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const projects = (await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>;
  for (const p of projects) {
    for (const s of ['/visibility', '/citations', '/mentions', '/runs', '/forum/opportunities']) {
      t.equal((await request(`${api.base}/projects/${p.id}${s}`, withKey(key))).status, 200);
    }
  }
  t.ok(api.service.cache.lru.calculatedSize <= 40 * 1024, 'within the byte bound');
  t.ok(api.service.cache.evictions > 0, 'evictions were counted');
});

t.test('/snapshot: copies orphaned by a dead process are removed when the ops port starts; its own copy is gone after sending', async (t) => {
  const { db, file } = await demoDb();
  const dir = path.dirname(file);
  const base = path.basename(file);
  // A pid that is certainly dead: a process that has exited.
  const dead = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['-e', '0']);
    child.on('exit', () => resolve(child.pid!));
  });
  const orphan = path.join(dir, `.${base}.snapshot-${dead}-aaaaaa`);
  const live = path.join(dir, `.${base}.snapshot-${process.ppid}-bbbbbb`); // the test runner's: alive
  const otherDb = path.join(dir, `.other.db.snapshot-${dead}-cccccc`); // another database's
  for (const d of [orphan, live, otherDb]) {
    fs.mkdirSync(d);
    fs.writeFileSync(path.join(d, 'snapshot.db'), 'partial copy');
  }
  const opsUrl = await snapshotPort(t, db, file);
  t.notOk(fs.existsSync(orphan), 'the dead process\'s copy of this database is removed');
  t.ok(fs.existsSync(live), 'a copy whose process runs is left alone');
  t.ok(fs.existsSync(otherDb), 'another database\'s copy is left alone');

  const res = await fetch(`${opsUrl}/snapshot`);
  t.equal(res.status, 200);
  const bytes = Buffer.from(await res.arrayBuffer());
  t.equal(createHash('sha256').update(bytes).digest('hex'), res.headers.get('x-snapshot-sha256'), 'the checksum header matches the bytes');
  t.equal(bytes.subarray(0, 16).toString('latin1'), 'SQLite format 3\0', 'a database file');
  // The copy is removed once the response has closed, a moment after the client has the bytes: wait for it (up to 5 s).
  const copies = (): string[] => fs.readdirSync(dir).filter((n) => n.startsWith(`.${base}.snapshot-${process.pid}-`));
  for (const until = Date.now() + 5000; copies().length > 0 && Date.now() < until;) await sleep(10);
  t.same(copies(), [], 'no copy of this process is left behind');
});

t.test('a replica bootstraps from /snapshot the same data, whatever a killed bootstrap left beside its file', async (t) => {
  const { db, file } = await demoDb();
  const opsUrl = await snapshotPort(t, db, file);
  const dir = fs.mkdtempSync(path.join(path.dirname(file), 'replica-'));
  const replica = path.join(dir, 'replica.db');
  // A bootstrap killed while it opened its download leaves DBFILE.part and a WAL of committed frames beside it.
  const other = openDb(path.join(dir, 'other.db'), { fast: true });
  other.pragma('wal_autocheckpoint = 0');
  other.exec("CREATE TABLE stale (x TEXT); INSERT INTO stale VALUES ('left by a killed bootstrap')");
  fs.copyFileSync(path.join(dir, 'other.db-wal'), `${replica}.part-wal`);
  other.close();
  fs.writeFileSync(`${replica}.part`, 'half a download');

  const got = await bootstrapFrom(opsUrl, replica);
  t.equal(got.bytes, fs.statSync(replica).size, 'the snapshot is in place');
  const copy = openDb(replica, { readonly: true });
  t.teardown(() => copy.close());
  t.equal(digest(copy), digest(db), 'the replica holds the peer\'s data, nothing else');
  t.same(fs.readdirSync(dir).filter((n) => n.startsWith('replica.db.part')), [], 'nothing of the killed bootstrap is left');
});
