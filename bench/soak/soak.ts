// npm run bench:soak [-- --duration S --hot-rate R --events-per-second N --accounts N --days N --prompts N --cache-max-bytes N]
// Soak: the `serve` CLI as users run it (a child process, Kafka on), under a steady read load of 80% of
// its top hot rate on a realistic mix of endpoints and keys, while ~1,000 events/s of new prompt runs
// dated now are produced to its topic, for --duration seconds (default 600). Every --sample seconds:
// the service's RSS (/proc/PID/status), the body cache's bytes (ops /cache), event-loop delay p99 and
// the main thread's heap and external memory (ops /metrics), consumer lag and stored offsets (ops
// /readyz), requests and errors. Then: the stream stops, the consumer drains, the last
// group is checked through the API (once drained, within --drain-timeout), and the service gets
// SIGTERM and must exit 0.
// Prints a summary, writes JSON (--json, default bench/out/soak.json); exits 1 on any error (a request
// that fails or times out, the service dying or not stopping cleanly, dead letters, the last group not
// served), 130 on SIGINT/SIGTERM; lag is reported, not an error. Only 127.0.0.1; leaves no process behind.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import { Kafka, logLevel } from 'kafkajs';
import { packageRoot } from '../../src/lib/root';
import { startWorker } from '../../src/lib/worker';
import { fmt, machineLine } from '../lib/machine';
import type { ProducerReport } from './soak.worker';
import { copyDb, ensureSoakData, soakMix, soakWorld, type MixRequest } from './soak-world';
import { numberFlag, parseFlags } from '../lib/bench-flags';
import { freePort } from '../lib/lib';

const { values } = parseFlags({
  options: {
    duration: { type: 'string' }, 'hot-rate': { type: 'string' }, 'load-fraction': { type: 'string' }, 'events-per-second': { type: 'string' },
    'probe-seconds': { type: 'string' }, timeout: { type: 'string' }, sample: { type: 'string' }, connections: { type: 'string' }, 'drain-timeout': { type: 'string' },
    accounts: { type: 'string' }, days: { type: 'string' }, prompts: { type: 'string' }, 'out-dir': { type: 'string' }, json: { type: 'string' },
    'from-source': { type: 'boolean' }, 'no-pin': { type: 'boolean' }, 'cache-max-bytes': { type: 'string' },
  },
});
const num = (name: string, dflt: number): number => {
  const raw = values[name as keyof typeof values];
  return numberFlag(name, typeof raw === 'string' ? raw : undefined, dflt, 'non-negative number');
};
const ROOT = packageRoot();
const DURATION = num('duration', 600);
/** The service's --cache-max-bytes (null: its default, 256 MiB). */
const CACHE_MAX_BYTES = values['cache-max-bytes'] === undefined ? null : num('cache-max-bytes', 0);
const LOAD_FRACTION = num('load-fraction', 0.8);
const EVENTS_PER_SECOND = num('events-per-second', 1000);
const PROBE_SECONDS = num('probe-seconds', 5);
const SAMPLE_SECONDS = Math.max(1, num('sample', 5));
const CONNECTIONS = Math.max(1, num('connections', 32));
const DRAIN_TIMEOUT = num('drain-timeout', 120);
// A request unanswered after this long counts as an error (autocannon's default); tests on a crowded
// machine raise it, since they assert no timings.
const REQUEST_TIMEOUT = Math.max(1, num('timeout', 10));
const OUT = path.resolve(values['out-dir'] ?? path.join(ROOT, 'bench', 'out'));
const JSON_FILE = path.resolve(values.json ?? path.join(OUT, 'soak.json'));
const WORLD = soakWorld({ accounts: Math.max(2, num('accounts', 30)), days: Math.max(1, num('days', 30)), prompts: Math.max(1, num('prompts', 14)) });
const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';
// RSS drift is measured from minute 2 (caches warm, the stream flowing) to the end; shorter runs use their middle.
const RSS_FROM = DURATION >= 240 ? 120 : DURATION / 2;
// prom-client samples the event loop every 10 ms and records the whole interval: an idle loop shows ~10 ms.
const ELD_RESOLUTION_MS = 10;
const RUN = `${Date.now().toString(16).slice(-8)}`;
const TOPIC = `soak-${RUN}`;

