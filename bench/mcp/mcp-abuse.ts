// npm run bench:mcp [-- --calls N --ids N --keys N --depth N --concurrency N --heap MB --bin FILE]
// A hostile caller's POST /mcp (huge argument lists, many keys, deep nesting), against the built service (`serve --demo`, its own process, a
// --heap MB old space): --calls tools/call (default 150) each naming --ids made-up engine ids
// (100,000), then one body whose arguments have --keys keys (300,000), then one with arrays nested
// --depth deep (2,000,000: 4 MB). Meanwhile a probe GETs a cached body every 20 ms.
// It reports:
//   - the answers, by status (what a caller got);
//   - RSS growth (MB) of the server over the flood: the peak and the end, against the RSS after warm-up;
//   - the longest the event loop was blocked: the ops port's nodejs_eventloop_lag_max_seconds over
//     the flood (prom-client's event-loop delay histogram, reset by the scrape before it), and the
//     probe's slowest answer against its median before the flood;
//   - whether the server is alive at the end (a GET answers 200).
// Targets (one caller must not take the service down): alive, RSS growth <= 64 MB, no answer holding the event loop > 100 ms.
// --bin runs another checkout's build (e.g. the code before the fix). Exits non-zero only on errors.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { DEMO_KEYS } from '../../fixtures/world';
import { numberFlag, parseFlags } from '../lib/bench-flags';
import { freePort, median } from '../lib/lib';
import { fmt, machineLine } from '../lib/machine';
import { packageRoot } from '../../src/lib/root';

const { values } = parseFlags({
  options: {
    calls: { type: 'string' }, ids: { type: 'string' }, keys: { type: 'string' }, depth: { type: 'string' },
    concurrency: { type: 'string' }, heap: { type: 'string' }, bin: { type: 'string' },
  },
});
const CALLS = numberFlag('calls', values.calls, 150, 'non-negative integer');
const IDS = numberFlag('ids', values.ids, 100_000, 'positive integer');
const KEYS = numberFlag('keys', values.keys, 300_000, 'positive integer');
const DEPTH = numberFlag('depth', values.depth, 2_000_000, 'positive integer');
const CONCURRENCY = numberFlag('concurrency', values.concurrency, 4, 'positive integer');
const HEAP_MB = numberFlag('heap', values.heap, 512, 'positive integer');
const BIN = path.resolve(values.bin ?? path.join(packageRoot(), 'bin', 'visibility-api.js'));
const TARGET_RSS_MB = 64;
const TARGET_LOOP_MS = 100;
const PROBE_EVERY_MS = 20;

const key = DEMO_KEYS.find((k) => !k.revoked)!.key;

/** The probe thread: GET its url every `every` ms, post each answer's latency (ms). */
const PROBE = `
const http = require('node:http');
const { parentPort, workerData: { url, key, every } } = require('node:worker_threads');
const agent = new http.Agent({ keepAlive: true });
function once() {
  const started = performance.now();
  http.get(url, { agent, headers: { 'x-api-key': key } }, (res) => {
    res.resume();
    res.on('end', () => { parentPort.postMessage(performance.now() - started); setTimeout(once, every); });
  }).on('error', () => setTimeout(once, every));
}
once();
`;

interface Answer { status: number; text: string; ms: number }

/** One request; a connection reset after the answer came (a 413 that closes early) still counts as that answer. */
function send(url: string, method: string, body?: string): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let answered = false;
    const req = http.request(url, {
      method,
      headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, text: '', ms: performance.now() - started }));
    });
    req.on('error', (err) => {
      if (!answered) resolve({ status: 0, text: (err as NodeJS.ErrnoException).code ?? err.message, ms: performance.now() - started });
    });
    req.end(body);
  });
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN; // the process is gone
  }
}

/** The ops port's event-loop delay max since the previous scrape, in ms (the scrape resets it). */
async function loopMaxMs(ops: string): Promise<number> {
  const a = await send(`${ops}/metrics`, 'GET');
  const m = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(a.text);
  return m ? Number(m[1]) * 1000 : NaN;
}

