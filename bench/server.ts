// A server process for bench/serve.ts: the service, a bare node:http server, or a naive server.
//   node dist/bench/server.js service|bare|naive --db FILE [--cache-max-bytes N] [--body FILE]
// Talks to its parent over IPC: {type:'ready', port}; answers {type:'stats'} and {type:'ingest', file}.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { readLines, SlicedApplier } from '../src/ingest';
import { createService } from '../src/serve';
import { openDb, Projector, type SourceEvent } from '../src/store';
import { naiveVisibility } from './naive';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { db: { type: 'string' }, 'cache-max-bytes': { type: 'string' }, body: { type: 'string' } },
});
const kind = positionals[0];
const db = openDb(values.db!, { fast: true });
let rssMax = 0;
setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 100).unref();

function listener(): http.RequestListener {
  if (kind === 'service') {
    return createService({ db, cacheMaxBytes: Number(values['cache-max-bytes'] ?? 256 * 1024 * 1024) }).handler;
  }
  if (kind === 'bare') {
    // The limit for Node here: the same bytes and headers as a cached /visibility answer, nothing else.
    const body = fs.readFileSync(values.body!);
    const headers = {
      'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), etag: '"bare"',
      'cache-control': 'private, no-cache', vary: 'Accept-Encoding, Authorization, X-API-Key', 'x-data-version': '1',
      'last-modified': new Date(0).toUTCString(),
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

/** Applies an event file in time-sliced batches while serving; reports event-loop delay meanwhile. */
async function ingest(file: string): Promise<Record<string, number>> {
  const events: SourceEvent[] = [];
  let n = 0;
  for await (const raw of readLines(file)) events.push({ raw, source: `bench:${file}`, position: ++n });
  const eld = monitorEventLoopDelay({ resolution: 1 });
  const slow: number[] = [];
  const applier = new SlicedApplier(new Projector(db), { budgetMs: 8, onBatch: (_r, s) => { if (s > 0.02) slow.push(s * 1000); } });
  eld.enable();
  const started = performance.now();
  await applier.apply(events);
  const seconds = (performance.now() - started) / 1000;
  eld.disable();
  return { events: events.length, seconds, slow_slices: slow.length, slowest_slice_ms: Math.max(0, ...slow), eld_p50_ms: eld.percentile(50) / 1e6, eld_p99_ms: eld.percentile(99) / 1e6, eld_max_ms: eld.max / 1e6 };
}

const server = http.createServer(listener());
server.listen(0, '127.0.0.1', () => {
  process.send!({ type: 'ready', port: (server.address() as AddressInfo).port });
});
// Exit normally on SIGTERM, so --cpu-prof and friends can write their output.
process.on('SIGTERM', () => process.exit(0));
process.on('message', (m: { type: string; file?: string }) => {
  if (m.type === 'stats') process.send!({ type: 'stats', rss_max: rssMax, rss: process.memoryUsage().rss });
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