const log = (s: string): void => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${s}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- processes and cleanup

let service: ChildProcess | null = null;
let serviceExit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | null = null;
let producer: Worker | null = null;
let cannon: autocannon.Instance | null = null;
let topicCreated = false;

const alive = (c: ChildProcess | null): c is ChildProcess => c !== null && c.exitCode === null && c.signalCode === null;
const exitOf = (c: ChildProcess | null): string => String(c?.exitCode ?? c?.signalCode ?? 'not started');

/**
 * CPU 0 for this process (autocannon and the producer thread), CPU 1 for the service, as bench/serve/serve.ts
 * pins them: on two cores, a load generator and a server that share CPUs measure the scheduler.
 */
function pinning(): string[] {
  if (values['no-pin']) return [];
  const r = spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  return r.status === 0 ? ['-c', '1'] : []; // no taskset: unpinned, and the summary says so
}

async function deleteTopics(): Promise<void> {
  if (!topicCreated) return;
  topicCreated = false;
  const admin = new Kafka({ clientId: 'soak-admin', brokers: BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
  const work = (async (): Promise<void> => {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const mine = [TOPIC, `${TOPIC}.dlq`].filter((x) => existing.has(x));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  })();
  // The topic holds up to ~1 GB after 10 minutes: worth deleting, but never worth hanging for.
  await Promise.race([work.catch(() => undefined), sleep(10_000)]);
  await admin.disconnect().catch(() => undefined);
}

let cleaning: Promise<void> | null = null;
/** Ends what this process started: load, stream, service (SIGTERM, then SIGKILL after 5 s), topics. Once. */
function cleanup(): Promise<void> {
  return (cleaning ??= stopEverything());
}
async function stopEverything(): Promise<void> {
  cannon?.stop();
  cannon = null;
  if (producer) await producer.terminate().catch(() => undefined);
  producer = null;
  if (alive(service) && serviceExit) {
    service.kill('SIGTERM');
    const exited = await Promise.race([serviceExit.then(() => true), sleep(5000).then(() => false)]);
    if (!exited && alive(service)) {
      service.kill('SIGKILL');
      await Promise.race([serviceExit, sleep(5000)]); // reaped, not left a zombie
    }
  }
  await deleteTopics();
}

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (interrupted) process.exit(130); // a second signal: at once (the exit hook still kills the service)
    interrupted = true;
    log(`${sig}: stopping`);
    void cleanup().finally(() => process.exit(130));
  });
}
// Whatever ends this process, the service does not outlive it.
process.on('exit', () => {
  if (alive(service)) service.kill('SIGKILL');
});

// ---------------------------------------------------------------- helpers


async function getJson<T>(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T | null }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  let body: T | null = null;
  try {
    body = JSON.parse(text) as T;
  } catch {
    body = null;
  }
  return { status: res.status, body };
}

interface Readyz { status: string; kafka?: { state: string; lag: number | null; partitions: Array<{ next_offset: number | null; lag: number | null }> } }

interface Probe { rss: number; anon: number; file: number; threadHeaps: Record<string, number>; cacheBytes: number | null; heapBytes: number | null; externalBytes: number | null; eldP99: number | null; eldMax: number | null; lag: number | null; applied: number; state: string; deadLettered: number }

/** RSS and two of its parts (/proc/PID/status): anonymous memory (heaps, malloc) and mapped files (code, SQLite's -shm). */
function rssOf(pid: number): { rss: number; anon: number; file: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
}

const metric = (text: string, name: string): number | null => {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
};

