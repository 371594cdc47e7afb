// A server process for bench/serve/serve.ts: the service, a bare node:http server, or a naive server.
//   node dist/bench/serve/server.js service|bare|naive --db FILE [--cache-max-bytes N (0: no cache)] [--body FILE] [--rate-limit N]
//     [--log FILE [--log-level L]]   (service: the access log, as `serve` writes it, into FILE)
// Talks to its parent over IPC: {type:'ready', port}; answers {type:'stats'} and {type:'ingest', file}.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startWorker } from '../../src/lib/worker';
import { createLogger, type LogLevel } from '../../src/lib/log';
import { accessLog, createMetrics } from '../../src/ops';
import { createService } from '../../src/serve';
import { commitCounter, openDb } from '../../src/store';
import { numberFlag, orExit, parseFlags } from '../lib/bench-flags';
import { naiveVisibility } from './naive';

const { values, positionals } = parseFlags({
  allowPositionals: true,
  options: {
    db: { type: 'string' }, 'cache-max-bytes': { type: 'string' }, body: { type: 'string' }, 'rate-limit': { type: 'string' },
    log: { type: 'string' }, 'log-level': { type: 'string' },
  },
});
const kind = orExit(() => {
  if (!values.db) throw new Error('--db FILE is required');
  const k = positionals[0];
  if (k !== 'service' && k !== 'bare' && k !== 'naive') throw new Error(`the server is service, bare or naive, not "${k ?? ''}"`);
  return k;
});
const rateLimit = numberFlag('rate-limit', values['rate-limit'], 0, 'non-negative number');
const db = openDb(values.db!, { fast: true });
let rssMax = 0;
setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 100).unref();

function listener(): http.RequestListener {
  if (kind === 'service') {
    // Wired as `serve` wires it (src/index.ts): request latency histograms and, with --log, the access log.
    let observe: (route: string, status: number, seconds: number) => void = () => {};
    const logger = values.log ? createLogger({ level: (values['log-level'] ?? 'info') as LogLevel, fd: fs.openSync(values.log, 'w') }) : null;
    const logRequest = logger ? accessLog(logger).observe : null;
    const service = createService({
      db, cacheMaxBytes: numberFlag('cache-max-bytes', values['cache-max-bytes'], 256 * 1024 * 1024, 'non-negative integer'), rateLimit, ...(logger ? { logger } : {}),
      onResponse: (s) => {
        observe(s.route, s.status, s.seconds);
        logRequest?.(s);
      },
    });
    observe = createMetrics(service.cache).observeRequest;
    return service.handler;
  }
  if (kind === 'bare') {
    // The limit for Node here: the same bytes and headers as a cached /visibility answer, nothing else.
    const body = fs.readFileSync(values.body!);
    const headers = {
      'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), etag: '"bare"',
      'cache-control': 'private, no-cache', vary: 'Accept-Encoding, Authorization, X-API-Key', 'x-data-version': '1',
      'last-modified': new Date(0).toUTCString(),
      // What the service echoes or makes per request (a UUID), of the same length; the bare server makes none.
      'x-request-id': '00000000-0000-4000-8000-000000000000',
      // What a rate-limited key's hit carries (src/serve/http/ratelimit.ts), with values of the same length.
      ...(rateLimit > 0 ? { 'ratelimit-policy': `"per-key";q=${2 * rateLimit};w=2`, ratelimit: `"per-key";r=${2 * rateLimit - 1};t=1` } : {}),
    };
    return (_req, res) => {
      res.writeHead(200, headers);
      res.end(body);
    };
  }
  if (kind === 'naive') {
    return (req, res) => {
      const projectId = /\/projects\/([^/]+)\/visibility/.exec(req.url ?? '')?.[1] ?? '';
      const body = JSON.stringify(naiveVisibility(db, projectId, 7));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(body);
    };
  }
  throw new Error(`unknown server kind ${kind}`);
}

/**
 * Applies an event file in an ingest thread (as `serve` runs Kafka) while this thread serves;
 * reports this thread's event-loop delay meanwhile.
 */
function ingest(file: string): Promise<Record<string, number>> {
  const worker = startWorker(__filename, { dbFile: values.db!, file, commits: commitCounter() });
  const eld = monitorEventLoopDelay({ resolution: 1 });
  return new Promise((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (m: { type: string; events: number; seconds: number; slices: number; slowest_slice_ms: number }) => {
      if (m.type === 'loaded') return eld.enable();
      eld.disable();
      resolve({ events: m.events, seconds: m.seconds, slices: m.slices, slowest_slice_ms: m.slowest_slice_ms,
        eld_p50_ms: eld.percentile(50) / 1e6, eld_p99_ms: eld.percentile(99) / 1e6, eld_max_ms: eld.max / 1e6 });
    });
  });
}

const server = http.createServer(listener());
server.listen(0, '127.0.0.1', () => {
  process.send!({ type: 'ready', port: (server.address() as AddressInfo).port });
});
// Exit normally on SIGTERM, so --cpu-prof and friends can write their output.
process.on('SIGTERM', () => process.exit(0));
process.on('message', (m: { type: string; file?: string }) => {
  if (m.type === 'stats') process.send!({ type: 'stats', rss_max: rssMax, rss: process.memoryUsage().rss });
  // CPU time this process has used (all threads), for CPU per request.
  if (m.type === 'cpu') {
    const u = process.cpuUsage();
    process.send!({ type: 'cpu', micros: u.user + u.system });
  }
  if (m.type === 'ingest') void ingest(m.file!).then((r) => process.send!({ type: 'ingested', ...r }));
  if (m.type === 'eld') {
    // Event-loop delay while only serving, as the baseline for the ingest figure.
    const eld = monitorEventLoopDelay({ resolution: 1 });
    eld.enable();
    setTimeout(() => {
      eld.disable();
      process.send!({ type: 'eld', eld_p99_ms: eld.percentile(99) / 1e6, eld_max_ms: eld.max / 1e6 });
    }, 5000);
  }
});
