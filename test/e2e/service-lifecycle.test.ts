// The service's life as an orchestrator sees it: real signals to a real `serve` process with
// clients connected. SIGTERM/SIGINT: /readyz turns not-ready, the listener stops accepting,
// in-flight requests finish, idle keep-alive connections close, exit 0 within 10 s; a second
// signal exits at once (128 + signal). A taken port exits 2 with one line. Also the library entry
// (start/close in-process), methods other than GET/HEAD, bounded memory for unknown callers, and
// 400 messages that do not echo long input.
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { start, StartError } from '../../src/index';
import { MEMO_MAX_BYTES } from '../../src/serve/http/hot';
import { openDb, Projector } from '../../src/store';
import { activeKeys } from '../helpers/demo';
import { asSource, run, W, world } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { silentLogger } from '../../src/lib/log';
import { request, startApi, withKey } from '../helpers/http';
import { runCli, spawnServe, startServe, type ServeProcess } from '../helpers/processes';
import { sleep } from '../helpers/wait';

/** A small served database: the helpers' world with a few runs. */
function makeDb(tt: Test): string {
  const dir = tmpDir('lifecycle-');
  tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'served.db');
  const db = openDb(file);
  new Projector(db).applyBatch(asSource([...world(), ...Array.from({ length: 20 }, (_, i) => run({ n: i + 1, brand: i % 3 === 0 ? 1 : null, citations: [`https://x.com/${i % 4}`] }))]));
  db.close();
  return file;
}

const projects = (base: string): string => `${base}/projects`;

/** Whether a new TCP connection to the URL's port is refused (no pooled keep-alive socket involved). */
function refused(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(u.port), u.hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

/** A keep-alive GET on `agent`; resolves with status and the Connection header. */
function keepAliveGet(agent: http.Agent, url: string): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent, headers: { 'x-api-key': W.key } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    }).on('error', reject);
  });
}

/**
 * A request whose headers are not finished yet: node counts the connection as busy, so the drain
 * waits for it. finish() sends the rest and resolves with the raw response.
 */