/** Each worker thread's V8 heap (total), from /metrics, by thread. */
function threadHeapsOf(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^visibility_thread_heap_bytes\{thread="([^"]+)",kind="total"\} ([0-9.eE+-]+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** One sample of the service: RSS, event-loop delay since the previous scrape (prom-client resets it), lag. */
async function probe(ops: string, pid: number): Promise<Probe> {
  const res = await fetch(`${ops}/metrics`, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  const ready = await getJson<Readyz>(`${ops}/readyz`);
  const cache = await getJson<{ bytes: number }>(`${ops}/cache`);
  const p99 = metric(text, 'nodejs_eventloop_lag_p99_seconds');
  const max = metric(text, 'nodejs_eventloop_lag_max_seconds');
  const parts = ready.body?.kafka?.partitions ?? [];
  return {
    ...rssOf(pid),
    threadHeaps: threadHeapsOf(text),
    cacheBytes: cache.body?.bytes ?? null,
    heapBytes: metric(text, 'nodejs_heap_size_total_bytes'),
    externalBytes: metric(text, 'nodejs_external_memory_bytes'),
    eldP99: p99 === null ? null : Math.max(0, p99 * 1000 - ELD_RESOLUTION_MS),
    eldMax: max === null ? null : Math.max(0, max * 1000 - ELD_RESOLUTION_MS),
    lag: ready.body?.kafka?.lag ?? null,
    applied: parts.reduce((s, p) => s + (p.next_offset ?? 0), 0),
    state: ready.body?.kafka?.state ?? 'unknown',
    deadLettered: metric(text, 'visibility_ingest_dead_letters') ?? 0,
  };
}

const median = (xs: number[]): number | null => (xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

function startService(dbFile: string, port: number, opsPort: number, pin: string[], logFile: string): ChildProcess {
  const args = ['serve', '--rate-limit', '0', '--db', dbFile, '--host', '127.0.0.1', '--port', String(port), '--ops-host', '127.0.0.1', '--ops-port', String(opsPort),
    ...(CACHE_MAX_BYTES === null ? [] : ['--cache-max-bytes', String(CACHE_MAX_BYTES)])];
  // From source (tests): the CLI through tsx, as test/cli/replay-and-digest.test.ts runs it; otherwise the installed launcher.
  const node = values['from-source']
    ? [process.execPath, '--import', 'tsx', '-e', "require('./src/cli/main').main(process.argv.slice(1)).then((c) => { process.exitCode = c; }, (e) => { console.error(`visibility-api: ${e && e.message ? e.message : e}`); process.exitCode = 1; })", ...args]
    : [process.execPath, path.join(ROOT, 'bin', 'visibility-api.js'), ...args];
  const cmd = pin.length > 0 ? ['taskset', ...pin, ...node] : node;
  const out = fs.openSync(logFile, 'w');
  const child = spawn(cmd[0]!, cmd.slice(1), {
    cwd: ROOT,
    env: {
      ...process.env, KAFKA_BROKERS: BROKERS, KAFKA_TOPICS: TOPIC, KAFKA_GROUP_ID: `soak-${RUN}`, KAFKA_DLQ_TOPIC: `${TOPIC}.dlq`,
      KAFKA_LOG_LEVEL: 'warn',
      // Ready once a read model is loaded (waitReady), whatever the backlog: the soak measures serving under ingestion.
      MAX_READY_LAG: '0',
    },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  serviceExit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return child;
}

async function waitReady(ops: string, logFile: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (!alive(service)) throw new Error(`the service exited while starting:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
    const r = await getJson<Readyz>(`${ops}/readyz`).catch(() => null);
    if (r?.status === 200 && r.body?.kafka?.state === 'consuming') return;
    if (Date.now() > deadline) throw new Error(`the service was not ready and consuming within 120 s (last: ${JSON.stringify(r?.body ?? null)})`);
    await sleep(250);
  }
}

/** Every distinct request once, 4 at a time: caches warm, and a request that fails is found before the load. */
async function warm(api: string, requests: MixRequest[]): Promise<void> {
  const seen = new Set<string>();
  const distinct = requests.filter((r) => {
    const k = `${r.path} ${JSON.stringify(r.headers)}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < distinct.length) {
      const r = distinct[next++]!;
      const res = await fetch(api + r.path, { headers: r.headers, signal: AbortSignal.timeout(30_000) });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`warm-up: ${r.path} answered ${res.status}`);
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
}

function runCannon(opts: autocannon.Options, onResponse?: (status: number) => void, onError?: () => void): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const inst = autocannon(opts, (err: unknown, result: autocannon.Result) => {
      cannon = null;
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve(result);
    });
    cannon = inst;
    if (onResponse) inst.on('response', (_client, status) => onResponse(status));
    if (onError) inst.on('reqError', () => onError());
  });
}

// ---------------------------------------------------------------- the run

interface Sample {
  t: number; rss_mib: number; anon_mib: number; file_mib: number; threads_heap_mib: number; thread_heaps_mib: Record<string, number>; cache_mib: number | null; heap_mib: number | null; external_mib: number | null; eld_p99_ms: number | null; eld_max_ms: number | null; lag: number | null; applied: number;
  produced: number; requests: number; errors: number; kafka_state: string;
}

async function main(): Promise<number> {
  const startedAt = new Date();
  for (const b of BROKERS.split(',')) {
    if (!/^(127\.0\.0\.1|localhost):\d+$/.test(b.trim())) throw new Error(`KAFKA_BROKERS: the soak only talks to 127.0.0.1 (got ${b})`);
  }
  log(`machine: ${machineLine()}`);
  const data = await ensureSoakData(OUT, WORLD, log);
  const dbFile = path.join(OUT, 'soak-run.db');
  copyDb(data.baseDb, dbFile);
  const mix = soakMix(dbFile, WORLD);
  log(`world ${data.name}: ${fmt(data.events)} events, ${data.templates.length} projects; mix of ${fmt(mix.requests.length)} requests`);

  const admin = new Kafka({ clientId: 'soak-admin', brokers: BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }], waitForLeaders: true });
  topicCreated = true;
  await admin.disconnect();

  const pin = pinning();
  const [port, opsPort] = [await freePort(), await freePort()];
  const api = `http://127.0.0.1:${port}`;
  const ops = `http://127.0.0.1:${opsPort}`;
  const serviceLog = path.join(OUT, 'soak-service.log');
  service = startService(dbFile, port, opsPort, pin, serviceLog);
  const pid = service.pid!;
  await waitReady(ops, serviceLog);
  log(`service pid ${pid} on ${api} (ops ${ops}), consuming ${TOPIC} from ${BROKERS}; ${pin.length > 0 ? 'this process on CPU 0, the service on CPU 1' : 'not pinned'}`);
  await warm(api, mix.requests);

  let hotRate = num('hot-rate', 0);
  if (hotRate === 0) {
    const r = await runCannon({ url: api, connections: CONNECTIONS, duration: PROBE_SECONDS, requests: [mix.hot], timeout: REQUEST_TIMEOUT });
    hotRate = r.requests.average;
    log(`top hot rate (${mix.hot.path.replace(/projects\/[^/]+/, 'projects/{id}')}, ${PROBE_SECONDS} s): ${fmt(hotRate)} req/s`);
  }
  const targetRate = Math.max(1, Math.round(hotRate * LOAD_FRACTION));
  log(`load: ${fmt(targetRate)} req/s (${LOAD_FRACTION * 100}% of ${fmt(hotRate)}) on the mix for ${DURATION} s, ${CONNECTIONS} connections; stream: ${fmt(EVENTS_PER_SECOND)} events/s`);

  // The stream, in a thread of its own.
  let produced = 0;
  let lastReport: ProducerReport | null = null;
  let producerError: string | null = null;
  let producerReady: () => void = () => {};
  const ready = new Promise<void>((r) => (producerReady = r));
  const producerDone = new Promise<ProducerReport | null>((resolve) => {
    producer = startWorker(__filename, { brokers: BROKERS, topic: TOPIC, rate: EVENTS_PER_SECOND, templates: data.templates, tag: RUN });
    producer.on('message', (m: ProducerReport) => {
      if (m.type === 'ready') return producerReady();
      if (m.type === 'error') {
        producerError = m.message ?? 'unknown';
        producerReady();
        resolve(null);
        return;
      }
      lastReport = m;
      produced = m.produced;
      if (m.type === 'done') resolve(m);
    });
    producer.on('error', (e) => {
      producerError = e.message;
      producerReady();
      resolve(null);
    });
  });
  await Promise.race([ready, sleep(60_000)]);
  if (producerError !== null) throw new Error(`the producer failed to start: ${producerError}`);
  producer!.postMessage({ type: 'go' });

  // Samples: the first scrape resets prom-client's event-loop histogram, so each covers one interval.
  await probe(ops, pid);
  const samples: Sample[] = [];
  const statuses = new Map<number, number>();
  let intervalRequests = 0;
  let intervalErrors = 0;
  let serviceDied: string | null = null;
  let sampleFailures = 0;
  const t0 = performance.now();
  let sampling = Promise.resolve();
  const sampler = setInterval(() => {
    sampling = sampling.then(async () => {
      if (!alive(service)) {
        serviceDied ??= `exited (${exitOf(service)}) during the load`;
        cannon?.stop();
        return;
      }
      const t = (performance.now() - t0) / 1000;
      try {
        const p = await probe(ops, pid);
        const s: Sample = {
          t: Math.round(t * 10) / 10, rss_mib: p.rss / 1024 ** 2, anon_mib: p.anon / 1024 ** 2, file_mib: p.file / 1024 ** 2, threads_heap_mib: Object.values(p.threadHeaps).reduce((a, b) => a + b, 0) / 1024 ** 2,
          thread_heaps_mib: Object.fromEntries(Object.entries(p.threadHeaps).map(([k, v]) => [k, v / 1024 ** 2])), cache_mib: p.cacheBytes === null ? null : p.cacheBytes / 1024 ** 2,
          heap_mib: p.heapBytes === null ? null : p.heapBytes / 1024 ** 2, external_mib: p.externalBytes === null ? null : p.externalBytes / 1024 ** 2, eld_p99_ms: p.eldP99, eld_max_ms: p.eldMax, lag: p.lag, applied: p.applied,
          produced, requests: intervalRequests, errors: intervalErrors, kafka_state: p.state,
        };
        samples.push(s);
        log(`t=${fmt(t)} s: ${fmt(s.requests / SAMPLE_SECONDS)} req/s, ${s.errors} errors, RSS ${fmt(s.rss_mib, 1)} MiB (anon ${fmt(s.anon_mib, 1)}, body cache ${s.cache_mib === null ? '-' : fmt(s.cache_mib, 1)}), event-loop delay p99 ` +
          `${s.eld_p99_ms === null ? '-' : fmt(s.eld_p99_ms, 1)} ms, produced ${fmt(produced)}, applied ${fmt(p.applied)}, lag ${p.lag ?? '-'} (${p.state})`);
      } catch (e) {
        sampleFailures += 1;
        log(`t=${fmt(t)} s: sample failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      intervalRequests = 0;
      intervalErrors = 0;
    });
  }, SAMPLE_SECONDS * 1000);

  const result = await runCannon(
    {
      url: api, connections: CONNECTIONS, duration: DURATION, requests: mix.requests, overallRate: targetRate, timeout: REQUEST_TIMEOUT,
      // Rated runs record raw response times (see bench/serve/serve.ts: autocannon's correction counts its own
      // once-a-second pacing as server stalls).
      ignoreCoordinatedOmission: true,
    },
    (status) => {
      intervalRequests += 1;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (!(status >= 200 && status < 300) && status !== 304) intervalErrors += 1;
    },
    () => (intervalErrors += 1),
  );
  clearInterval(sampler);
  await sampling;
  if (interrupted) throw new Error('interrupted'); // the signal handler cleans up and exits
  const loadSeconds = (performance.now() - t0) / 1000;
  log(`load done: ${fmt(result.requests.total)} requests in ${fmt(loadSeconds, 1)} s`);

  // Stop the stream (its current group is finished first), then let the consumer drain.
  producer!.postMessage({ type: 'stop' });
  const final = await Promise.race([producerDone, sleep(60_000).then(() => null)]);
  await producer!.terminate().catch(() => undefined);
  producer = null;
  const producedTotal = final?.produced ?? (lastReport as ProducerReport | null)?.produced ?? produced;
  const lastGroup = final?.lastGroup ?? null;
  const atEndOfLoad = samples[samples.length - 1];
  let drained: number | null = null;
  let applied = atEndOfLoad?.applied ?? 0;
  let deadLettered = 0;
  const drainStart = performance.now();
  while (alive(service) && (performance.now() - drainStart) / 1000 < DRAIN_TIMEOUT) {
    const p = await probe(ops, pid).catch(() => null);
    if (p) {
      applied = p.applied;
      deadLettered = p.deadLettered;
      if (applied >= producedTotal) {
        drained = (performance.now() - drainStart) / 1000;
        break;
      }
    }
    await sleep(1000);
  }
  log(drained !== null ? `drained: all ${fmt(producedTotal)} events applied ${fmt(drained, 1)} s after the load` :
    `NOT drained within ${DRAIN_TIMEOUT} s: ${fmt(applied)} of ${fmt(producedTotal)} applied`);

  // The last group is served: its runs, and today's date in its project's visibility window.
  let visible = false;
  let visibleDetail = drained === null ? 'not checked: the stream was not drained' : 'no group produced';
  if (lastGroup && alive(service) && drained !== null) {
    const headers = mix.headersOf.get(lastGroup.project_id) ?? {};
    const results = await getJson<unknown[]>(`${api}/v1/public/runs/${lastGroup.id}/results`, headers);
    const vis = await getJson<{ window_end: string | null }>(`${api}/v1/public/projects/${lastGroup.project_id}/visibility`, headers);
    const today = new Date().toISOString().slice(0, 10);
    const runs = Array.isArray(results.body) ? results.body.length : -1;
    visible = results.status === 200 && runs === lastGroup.runs && vis.status === 200 && vis.body?.window_end === today;
    visibleDetail = `last group ${lastGroup.id}: /results ${results.status} with ${runs} of ${lastGroup.runs} runs; /visibility window_end ${vis.body?.window_end ?? null} (today ${today})`;
  }
  log(`visible: ${visible} (${visibleDetail})`);

  // SIGTERM, as systemd, Kubernetes and docker stop send it: exit 0 within 10 s is the contract.
  let stop: { code: number | null; signal: string | null; seconds: number | null } = { code: null, signal: null, seconds: null };
  if (alive(service) && serviceExit) {
    const sent = performance.now();
    service.kill('SIGTERM');
    const exit = await Promise.race([serviceExit, sleep(20_000).then(() => null)]);
    if (exit) stop = { code: exit.code, signal: exit.signal, seconds: (performance.now() - sent) / 1000 };
    else {
      service.kill('SIGKILL');
      await serviceExit;
      stop = { code: null, signal: 'SIGKILL after 20 s without exiting', seconds: null };
    }
  } else serviceDied ??= `exited (${exitOf(service)}) before the stop`;
  log(`SIGTERM: ${stop.seconds === null ? stop.signal ?? 'not sent' : `exit ${stop.code ?? stop.signal} after ${fmt(stop.seconds, 1)} s`}`);
  await deleteTopics();

  // ------------------------------------------------------------ figures
  const loadSamples = samples;
  const ref = loadSamples.find((s) => s.t >= RSS_FROM) ?? loadSamples[0];
  const end = loadSamples[loadSamples.length - 1];
  const drift = ref && end ? ((end.rss_mib - ref.rss_mib) / ref.rss_mib) * 100 : null;
  // RSS swings by tens of MiB with when each thread's V8 heap is collected: a single sample at each
  // end measures that swing as much as a trend. The median of the minute from RSS_FROM against the
  // median of the last minute measures the trend.
  const rssIn = (from: number, to: number): number | null => median(loadSamples.filter((s) => s.t >= from && s.t < to).map((s) => s.rss_mib));
  const lastT = end?.t ?? 0;
  const rssFirstMinute = rssIn(RSS_FROM, Math.min(RSS_FROM + 60, lastT));
  const rssLastMinute = rssIn(Math.max(RSS_FROM + 60, lastT - 60), lastT + 1);
  const medianDrift = rssFirstMinute !== null && rssLastMinute !== null ? ((rssLastMinute - rssFirstMinute) / rssFirstMinute) * 100 : null;
  const driftWithoutCache = ref?.cache_mib != null && end?.cache_mib != null
    ? ((end.rss_mib - end.cache_mib - (ref.rss_mib - ref.cache_mib)) / (ref.rss_mib - ref.cache_mib)) * 100 : null;
  const eldP99s = loadSamples.map((s) => s.eld_p99_ms).filter((x): x is number => x !== null);
  const eldMaxes = loadSamples.map((s) => s.eld_max_ms).filter((x): x is number => x !== null);
  const lags = loadSamples.map((s) => s.lag).filter((x): x is number => x !== null);
  const badStatuses = [...statuses].filter(([s]) => !(s >= 200 && s < 300) && s !== 304).reduce((n, [, c]) => n + c, 0);
  const errors = result.errors + badStatuses;
  const failures: string[] = [];
  if (errors > 0) failures.push(`${errors} request errors (${result.errors} socket errors or timeouts, ${badStatuses} unexpected statuses)`);
  if (serviceDied) failures.push(`the service ${serviceDied}`);
  if (producerError) failures.push(`the producer failed: ${producerError}`);
  // Falling behind a live stream is the write path's known limit: reported, not an error of the soak.
  const warnings: string[] = [];
  if (drained === null) warnings.push(`not all events applied within ${DRAIN_TIMEOUT} s of the end of the load (${applied} of ${producedTotal})`);
  if (deadLettered > 0) failures.push(`${deadLettered} events dead-lettered`);
  if (drained !== null && !visible) failures.push(`the last group is not served: ${visibleDetail}`);
  if (stop.code !== 0) failures.push(`SIGTERM: ${stop.seconds === null ? stop.signal ?? 'the service was gone' : `exit ${stop.code ?? stop.signal}`}`);
  if (interrupted) failures.push('interrupted');

  const summary = {
    started_at: startedAt.toISOString(), machine: machineLine(), cache_max_bytes: CACHE_MAX_BYTES, command: process.argv.slice(1).join(' '), pinned: pin.length > 0,
    world: { name: data.name, events: data.events, projects: data.templates.length, accounts: WORLD.accounts, days: WORLD.days, prompts: WORLD.promptsPerProject },
    service: { pid, from_source: values['from-source'] === true },
    load: {
      duration_s: DURATION, connections: CONNECTIONS, hot_rate: hotRate, load_fraction: LOAD_FRACTION, target_rate: targetRate,
      achieved_rate: result.requests.total / loadSeconds, mix_requests: mix.requests.length,
    },
    requests: result.requests.total,
    errors, socket_errors: result.errors, timeouts: result.timeouts, unexpected_statuses: badStatuses,
    statuses: Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])),
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, p99_9: result.latency.p99_9, max: result.latency.max },
    event_loop_delay_ms: {
      p99_median_of_intervals: median(eldP99s), p99_max_of_intervals: eldP99s.length ? Math.max(...eldP99s) : null, max: eldMaxes.length ? Math.max(...eldMaxes) : null,
      source: `ops /metrics nodejs_eventloop_lag_{p99,max}_seconds per ${SAMPLE_SECONDS} s interval, minus prom-client's ${ELD_RESOLUTION_MS} ms sampling interval`,
    },
    rss_mib: {
      from_t: ref?.t ?? null, at_from: ref?.rss_mib ?? null, at_end: end?.rss_mib ?? null, drift_pct: drift,
      median_first_minute: rssFirstMinute, median_last_minute: rssLastMinute, median_drift_pct: medianDrift, max: Math.max(0, ...loadSamples.map((s) => s.rss_mib)),
      // The body cache grows by design up to --cache-max-bytes (stale versions stay until evicted): RSS without it, too.
      cache_at_from: ref?.cache_mib ?? null, cache_at_end: end?.cache_mib ?? null, drift_without_cache_pct: driftWithoutCache,
      // The main thread's V8 heap and its external memory (Buffers: the cached bodies are there), from /metrics.
      anon_at_from: ref?.anon_mib ?? null, anon_at_end: end?.anon_mib ?? null, file_at_from: ref?.file_mib ?? null, file_at_end: end?.file_mib ?? null,
      threads_heap_at_from: ref?.threads_heap_mib ?? null, threads_heap_at_end: end?.threads_heap_mib ?? null,
      heap_at_from: ref?.heap_mib ?? null, heap_at_end: end?.heap_mib ?? null, external_at_from: ref?.external_mib ?? null, external_at_end: end?.external_mib ?? null,
    },
    events: {
      rate: EVENTS_PER_SECOND, produced: producedTotal, applied_at_end_of_load: atEndOfLoad?.applied ?? null, applied, dead_lettered: deadLettered,
      lag_max: lags.length ? Math.max(...lags) : null, lag_at_end_of_load: atEndOfLoad?.lag ?? null,
      applied_per_second_during_load: atEndOfLoad ? atEndOfLoad.applied / atEndOfLoad.t : null, drain_s: drained, last_group: lastGroup,
    },
    visible, visible_detail: visibleDetail,
    sigterm: stop,
    sample_failures: sampleFailures,
    failures, warnings,
    samples: loadSamples,
  };
  fs.mkdirSync(path.dirname(JSON_FILE), { recursive: true });
  fs.writeFileSync(JSON_FILE, JSON.stringify(summary, null, 2) + '\n');
  const f1 = (x: number | null): string => (x === null ? '-' : fmt(x, 1));
  console.log([
    '', `soak: ${DURATION} s, ${fmt(summary.load.achieved_rate)} req/s achieved of ${fmt(targetRate)} targeted (${LOAD_FRACTION * 100}% of ${fmt(hotRate)} hot), ${fmt(EVENTS_PER_SECOND)} events/s produced`,
    `  requests ${fmt(summary.requests)}, errors ${errors} (socket/timeouts ${result.errors}, unexpected statuses ${badStatuses})`,
    `  latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
    `  event-loop delay p99 ${f1(summary.event_loop_delay_ms.p99_median_of_intervals)} ms (median of ${SAMPLE_SECONDS} s intervals), worst interval ${f1(summary.event_loop_delay_ms.p99_max_of_intervals)} ms, max ${f1(summary.event_loop_delay_ms.max)} ms`,
    `  RSS median ${f1(rssFirstMinute)} MiB in the minute from ${fmt(RSS_FROM)} s, ${f1(rssLastMinute)} MiB in the last minute: drift ${medianDrift === null ? '-' : fmt(medianDrift, 1)} %`,
    `  RSS ${f1(summary.rss_mib.at_from)} MiB at ${fmt(ref?.t ?? 0)} s, ${f1(summary.rss_mib.at_end)} MiB at the end: drift ${drift === null ? '-' : fmt(drift, 1)} % (max ${f1(summary.rss_mib.max)} MiB); ` +
      `body cache ${f1(summary.rss_mib.cache_at_from)} -> ${f1(summary.rss_mib.cache_at_end)} MiB, drift without it ${driftWithoutCache === null ? '-' : fmt(driftWithoutCache, 1)} %; ` +
      `anonymous ${f1(summary.rss_mib.anon_at_from)} -> ${f1(summary.rss_mib.anon_at_end)} MiB, files ${f1(summary.rss_mib.file_at_from)} -> ${f1(summary.rss_mib.file_at_end)} MiB; ` +
      `main heap ${f1(summary.rss_mib.heap_at_from)} -> ${f1(summary.rss_mib.heap_at_end)} MiB, worker threads' heaps ${f1(summary.rss_mib.threads_heap_at_from)} -> ${f1(summary.rss_mib.threads_heap_at_end)} MiB`,
    `  events produced ${fmt(producedTotal)}, applied ${fmt(atEndOfLoad?.applied ?? 0)} by the end of the load (${fmt(summary.events.applied_per_second_during_load ?? 0)}/s), lag max ${summary.events.lag_max ?? '-'}, ` +
      `at the end ${summary.events.lag_at_end_of_load ?? '-'}; ${drained === null ? 'not drained' : `drained ${fmt(drained, 1)} s later`}; dead letters ${deadLettered}`,
    `  visible: ${visible}; SIGTERM: ${stop.seconds === null ? stop.signal ?? '-' : `exit ${stop.code ?? stop.signal} in ${fmt(stop.seconds, 1)} s`}`,
    ...warnings.map((w) => `  warning: ${w}`),
    failures.length === 0 ? '  OK' : `  FAILED: ${failures.join('; ')}`,
    `  JSON: ${JSON_FILE}`,
  ].join('\n'));
  return failures.length === 0 ? 0 : 1;
}

// A bound on the whole run, whatever happens: setup, probe, load, drain and stop.
const watchdog = setTimeout(() => {
  log('the soak overran its time bound: stopping');
  void cleanup().finally(() => process.exit(1));
}, (DURATION + PROBE_SECONDS + DRAIN_TIMEOUT + 900) * 1000);
watchdog.unref();

main().then(
  (code) => {
    if (!interrupted) process.exit(code);
  },
  (e: unknown) => {
    if (interrupted) return; // the signal handler exits, once everything is stopped
    console.error(e instanceof Error ? e.stack ?? e.message : e);
    void cleanup().finally(() => process.exit(1));
  },
);
