// Real HTTP over loopback against the real Koa app.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import type { Test } from 'tap';
import { createOpsServer } from '../../src/ops';
import { createHttpServer, createService, type AppOptions, type Service } from '../../src/serve';
import type { Db } from '../../src/store';

export interface Api {
  base: string;
  service: Service;
  close(): Promise<void>;
}

export async function startApi(opts: AppOptions): Promise<Api> {
  const service = createService(opts);
  const server = createHttpServer(service);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}/v1/public`,
    service,
    close: () => new Promise<void>((resolve) => server.close(() => void service.close().then(resolve))),
  };
}

/**
 * The API on `db` and an ops port serving GET /snapshot of `file` (asking for `token` when given),
 * both closed (and `db`) when the test ends; the port's URL.
 */
export async function snapshotPort(t: Test, db: Db, file: string, token?: string): Promise<string> {
  const api = await startApi({ db });
  const ops = createOpsServer({ cache: api.service.cache, readiness: () => ({ ready: true, reasons: [] }), dbFile: file, token });
  await new Promise<void>((resolve) => ops.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    ops.close();
    await api.close();
    db.close();
  });
  return `http://127.0.0.1:${(ops.address() as AddressInfo).port}`;
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The header lines as sent: names in their case and order, then their values. */
  rawHeaders: string[];
  raw: Buffer;
  text: string;
  json: unknown;
}

/** A request with node:http (not fetch) so we see the bytes as sent, compressed or not. */
/** A header given a list of values is sent as that many lines. */
export function request(url: string, opts: { method?: string; headers?: Record<string, string | string[]> } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const enc = res.headers['content-encoding'];
        const plain = enc === 'gzip' ? zlib.gunzipSync(raw) : enc === 'br' ? zlib.brotliDecompressSync(raw) : raw;
        const text = plain.toString('utf8');
        let json: unknown = undefined;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, raw, text, json });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

export function withKey(key: string, extra: Record<string, string> = {}): { headers: Record<string, string> } {
  return { headers: { 'x-api-key': key, ...extra } };
}
