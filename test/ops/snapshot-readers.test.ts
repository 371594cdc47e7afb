// GET /snapshot with several readers (src/ops/snapshot-route.ts): a reader that stalls or trickles does not
// hold the others (they share a copy; it is cut by its own deadline, and its share is freed), the
// number of readers is capped, and HEAD never makes a copy. Readers are raw sockets over loopback
// that read as slowly as a test says; the database is the demo's (~40 MB: far more than the
// sockets' buffers hold, so a reader that does not read does stop the transfer).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { createOpsServer, type SnapshotLimits } from '../../src/ops';
import { demoDb } from '../helpers/demo';
import { capturedLogger } from '../helpers/log';
import { startApi } from '../helpers/http';
import { until } from '../helpers/wait';

const demo = demoDb();

interface Reader {
  status: Promise<number>;
  length: Promise<number>;
  /** Body bytes taken so far. */
  received(): number;
  /** Read whatever comes, as fast as it comes, from now on. */
  drain(): void;
  /** Resolves once the connection has closed. */
  closed: Promise<void>;
}

/** GET `route` on a raw socket that takes `bytesPerTick` bytes every `tickMs` (0: none after the headers). */
function reader(port: number, route: string, bytesPerTick: number, tickMs = 100): Reader {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(`GET ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  let head = '';
  let body = 0;
  let headersDone = false;
  let status!: (n: number) => void;
  let length!: (n: number) => void;
  const r: Reader = {
    status: new Promise((res) => (status = res)),
    length: new Promise((res) => (length = res)),
    received: () => body,
    drain: () => {
      clearInterval(tick);
      socket.on('data', (c: Buffer) => (body += c.length));
    },
    closed: new Promise((res) => socket.once('close', () => res())),
  };
  const take = (c: Buffer | null): void => {
    if (!c) return;
    if (headersDone) {
      body += c.length;
      return;
    }
    head += c.toString('latin1');
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    headersDone = true;
    status(Number(/^HTTP\/1\.1 (\d+)/.exec(head)![1]));
    length(Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1));
    body += head.length - end - 4;
  };
  socket.on('error', () => undefined); // a cut reader may see a reset
  // Until the headers are in, everything; then `bytesPerTick` per tick, from the socket's buffer only:
  // what is not read stays in the kernel, and TCP's window makes the server wait.
  const tick = setInterval(() => {
    if (!headersDone) {
      let c: Buffer | null;
      while (!headersDone && (c = socket.read() as Buffer | null) !== null) take(c);
      return;
    }
    const n = Math.min(bytesPerTick, socket.readableLength);
    if (n > 0) take(socket.read(n) as Buffer | null);
  }, tickMs);
  socket.once('close', () => clearInterval(tick));
  return r;
}

async function opsPort(t: Test, limits: Partial<SnapshotLimits>): Promise<{ port: number; file: string; lines: Array<Record<string, unknown>> }> {
  const { db, file } = await demo;
  const api = await startApi({ db });
  const { logger, lines } = capturedLogger();
  const ops = createOpsServer({ cache: api.service.cache, readiness: () => ({ ready: true, reasons: [] }), dbFile: file, snapshotLimits: limits, logger });
  await new Promise<void>((resolve) => ops.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    ops.closeAllConnections();
    ops.close();
    await api.close();
  });
  return { port: (ops.address() as AddressInfo).port, file, lines };
}

const copies = (file: string): string[] => fs.readdirSync(path.dirname(file)).filter((n) => n.startsWith(`.${path.basename(file)}.snapshot-${process.pid}-`));

const cutLine = (lines: Array<Record<string, unknown>>): boolean => lines.some((l) => /snapshot reader cut/.test(String(l.msg)));

t.test('a reader that stops reading holds no one else, and is cut by its idle deadline', async (t) => {
  const { port, file, lines } = await opsPort(t, { idleMs: 1500, graceMs: 600_000 });
  const stalled = reader(port, '/snapshot', 0);
  t.equal(await stalled.status, 200, 'the first reader gets the snapshot, then stops reading');
  const size = await stalled.length;

  // Meanwhile two more download it whole, from the same copy.
  const [a, b] = await Promise.all([1, 2].map(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/snapshot`);
    const bytes = Buffer.from(await res.arrayBuffer());
    return { status: res.status, sha: res.headers.get('x-snapshot-sha256'), got: createHash('sha256').update(bytes).digest('hex'), n: bytes.length, copies: copies(file).length };
  }));
  for (const r of [a!, b!]) {
    t.equal(r.status, 200, 'another reader is served while the first stalls');
    t.equal(r.got, r.sha, 'its bytes match the checksum');
    t.equal(r.n, size);
    t.equal(r.copies, 1, 'one copy on disk, shared');
  }
  t.ok(await until(() => cutLine(lines), 20_000), 'the stalled reader is cut');
  stalled.drain();
  await stalled.closed;
  t.ok(stalled.received() < size, `it got ${stalled.received()} of ${size} bytes`);
  t.ok(await until(() => copies(file).length === 0, 5000), 'the copy is removed once its last reader is gone');
});

t.test('a reader below the minimum rate is cut by its overall deadline', async (t) => {
  // ~40 MB at 8 MiB/s, after 0.2 s of grace: about 5 s. The reader takes 20 KB every 100 ms.
  const { port, file, lines } = await opsPort(t, { idleMs: 600_000, graceMs: 200, minBytesPerSecond: 8 * 1024 * 1024 });
  const slow = reader(port, '/snapshot', 20_000);
  t.equal(await slow.status, 200);
  const size = await slow.length;
  t.ok(await until(() => cutLine(lines), 60_000), 'the slow reader is cut');
  t.match(lines.find((l) => /snapshot reader cut/.test(String(l.msg)))!.msg, /not done within/);
  slow.drain();
  await slow.closed;
  t.ok(slow.received() < size, `it got ${slow.received()} of ${size} bytes`);
  t.ok(await until(() => copies(file).length === 0, 5000), 'its copy is removed');
});

t.test('readers past the cap get 503 with Retry-After; HEAD makes no copy', async (t) => {
  const { port, file, lines } = await opsPort(t, { maxReaders: 1, idleMs: 1500 });
  const url = `http://127.0.0.1:${port}/snapshot`;
  const before = await fetch(url, { method: 'HEAD' });
  t.equal(before.status, 200);
  t.ok(Number(before.headers.get('x-snapshot-schema-version')) > 0, 'HEAD says the schema version');
  t.equal(before.headers.get('x-snapshot-sha256'), null, 'no checksum: no copy exists, and HEAD makes none');
  t.same(copies(file), [], 'no copy on disk');

  const stalled = reader(port, '/snapshot', 0);
  t.equal(await stalled.status, 200);
  const over = await fetch(url);
  t.equal(over.status, 503, 'a second reader past the cap of 1');
  t.equal(over.headers.get('retry-after'), '1');
  t.equal(over.headers.get('x-error-code'), 'not_ready');
  t.match(await over.json(), { error: true, message: /snapshot readers/ });
  const during = await fetch(url, { method: 'HEAD' });
  t.equal(during.headers.get('content-length'), String(await stalled.length), 'HEAD during a transfer: the copy\'s length');
  t.match(during.headers.get('x-snapshot-sha256'), /^[0-9a-f]{64}$/, 'and its checksum');
  t.equal(copies(file).length, 1, 'still the one copy');

  t.ok(await until(() => cutLine(lines), 20_000), 'the stalled reader is cut');
  stalled.drain();
  await stalled.closed;
  const after = await fetch(url);
  t.equal(after.status, 200, 'its place is free again');
  await after.arrayBuffer();
});
