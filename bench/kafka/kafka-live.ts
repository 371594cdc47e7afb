// Part b of `npm run bench:kafka`: one phase of the live stream against the running service, under
// read load. Freshness (produce ack -> the probe group and its run visible through the API), consumer
// lag (produced minus committed offsets, every second) and the serving thread's event-loop delay.
import autocannon from 'autocannon';
import type { Admin } from 'kafkajs';
import { cpuShare, cpuSnapshot, type CpuShare } from '../lib/cpu';
import { producedCount } from './kafka-broker';
import { CommittedOffsets, scrapeOps, type OpsSample, type Service } from './kafka-service';
import type { StreamMessage, StreamStart } from './kafka-live.worker';
import type { BenchWorld, ReadRequest } from './kafka-world';
import { startWorker } from '../../src/lib/worker';
import { wrkLoad } from '../lib/wrk';

export interface LiveOptions {
  rate: number; seconds: number; drainSeconds: number; readRate: number; connections: number; tag: string;
  /** The read load's generator: wrk (C, a few us of CPU a request) or autocannon (Node; needed for a read rate). */
  client: 'wrk' | 'autocannon';
  /** The local broker's process, for its CPU share (null: not on this host). */
  brokerPid: number | null;
  /** The read load under the stream measured in two halves of o.seconds / 2 each (a concentrated stream's cost grows as the day's runs pile up). */
  halves?: boolean;
}

/** The read load and staleness over one half of the stream. */
export interface Half { reads: Reads; staleness: number[] }

/** One second of a run: offsets, and the service's ops figures (null where /metrics did not answer). */
export interface Sample extends OpsSample {
  t: number; produced: number; committed: number; lag: number; streaming: boolean;
}

/** A sample's ops figures when /metrics did not answer. */
const NO_OPS: OpsSample = { eldP99Ms: null, eldMaxMs: null, deadLetters: null, transactions: null, applied: null };

export interface PhaseResult {
  rate: number;
  produced: number;
  streamSeconds: number;
  /** ms from ack to visible, one per probe; null: not visible by the end of the drain. */
  freshness: Array<number | null>;
  samples: Sample[];
  lagAtEnd: number;
  /** Seconds after the stream stopped until every produced offset was committed; null: not within the drain. */
  drainedIn: number | null;
  lagAfterDrain: number;
  reads: { requests: number; seconds: number; p50: number; p99: number; non2xx: number; errors: number };
  /** Where the host's CPU went while the stream ran. */
  cpu: CpuShare;
  /** The same read load for the same time without the stream, just before it (readRate 0: as fast as it goes). */
  quiet: Reads;
  /**
   * How far behind the data the answers of one cached endpoint were, ms, one per answer: the time
   * since the project's change feed first announced a data version newer than the answer's (0 when
   * none). The feed announces a commit within its poll (250 ms) of it, so this may read up to that
   * much low; it never reads high.
   */
  staleness: number[];
  /** The body cache's counters over the quiet run and over the stream (ops /cache). */
  cache: { quiet: CacheDelta; stream: CacheDelta };
  /** With LiveOptions.halves: the first and the second half of the stream (`reads` then sums them, its p50 and p99 the worse half's). */
  halves: [Half, Half] | null;
}

/** Bodies built, and answers given stale, per second of a run. */
export interface CacheDelta { buildsPerSecond: number; stalePerSecond: number }

/** The body cache's counters (ops /cache) at one moment. */
export interface CacheCounts { at: number; builds: number; stale: number }

export async function cacheCounts(ops: string): Promise<CacheCounts> {
  // Generous: under the read load the service may take seconds to answer its ops port.
  const res = await fetch(`${ops}/cache`, { signal: AbortSignal.timeout(30_000) });
  const j = (await res.json()) as { builds: number; routes: Record<string, { stale: number }> };
  return { at: performance.now(), builds: j.builds, stale: Object.values(j.routes).reduce((a, r) => a + r.stale, 0) };
}

const delta = (a: CacheCounts, b: CacheCounts): CacheDelta => {
  const s = (b.at - a.at) / 1000;
  return { buildsPerSecond: (b.builds - a.builds) / s, stalePerSecond: (b.stale - a.stale) / s };
};

export interface Reads { requests: number; seconds: number; p50: number; p99: number; non2xx: number; errors: number }