async function halfSentRequest(base: string): Promise<{ finish(): Promise<string>; socket: net.Socket }> {
  const url = new URL(projects(base));
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let raw = '';
  socket.on('data', (c: Buffer) => (raw += c.toString()));
  socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nX-API-Key: ${W.key}\r\n`);
  await sleep(100);
  return {
    socket,
    finish: () => new Promise((resolve) => {
      socket.once('close', () => resolve(raw));
      socket.write('\r\n');
    }),
  };
}

async function serving(tt: Test, args: string[] = []): Promise<ServeProcess> {
  const s = await startServe(['--db', makeDb(tt), ...args]);
  tt.teardown(() => {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  });
  return s;
}

// Found by the Kafka ingestion tests (test/ingest/kafka/): a service restarted with nothing left to consume got its SIGTERM before
// it had installed its handlers, and died of the signal. Here the demo's replay is the slow start.
t.test('SIGTERM while starting up: it finishes starting, then stops cleanly (exit 0)', async (t) => {
  const dir = tmpDir('lifecycle-startup-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const dbFile = path.join(dir, 'demo.db');
  const s = spawnServe(['--demo', '--db', dbFile]);
  t.teardown(() => {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  });
  // The demo database is created before its events are replayed into it: the service is mid-start.
  while (!fs.existsSync(dbFile) && s.child.exitCode === null) await sleep(5);
  t.notMatch(s.exited.out(), /listening on/, 'signalled before it listens');
  s.child.kill('SIGTERM');
  const exit = await s.exited;
  t.same([exit.code, exit.signal], [0, null], `exit status 0, not killed by the signal (${exit.stderr})`);
  t.match(exit.stdout, /listening on[^]*SIGTERM: stopping[^]*stopped/, 'it came up, then stopped');
  t.ok(fs.existsSync(dbFile), 'a database at --db is kept');
});

// Every `npm start` used to leave its ~50 MB demo database in the temporary directory.
t.test('serve --demo without --db: its temporary database is removed at the stop', async (t) => {
  const tmp = tmpDir('lifecycle-tmp-');
  t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const demoDirs = (): string[] => fs.readdirSync(tmp).filter((n) => n.startsWith('visibility-demo-'));
  const s = await startServe(['--demo'], { TMPDIR: tmp });
  t.teardown(() => {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  });
  const [dir] = demoDirs();
  t.ok(dir !== undefined && fs.existsSync(path.join(tmp, dir, 'demo.db')), `the demo database is in ${tmp}/visibility-demo-*`);
  t.equal((await request(projects(s.base), withKey(activeKeys[0]!.key))).status, 200, 'and served');
  s.child.kill('SIGTERM');
  const exit = await s.exited;
  t.same([exit.code, exit.signal], [0, null], `exit status 0 (${exit.stderr})`);
  t.same(demoDirs(), [], 'the folder and everything in it (the database, its WAL, the key file) are gone');
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} with a keep-alive client connected: exit 0 within 10 s, nothing left to recover`, async (t) => {
    const s = await serving(t);
    const agent = new http.Agent({ keepAlive: true });
    t.teardown(() => agent.destroy());
    const first = await keepAliveGet(agent, projects(s.base));
    t.equal(first.status, 200, 'served before the signal');
    t.equal(first.connection, 'keep-alive', 'the connection is kept open');
    const sent = Date.now();
    s.child.kill(signal);
    const exit = await s.exited;
    t.equal(exit.code, 0, `exit status 0 (${exit.stderr})`);
    t.ok(Date.now() - sent < 10_000, `exited within 10 s (${Date.now() - sent} ms)`);
    t.match(exit.stdout, new RegExp(`${signal}: stopping[^]*stopped`), 'says it is stopping, then that it stopped');
    t.equal(exit.stderr, '', 'nothing on stderr');
  });
}

t.test('during the drain: /readyz is 503, new connections are refused, a request in flight is answered with Connection: close', async (t) => {
  const s = await serving(t);
  const pending = await halfSentRequest(s.base);
  s.child.kill('SIGTERM');
  await sleep(300);
  const ready = await request(`${s.ops}/readyz`);
  t.equal(ready.status, 503, '/readyz: not ready');
  t.match(ready.json, { ready: false, status: 'not ready', reasons: ['shutting down'] });
  t.ok(await refused(s.base), 'the listener no longer accepts');
  const raw = await pending.finish();
  t.match(raw, /^HTTP\/1\.1 200 OK\r\n/, 'the request in flight gets its answer');
  t.match(raw, /\r\nConnection: close\r\n/i, 'with Connection: close');
  t.match(raw, /"Acme Project"/, 'and its body');
  const exit = await s.exited;
  t.equal(exit.code, 0, 'then exits 0');
});

t.test('a connection that never finishes its request is cut at the drain deadline: exit 0 within 10 s', async (t) => {
  const s = await serving(t);
  const pending = await halfSentRequest(s.base);
  t.teardown(() => pending.socket.destroy());
  const sent = Date.now();
  s.child.kill('SIGTERM');
  const exit = await s.exited;
  t.equal(exit.code, 0, 'exit 0');
  t.ok(Date.now() - sent < 10_000, `within 10 s (${Date.now() - sent} ms)`);
});

t.test('a second signal during the drain exits at once, non-zero', async (t) => {
  const s = await serving(t, ['--build-threads', '2']);
  const pending = await halfSentRequest(s.base);
  t.teardown(() => pending.socket.destroy());
  s.child.kill('SIGTERM');
  await sleep(300);
  t.equal(s.child.exitCode, null, 'still draining after the first');
  s.child.kill('SIGINT');
  const exit = await s.exited;
  t.equal(exit.code, 130, 'exit 128 + SIGINT');
  t.match(exit.stderr, /^visibility-api serve: SIGINT again: exiting now, without finishing the stop\n$/m);
});

