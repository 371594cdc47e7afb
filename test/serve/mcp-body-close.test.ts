// A POST /mcp body over the cap, from a client that writes its whole body before it reads (no
// `Expect: 100-continue`: Python's http.client, requests): it must read the 413, not a broken pipe.
// The 413 says Connection: close, and the server reads and drops what is still coming (up to
// MCP_DRAIN_BYTES, within MCP_DRAIN_MS) before it closes. Raw sockets over loopback, a real service.
import net from 'node:net';
import t from 'tap';
import { MCP_DRAIN_BYTES, MCP_MAX_BODY_BYTES } from '../../src/serve/mcp/mcp-body';
import { asSource, W, world } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { startApi } from '../helpers/http';
import { sleep } from '../helpers/wait';

interface Outcome { response: string; error: string | null; wrote: number }

/** POST /mcp with a `size`-byte body written in 64 KiB pieces, `pause` ms apart, reading nothing until the last one is written. */
function slowPost(port: number, size: number, pause: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let error: string | null = null;
    let wrote = 0;
    socket.pause(); // nothing read until the body is written, as http.client does
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on('close', () => resolve({ response: Buffer.concat(received).toString('latin1'), error, wrote }));
    socket.on('connect', () => void (async () => {
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${W.key}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${size}\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024, 0x20);
      while (wrote < size && error === null && !socket.destroyed) {
        const n = Math.min(piece.length, size - wrote);
        await new Promise<void>((done) => socket.write(piece.subarray(0, n), () => done()));
        wrote += n;
        if (pause > 0) await sleep(pause);
      }
      socket.on('data', (c: Buffer) => received.push(c));
      socket.resume();
    })());
  });
}

t.test('an over-limit MCP body from a client that writes it all first gets the 413', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close());
  const port = Number(new URL(api.base).port);

  for (const [what, size, pause] of [
    ['100 KB, written at once', 100_000, 0],
    ['6 MB written slowly (64 KiB every 2 ms)', 6_000_000, 2],
    ['12 MB written at once', 12_000_000, 0],
  ] as const) {
    const o = await slowPost(port, size, pause);
    t.equal(o.error, null, `${what}: the whole body written, no broken pipe or reset`);
    t.equal(o.wrote, size, `${what}: every byte sent`);
    t.match(o.response, /^HTTP\/1\.1 413 Payload Too Large\r\n/, `${what}: the 413 read after it`);
    t.match(o.response, /\r\nConnection: close\r\n/i, `${what}: Connection: close`);
    t.match(o.response, /\r\n\r\n\{"error":true,"message":"Payload Too Large: a POST \/mcp body must not exceed 65536 bytes"\}$/, `${what}: the error body whole`);
  }
  t.ok(12_000_000 < MCP_DRAIN_BYTES && MCP_MAX_BODY_BYTES < 100_000, 'the sizes are between the cap and the drain bound');

  // Past the bound the connection is closed: the server does not read without end.
  const over = await slowPost(port, 3 * MCP_DRAIN_BYTES, 0);
  t.not(over.error, null, `a body past the drain bound is cut (${over.error}, ${over.wrote} of ${3 * MCP_DRAIN_BYTES} bytes written)`);
  t.ok(over.wrote < 3 * MCP_DRAIN_BYTES);
});