const readsOf = (r: autocannon.Result): Reads =>
  ({ requests: r.requests.total, seconds: r.duration, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts });

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const nowMs = (): number => performance.timeOrigin + performance.now();

/**
 * Polls GET /runs/{group} until it answers 200 with the probe's run in it. Every 5 ms at first, then
 * at 5 % of the time waited so far (at most every 500 ms): the precision stays within 5 % while a
 * consumer that fell far behind is not also flooded with polls.
 */
async function poll(api: string, m: Extract<StreamMessage, { type: 'probe' }>, headers: Record<string, string>, stopped: () => boolean): Promise<number | null> {
  const plain = { 'x-api-key': headers['x-api-key']! };
  while (!stopped()) {
    const res = await fetch(`${api}/runs/${m.group}`, { headers: plain, signal: AbortSignal.timeout(5000) }).catch(() => null);
    if (res) {
      // The timeout may fire while the body is read (a slow build): that poll failed, the next one asks again.
      const body = await res.text().catch(() => null);
      if (res.status === 200 && body?.includes(m.run)) return nowMs() - m.ackedAt;
    }
    await sleep(Math.min(500, Math.max(5, (nowMs() - m.ackedAt) * 0.05)));
  }
  return null;
}

/** `reads` over `o.connections` for `o.seconds`, at `o.readRate` req/s (0: as fast as they go). */
export async function readLoad(api: string, reads: ReadRequest[], o: Pick<LiveOptions, 'client' | 'connections' | 'seconds' | 'readRate'>): Promise<Reads> {
  const origin = new URL(api).origin;
  if (o.client === 'wrk') return wrkLoad(origin, reads, { connections: o.connections, seconds: o.seconds });
  return readsOf(await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({
      url: origin, connections: o.connections, ...(o.readRate > 0 ? { overallRate: o.readRate } : {}), duration: o.seconds, timeout: 10,
      requests: reads.map((r) => ({ method: r.method, path: r.path, headers: r.headers })),
    }, (err: unknown, result: autocannon.Result) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(result)));
  }));
}

/**
 * Follows one project's change feed, and asks one of its endpoints (as a dashboard does: no
 * Cache-Control) every 20 ms; each answer's staleness is measured against the feed (PhaseResult.staleness).
 */
function stalenessProbe(api: string, project: string, headers: Record<string, string>): { stop: () => Promise<Array<{ at: number; ms: number }>> } {
  const announced: Array<{ version: number; at: number }> = [];
  const out: Array<{ at: number; ms: number }> = [];
  const abort = new AbortController();
  let stopped = false;
  const feed = (async () => {
    const res = await fetch(`${api}/projects/${project}/changes`, { headers: { 'x-api-key': headers['x-api-key']! }, signal: abort.signal });
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data) announced.push({ version: (JSON.parse(data) as { data_version: number }).data_version, at: nowMs() });
      }
    }
  })().catch(() => undefined);
  const asking = (async () => {
    while (!stopped) {
      const res = await fetch(`${api}/projects/${project}/visibility`, { headers, signal: AbortSignal.timeout(5000) }).catch(() => null);
      // A body cut short by the timeout is no answer (it would otherwise reject where nothing awaits it yet).
      if (res && (await res.arrayBuffer().then(() => true, () => false))) {
        const version = Number(res.headers.get('x-data-version'));
        const newer = announced.find((a) => a.version > version);
        if (res.status === 200 && announced.length > 0) out.push({ at: nowMs(), ms: newer ? nowMs() - newer.at : 0 });
      }
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await asking;
      abort.abort();
      await feed;
      return out;
    },
  };
}

/** Samples lag and event-loop delay every second until stop() is called. */
function sampler(service: Service, admin: Admin, topic: string, offsets: CommittedOffsets, started: number, isStreaming: () => boolean) {
  const samples: Sample[] = [];
  let stop = false;
  const running = (async () => {
    while (!stop) {
      const tick = performance.now();
      const [produced, ops] = await Promise.all([producedCount(admin, topic), scrapeOps(service.ops).catch(() => null)]);
      const committed = offsets.read() ?? 0;
      samples.push({ t: (tick - started) / 1000, produced, committed, lag: Math.max(0, produced - committed), ...(ops ?? NO_OPS), streaming: isStreaming() });
      await sleep(Math.max(0, 1000 - (performance.now() - tick)));
    }
  })();
  return { samples, stop: async () => { stop = true; await running; } };
}