t.test('a clean stop checkpoints the WAL: the file alone holds every commit', async (t) => {
  const file = makeDb(t);
  const s = await startServe(['--db', file]);
  t.equal((await request(projects(s.base), withKey(W.key))).status, 200);
  s.child.kill('SIGTERM');
  t.equal((await s.exited).code, 0);
  const wal = `${file}-wal`;
  t.ok(!fs.existsSync(wal) || fs.statSync(wal).size === 0, 'no WAL left to replay');
});

for (const which of ['--port', '--ops-port'] as const) {
  t.test(`a taken ${which}: one line naming it, exit 2, no hang`, async (t) => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.teardown(() => blocker.close());
    const port = (blocker.address() as net.AddressInfo).port;
    const other = which === '--port' ? '--ops-port' : '--port';
    const exit = await runCli(['serve', '--db', makeDb(t), '--host', '127.0.0.1', which, String(port), other, '0'], {}, 30_000);
    t.equal(exit.code, 2, 'exit 2');
    t.equal(exit.stdout, '', 'nothing on stdout');
    t.match(exit.stderr, new RegExp(`^visibility-api serve: cannot listen on 127\\.0\\.0\\.1:${port}: EADDRINUSE: [^\\n]* is ${which} ${port}: choose another with ${which} N or [A-Z_]+=N \\(0: a free one\\)\\n$`), 'one line naming the address and the flag');
  });
}

t.test('start() as a library: serves, and close() releases everything (idempotent)', async (t) => {
  const file = makeDb(t);
  const running = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', logger: silentLogger });
  t.match(running.url, /^http:\/\/127\.0\.0\.1:\d+\/v1\/public$/);
  t.equal((await request(projects(running.url), withKey(W.key))).status, 200);
  t.match((await request(`${running.opsUrl}/livez`)).json, { status: 'ok' }, '/livez');
  t.equal((await request(`${running.opsUrl}/readyz`)).status, 200, '/readyz');
  await Promise.all([running.close(), running.close()]);
  t.ok(await refused(running.url), 'the API port is closed');
  t.ok(await refused(running.opsUrl), 'the ops port is closed');
  // The file is free again: a second start on the same ports' kind works.
  const again = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', logger: silentLogger });
  t.equal((await request(projects(again.url), withKey(W.key))).status, 200, 'a new start on the same file serves');
  await again.close();
});

