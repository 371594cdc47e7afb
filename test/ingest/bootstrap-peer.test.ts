// serve --bootstrap-from against a peer that misbehaves (src/ingest/bootstrap.ts): small node:http
// servers on 127.0.0.1 that answer 500 with a large body, omit Content-Length, trickle bytes,
// redirect, or want the ops token; and a real `serve` process stopped by SIGTERM mid-bootstrap.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { start } from '../../src/index';
import { BootstrapAborted, bootstrapFrom, BootstrapError } from '../../src/ingest/bootstrap';
import { openDb, Projector } from '../../src/store';
import { asSource, world } from '../helpers/events';
import { capturedLogger } from '../helpers/log';
import { tmpDir } from '../helpers/db';
import { snapshotPort } from '../helpers/http';
import { spawnServeOnFreePorts } from '../helpers/processes';
import { sleep } from '../helpers/wait';

const TOKEN = 'bootstrap-token-0123456789abcdef';

/** A peer answering with `handler`; its URL. Closed when the test ends. */
async function peer(t: Test, handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Writes `total` bytes to `res` as the socket takes them; resolves true if all went out, false if the connection closed first. */
function stream(res: http.ServerResponse, total: number): Promise<boolean> {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  return new Promise((resolve) => {
    res.once('close', () => resolve(sent >= total));
    const more = (): void => {
      while (sent < total) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
}

const SNAPSHOT_HEADERS = { 'x-snapshot-sha256': 'a'.repeat(64), 'x-snapshot-schema-version': '1' };

function target(): { file: string; dir: string; leftovers: () => string[] } {
  const dir = tmpDir('bootstrap-peer-');
  const file = path.join(dir, 'replica.db');
  return { file, dir, leftovers: () => fs.readdirSync(dir) };
}

t.test('a 500 with a large body: a few KiB of it are read, not the body', async (t) => {
  let whole: Promise<boolean> = Promise.resolve(false);
  const url = await peer(t, (_req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain', 'content-length': String(400 * 1024 * 1024) });
    whole = stream(res, 400 * 1024 * 1024);
  });
  const { file, leftovers } = target();
  const e: unknown = await bootstrapFrom(url, file).catch((err: unknown) => err);
  t.ok(e instanceof BootstrapError, String(e));
  t.match(String(e), /answered 500: x{200}$/, 'the message quotes the start of the body');
  t.equal(await whole, false, 'the connection was closed before the peer could send its 400 MB');
  t.same(leftovers(), [], 'nothing written');
});

t.test('a 200 without Content-Length is refused before a byte is written', async (t) => {
  let whole: Promise<boolean> = Promise.resolve(false);
  const url = await peer(t, (_req, res) => {
    res.writeHead(200, SNAPSHOT_HEADERS); // chunked: no length
    whole = stream(res, 100 * 1024 * 1024);
  });
  const { file, leftovers } = target();
  const e: unknown = await bootstrapFrom(url, file).catch((err: unknown) => err);
  t.match(String(e), /sent no Content-Length/);
  t.equal(await whole, false, 'the body was not downloaded');
  t.same(leftovers(), [], 'no partial file');
});

t.test('a peer that trickles bytes: given up at the idle deadline, and at the overall one', async (t) => {
  const trickle = (everyMs: number): http.RequestListener => (_req, res) => {
    res.writeHead(200, { ...SNAPSHOT_HEADERS, 'content-length': '100000' });
    const timer = setInterval(() => res.write('x'), everyMs);
    res.once('close', () => clearInterval(timer));
  };
  const { file, leftovers } = target();
  const idle = await bootstrapFrom(await peer(t, trickle(1000)), file, { idleMs: 300 }).catch((err: unknown) => err);
  t.match(String(idle), /gave up on .*: [01] bytes in 0\.3 s, under 19661/, "one byte a second, 0.3 s windows at 64 KiB/s");
  const overall = await bootstrapFrom(await peer(t, trickle(20)), file, { idleMs: 10_000, timeoutMs: 1000 }).catch((err: unknown) => err);
  t.match(String(overall), /took longer than 1 s/, 'a byte every 20 ms never idles, but the whole has 1 s');
  t.same(leftovers(), [], 'no partial file either time');
});

t.test('stopped by its signal: rejects with BootstrapAborted and removes the partial file', async (t) => {
  let first!: () => void;
  const started = new Promise<void>((r) => (first = r));
  const url = await peer(t, (_req, res) => {
    res.writeHead(200, { ...SNAPSHOT_HEADERS, 'content-length': '10000000' });
    res.write(Buffer.alloc(100_000));
    first();
  });
  const { file, leftovers } = target();
  const abort = new AbortController();
  const p = bootstrapFrom(url, file, { signal: abort.signal }).catch((err: unknown) => err);
  await started;
  for (let i = 0; i < 100 && !fs.existsSync(`${file}.part`); i++) await sleep(10);
  abort.abort();
  const e = await p;
  t.ok(e instanceof BootstrapAborted, String(e));
  t.same(leftovers(), [], 'no partial file');
});

/** A real ops port serving a small database's /snapshot, with `token`; its URL. */
async function realPeer(t: Test, token?: string): Promise<string> {
  const file = path.join(tmpDir('bootstrap-source-'), 'source.db');
  const db = openDb(file);
  new Projector(db).applyBatch(asSource(world()));
  return snapshotPort(t, db, file, token);
}

t.test('the ops token is sent to a peer that wants one', async (t) => {
  const url = await realPeer(t, TOKEN);
  const without = await bootstrapFrom(url, target().file).catch((err: unknown) => err);
  t.match(String(without), /answered 401: \{"error":true,"message":"Missing or wrong ops token"\}/);
  const got = await bootstrapFrom(url, target().file, { token: TOKEN });
  t.ok(got.bytes > 0, 'downloaded with the token');
});

t.test('after a redirect, the log names where the snapshot came from', async (t) => {
  const real = await realPeer(t);
  const redirector = await peer(t, (_req, res) => {
    res.writeHead(307, { location: `${real}/snapshot` });
    res.end();
  });
  const { file } = target();
  const { logger, lines } = capturedLogger();
  const running = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', bootstrapFrom: redirector, logger });
  await running.close();
  const line = lines.find((l) => /^bootstrapped/.test(String(l.msg)));
  t.match(line?.msg, `from ${real}/snapshot (redirected from ${redirector})`);
  t.equal(line?.url, `${real}/snapshot`);
});

t.test('SIGTERM during a bootstrap from a peer sending a byte a second: serve stops at once, exit 0, nothing left', async (t) => {
  const url = await peer(t, (_req, res) => {
    res.writeHead(200, { ...SNAPSHOT_HEADERS, 'content-length': '1000000' });
    const timer = setInterval(() => res.write('x'), 1000);
    res.once('close', () => clearInterval(timer));
  });
  const { file, leftovers } = target();
  const s = await spawnServeOnFreePorts(['--db', file, '--bootstrap-from', url], {},
    async ({ opsPort }) => /bootstrapping/.test(await (await fetch(`http://127.0.0.1:${opsPort}/readyz`)).text()) && fs.existsSync(`${file}.part`));
  t.teardown(() => void (s.child.exitCode === null && s.child.kill('SIGKILL')));
  s.child.kill('SIGTERM');
  // Well inside the 10 s operations.md promises for a stop (the peer would take 11 days).
  const exit = await Promise.race([s.exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
  t.ok(exit, 'exited within 10 s of the signal');
  t.equal(exit?.code, 0, `exit status 0 (${exit?.stderr})`);
  t.match(exit?.stdout, /SIGTERM during the bootstrap: stopped it[^]*visibility-api: stopped/);
  t.same(leftovers(), [], 'no database and no partial download');
});