async function main(): Promise<void> {
  const [port, opsPort] = [await freePort(), await freePort()];
  const api = `http://127.0.0.1:${port}`;
  const ops = `http://127.0.0.1:${opsPort}`;
  const child: ChildProcess = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, BIN, 'serve', '--rate-limit', '0', '--demo', '--port', String(port), '--ops-port', String(opsPort), '--host', '127.0.0.1'],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  let exited: string | null = null;
  child.on('exit', (code, signal) => (exited = `exit ${code ?? signal}`));
  const pid = child.pid!;
  try {
    // Ready: the demo replayed and the read model loaded.
    let projects: Array<{ id: string }> = [];
    for (let i = 0; i < 600 && projects.length === 0; i++) {
      if (exited) throw new Error(`the server stopped while starting (${exited}): ${stderr}`);
      const a = await send(`${api}/v1/public/projects`, 'GET');
      if (a.status === 200) projects = JSON.parse(a.text) as Array<{ id: string }>;
      else await new Promise((r) => setTimeout(r, 200));
    }
    const project = projects[0]!.id;
    const probeUrl = `${api}/v1/public/projects/${project}/visibility`;
    // Warm-up: the MCP SDK loaded, the probed body cached, a few ordinary tool calls.
    const call = (id: number, args: string): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"visibility","arguments":${args}}}`;
    for (let i = 0; i < 20; i++) {
      await send(`${api}/mcp`, 'POST', call(i, JSON.stringify({ project_id: project })));
      await send(probeUrl, 'GET');
    }
    // The probe runs on a thread of its own: sending 4 MB bodies must not delay its measurements.
    const probes: number[] = [];
    const prober = new Worker(PROBE, { eval: true, workerData: { url: probeUrl, key, every: PROBE_EVERY_MS } });
    prober.on('message', (ms: number) => probes.push(ms));
    await loopMaxMs(ops);
    await new Promise((r) => setTimeout(r, 3000));
    const baselineProbe = probes.splice(0);
    const quietLoop = await loopMaxMs(ops); // the noise floor: the same probes, no flood
    const rss0 = rssMb(pid);
    await loopMaxMs(ops); // resets the histogram: the next scrape covers the flood only

    // The bodies are made before the clock starts: making them blocks this process, which also probes.
    // Each call's list differs in its first id (distinct cache keys, as distinct made-up lists would be).
    const fakeId = (i: number): string => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
    const rest = Array.from({ length: IDS - 1 }, (_, i) => `"${fakeId(CALLS + i)}"`).join(',');
    const idsBody = (i: number): string => call(i, `{"project_id":"${project}","engine_ids":["${fakeId(i)}",${rest}]}`);
    const keysBody = call(1, `{${Array.from({ length: KEYS }, (_, i) => `"k${i}":1`).join(',')}}`);
    const deepBody = call(1, `{"project_id":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`);
    let rssPeak = rss0;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(pid) || 0)), 50);
    probes.length = 0; // from here on: during the flood

    const started = performance.now();
    const statuses = new Map<string, number>();
    const count = (what: string, a: Answer): void => {
      const k = `${what}: ${a.status === 0 ? a.text : a.status}`;
      statuses.set(k, (statuses.get(k) ?? 0) + 1);
    };
    let next = 0;
    let sent = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS && !exited) {
        const i = next++;
        count(`${fmt(IDS)} engine ids`, await send(`${api}/mcp`, 'POST', idsBody(i)));
        sent++;
      }
    }));
    if (!exited) count(`${fmt(KEYS)} keys`, await send(`${api}/mcp`, 'POST', keysBody));
    if (!exited) count(`${fmt(DEPTH)} deep`, await send(`${api}/mcp`, 'POST', deepBody));
    const floodSeconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 500));
    await prober.terminate();
    clearInterval(sampler);
    const rssEnd = rssMb(pid);
    const loopMax = exited ? NaN : await loopMaxMs(ops);
    const alive = !exited && (await send(`${api}/v1/public/projects`, 'GET')).status === 200;

    const base = median(baselineProbe);
    const probeMax = probes.length ? Math.max(...probes) : NaN;
    const growth = rssPeak - rss0;
    console.log(`bench mcp-abuse: ${machineLine()}`);
    console.log(`server: ${path.relative(process.cwd(), BIN) || BIN} serve --demo, --max-old-space-size=${HEAP_MB}`);
    console.log(`flood: ${fmt(sent)} of ${fmt(CALLS)} tools/call with ${fmt(IDS)} made-up engine ids (concurrency ${CONCURRENCY}), one body of ${fmt(KEYS)} argument keys, one nested ${fmt(DEPTH)} deep; ${fmt(floodSeconds, 1)} s`);
    for (const [k, n] of statuses) console.log(`  ${k} x ${fmt(n)}`);
    console.log(`RSS: ${fmt(rss0)} MB after warm-up, peak ${fmt(rssPeak)} MB (+${fmt(growth)}), end ${Number.isNaN(rssEnd) ? 'gone' : `${fmt(rssEnd)} MB (+${fmt(rssEnd - rss0)})`}`);
    console.log(`event loop: max delay ${Number.isNaN(loopMax) ? 'n/a' : `${fmt(loopMax, 1)} ms`} (ops /metrics nodejs_eventloop_lag_max_seconds over the flood; ${fmt(quietLoop, 1)} ms over 3 s before it, no flood)`);
    console.log(`probe (a cached GET every ${PROBE_EVERY_MS} ms): median ${fmt(base, 1)} ms before, slowest ${fmt(probeMax, 1)} ms during (${fmt(probes.length)} probes)`);
    console.log(`alive at the end: ${alive ? 'yes' : `no${exited ? ` (${exited}: ${stderr.trim().split('\n').slice(-3).join(' | ')})` : ''}`}`);
    const loopMs = Math.max(Number.isNaN(loopMax) ? 0 : loopMax, probeMax - base);
    const ok = alive && growth <= TARGET_RSS_MB && loopMs <= TARGET_LOOP_MS;
    console.log(`targets (alive, RSS growth <= ${TARGET_RSS_MB} MB, event loop <= ${TARGET_LOOP_MS} ms): ${ok ? 'met' : 'NOT met'}`);
  } finally {
    if (!exited) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