t.test('a database damaged while serving: 500 without internals, and /readyz turns 503 saying why', async (t) => {
  const file = makeDb(t);
  const running = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', logger: silentLogger });
  t.teardown(() => running.close());
  t.equal((await request(`${running.opsUrl}/readyz`)).status, 200, 'ready while the file is sound');
  // Overwrite every page after the first (the schema) with garbage, as a failing disk would.
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, 'r+');
  const header = Buffer.alloc(2);
  fs.readSync(fd, header, 0, 2, 16); // the page size, big-endian at offset 16 of the header
  const page = header.readUInt16BE(0) === 1 ? 65536 : header.readUInt16BE(0);
  fs.writeSync(fd, Buffer.alloc(size - page, 0xa5), 0, size - page, page);
  fs.closeSync(fd);
  const r = await request(`${running.url}/projects/${W.project}/visibility`, withKey(W.key));
  t.equal(r.status, 500, 'the request fails');
  t.same(r.json, { error: true, message: 'Internal server error' }, 'without showing internals');
  const ready = await request(`${running.opsUrl}/readyz`);
  t.equal(ready.status, 503, '/readyz: not ready');
  t.match((ready.json as { reasons: string[] }).reasons.join(' '), new RegExp(`database file is corrupt: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), 'and says why');
});

t.test('start() with a taken port rejects and leaves nothing running', async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as net.AddressInfo).port;
  const failed: unknown = await start({ dbFile: makeDb(t), port, opsPort: 0, host: '127.0.0.1', logger: silentLogger }).catch((e: unknown) => e);
  t.ok(failed instanceof StartError, 'a StartError');
  t.match((failed as Error).message, /^cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE$/);
});

t.test('methods other than GET and HEAD', async (t) => {
  const api = await startApi({ db: openDb(makeDb(t)) });
  t.teardown(() => api.close());
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND']) {
    const known = await request(projects(api.base), { method, headers: { 'x-api-key': W.key } });
    t.equal(known.status, 405, `${method} on a known path: 405`);
    t.equal(known.headers.allow, 'GET, HEAD', `${method}: Allow`);
    t.same(known.json, { error: true, message: 'Method not allowed' }, `${method}: the error body`);
    const unknown = await request(`${api.base}/nowhere`, { method });
    t.equal(unknown.status, 404, `${method} on an unknown path: 404`);
    t.same(unknown.json, { error: true, message: 'Not found' });
  }
  const url = new URL(api.base);
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(`CONNECT ${url.host} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`));
    let got = '';
    socket.on('data', (c: Buffer) => (got += c.toString()));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy());
  });
  t.match(raw, /^HTTP\/1\.1 405 Method Not Allowed\r\n/, 'CONNECT: an HTTP answer, 405');
  t.match(raw, /\r\nAllow: GET, HEAD\r\n/);
  t.match(raw, /\r\n\r\n\{"error":true,"message":"Method not allowed"\}$/);
});

t.test('unknown callers cannot grow memory; a valid key\'s memo stays within its byte bound', async (t) => {
  const api = await startApi({ db: openDb(makeDb(t)), buildThreads: 0 });
  t.teardown(() => api.close());
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  t.teardown(() => agent.destroy());
  const get = (url: string, key: string): Promise<number> => new Promise((resolve, reject) => {
    http.get(url, { agent, headers: { 'x-api-key': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
  // Many spellings of one request (a parameter the endpoint does not take is a 400, so repeats of a
  // value make each URL its own: 5.5 KB on average, 800 of them past the memo's bound).
  const url = (i: number): string => `${api.base}/projects/${W.project}/visibility?${'country=us&'.repeat(100 + i)}country=US`;
  const unknown = await Promise.all(Array.from({ length: 400 }, (_, i) => get(url(i), `made-up-key-${i}`)));
  t.ok(unknown.every((s) => s === 401), 'made-up keys: 401');
  t.equal(api.service.hotMemoBytes(), 0, 'nothing remembered for unknown keys');
  await get(url(-1), W.key); // builds the body, so later requests are hits
  const valid = [];
  for (let i = 0; i < 800; i += 8) valid.push(...await Promise.all(Array.from({ length: 8 }, (_, j) => get(url(i + j), W.key))));
  t.ok(valid.every((s) => s === 200), 'a valid key with many spellings of one request: 200');
  t.ok(api.service.hotMemoBytes() > 0, 'a valid key\'s resolutions are remembered');
  t.ok(api.service.hotMemoBytes() <= MEMO_MAX_BYTES, `within ${MEMO_MAX_BYTES} bytes (${api.service.hotMemoBytes()})`);
});

t.test('400 messages do not echo long input back', async (t) => {
  const api = await startApi({ db: openDb(makeDb(t)) });
  t.teardown(() => api.close());
  const junk = 'z'.repeat(10_000);
  for (const url of [`${api.base}/projects/${junk}`, `${api.base}/projects/${W.project}/visibility?engine_ids=${junk}`, `${api.base}/projects/${W.project}/mentions?limit=${junk}`]) {
    const r = await request(url, withKey(W.key));
    t.equal(r.status, 400);
    const message = (r.json as { message: string }).message;
    t.ok(message.length < 250, `a short message (${message.length} characters)`);
    t.match(message, /"z{64}\.\.\."/, 'shows the start of the input, marked as cut');
  }
});