/** One phase: the stream at o.rate for o.seconds under read load, then a bounded drain. */
export async function livePhase(service: Service, admin: Admin, topic: string, offsets: CommittedOffsets, world: BenchWorld,
  brokers: string, o: LiveOptions, log: (s: string) => void): Promise<PhaseResult> {
  log(`  the read load alone for ${o.seconds} s`);
  const quietFrom = await cacheCounts(service.ops);
  const quiet = await readLoad(service.api, world.reads, o);
  const quietTo = await cacheCounts(service.ops);
  const started = performance.now();
  const pid = service.child.pid!;
  const watched = world.templates[0]!.project_id;
  const stale = stalenessProbe(service.api, watched, world.headersOf[watched]!);
  const cpuAtStart = cpuSnapshot(pid, o.brokerPid);
  let streaming = true;
  const sampling = sampler(service, admin, topic, offsets, started, () => streaming);
  const start: StreamStart = { brokers, topic, rate: o.rate, seconds: o.seconds, templates: world.templates, tag: o.tag };
  const worker = startWorker(__filename, start);
  const probes: Array<Promise<number | null>> = [];
  let probesStopped = false;
  const streamFrom = await cacheCounts(service.ops);
  const midpoint = nowMs() + (o.seconds / 2) * 1000;
  const reads = (o.halves
    ? (async () => {
      const half = { ...o, seconds: o.seconds / 2 };
      const first = await readLoad(service.api, world.reads, half);
      return [first, await readLoad(service.api, world.reads, half)];
    })()
    : readLoad(service.api, world.reads, o).then((r) => [r])
  ).then(async (r) => ({ r, to: await cacheCounts(service.ops) }));
  const done = await new Promise<Extract<StreamMessage, { type: 'done' }>>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (m: StreamMessage) => {
      if (m.type === 'probe') probes.push(poll(service.api, m, world.headersOf[m.project]!, () => probesStopped));
      else if (m.type === 'done') resolve(m);
      else reject(new Error(`stream: ${m.message}`));
    });
  }).finally(() => void worker.terminate());
  streaming = false;
  const cpu = cpuShare(cpuAtStart, cpuSnapshot(pid, o.brokerPid), pid);
  const stoppedAt = performance.now();
  const produced = await producedCount(admin, topic);
  const lagAtEnd = Math.max(0, produced - (offsets.read() ?? 0));
  log(`  stream done: ${done.produced} events in ${done.seconds.toFixed(1)} s; lag at the end ${lagAtEnd}; draining (at most ${o.drainSeconds} s)`);
  let drainedIn: number | null = null;
  const allProbes = Promise.all(probes);
  while (performance.now() - stoppedAt < o.drainSeconds * 1000) {
    if (drainedIn === null && (offsets.read() ?? 0) >= produced) drainedIn = (performance.now() - stoppedAt) / 1000;
    if (drainedIn !== null && (await Promise.race([allProbes.then(() => true), sleep(50).then(() => false)]))) break;
    await sleep(50);
  }
  probesStopped = true;
  const freshness = await allProbes;
  const lagAfterDrain = Math.max(0, produced - (offsets.read() ?? 0));
  const { r: parts, to: streamTo } = await reads;
  await sampling.stop();
  const answers = await stale.stop();
  const staleness = answers.map((a) => a.ms);
  const r = parts.length === 1 ? parts[0]! : {
    requests: parts[0]!.requests + parts[1]!.requests, seconds: parts[0]!.seconds + parts[1]!.seconds,
    p50: Math.max(parts[0]!.p50, parts[1]!.p50), p99: Math.max(parts[0]!.p99, parts[1]!.p99),
    non2xx: parts[0]!.non2xx + parts[1]!.non2xx, errors: parts[0]!.errors + parts[1]!.errors,
  };
  const halves: [Half, Half] | null = parts.length === 1 ? null : [
    { reads: parts[0]!, staleness: answers.filter((a) => a.at < midpoint).map((a) => a.ms) },
    { reads: parts[1]!, staleness: answers.filter((a) => a.at >= midpoint).map((a) => a.ms) },
  ];
  return {
    rate: o.rate, produced: done.produced, streamSeconds: done.seconds, freshness, samples: sampling.samples, lagAtEnd, drainedIn, lagAfterDrain,
    reads: r, cpu, quiet, staleness, cache: { quiet: delta(quietFrom, quietTo), stream: delta(streamFrom, streamTo) }, halves,
  };
}
