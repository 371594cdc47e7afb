// The markdown of `npm run bench:kafka`: measured figures next to their targets, met or not.
import { fmt } from '../lib/machine';
import type { PhaseResult, Sample } from './kafka-live';

export interface CatchUp {
  events: number;
  produceSeconds: number;
  consumeOnly: { wholeSeconds: number; steadySeconds: number };
  replaySeconds: number;
  /** Service spawned -> every offset committed in SQLite; first commit -> last. */
  e2eSeconds: number;
  e2eSteadySeconds: number;
  e2eSamples: Sample[];
  /** SQLite transactions the service committed for the catch-up (ops /metrics; null: not scraped). */
  e2eTransactions: number | null;
}

export const TARGETS = { ratio: 0.8, freshnessP99Ms: 250, eldP99Ms: 20, readP99Ms: 20 };
/** The read rate kept under a stream (reads must not starve while events arrive), by stream rate (events/s). */
const KEPT = (rate: number): number => (rate >= 10_000 ? 0.6 : 0.8);

const met = (ok: boolean): string => (ok ? 'met' : '**not met**');
const rate = (events: number, seconds: number): string => fmt(events / seconds);

/** Nearest-rank percentile; a probe never seen counts as infinitely late. */
export function percentile(xs: Array<number | null>, p: number): number {
  const s = xs.map((x) => x ?? Infinity).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const ms = (v: number, cutoff: string): string => (Number.isNaN(v) ? '-' : Number.isFinite(v) ? `${fmt(v, 0)} ms` : `not visible ${cutoff}`);

/** The worst and the median one-second p99 of the serving thread's event-loop delay. */
export function eld(samples: Sample[]): { worst: number; median: number; max: number } {
  const p99 = samples.map((s) => s.eldP99Ms).filter((v): v is number => v !== null).sort((a, b) => a - b);
  const max = samples.map((s) => s.eldMaxMs).filter((v): v is number => v !== null);
  if (p99.length === 0) return { worst: NaN, median: NaN, max: NaN };
  return { worst: p99[p99.length - 1]!, median: p99[Math.floor(p99.length / 2)]!, max: Math.max(...max) };
}

/** Least-squares slope of the lag over the second half of the stream, in events/s: > 0 is falling behind. */
function lagSlope(samples: Sample[]): number {
  const s = samples.filter((x) => x.streaming);
  const half = s.slice(Math.floor(s.length / 2));
  if (half.length < 2) return NaN;
  const mt = half.reduce((a, x) => a + x.t, 0) / half.length;
  const ml = half.reduce((a, x) => a + x.lag, 0) / half.length;
  const num = half.reduce((a, x) => a + (x.t - mt) * (x.lag - ml), 0);
  const den = half.reduce((a, x) => a + (x.t - mt) ** 2, 0);
  return num / den;
}

export function catchUpTable(c: CatchUp): string {
  const ratio = c.replaySeconds / c.e2eSeconds;
  const e = eld(c.e2eSamples);
  return [
    '| measure | events | seconds | events/s |', '|---|---:|---:|---:|',
    `| produce (kafkajs, acks=all, keyed by project) | ${fmt(c.events)} | ${fmt(c.produceSeconds, 1)} | ${rate(c.events, c.produceSeconds)} |`,
    `| consume only (kafkajs, no projection; connect -> last record) | ${fmt(c.events)} | ${fmt(c.consumeOnly.wholeSeconds, 1)} | ${rate(c.events, c.consumeOnly.wholeSeconds)} |`,
    `| file replay (\`visibility-api replay\`, whole process) | ${fmt(c.events)} | ${fmt(c.replaySeconds, 1)} | ${rate(c.events, c.replaySeconds)} |`,
    `| **end to end** (\`visibility-api serve\` spawned -> every offset committed in SQLite) | ${fmt(c.events)} | ${fmt(c.e2eSeconds, 1)} | ${rate(c.events, c.e2eSeconds)} |`,
    `| end to end, first commit -> last (startup excluded) | ${fmt(c.events)} | ${fmt(c.e2eSteadySeconds, 1)} | ${rate(c.events, c.e2eSteadySeconds)} |`,
    `| startup: \`serve\` spawned -> its first commit | | ${fmt(c.e2eSeconds - c.e2eSteadySeconds, 2)} | |`,
    `| SQLite transactions of the catch-up (events per transaction) | | ${c.e2eTransactions === null ? '-' : `${fmt(c.e2eTransactions)} (${fmt(c.events / c.e2eTransactions, 0)})`} | |`,
    '',
    '| figure | measured | target | |', '|---|---:|---:|---|',
    `| end to end / file replay | ${fmt(ratio, 2)} | >= ${TARGETS.ratio} | ${met(ratio >= TARGETS.ratio)} |`,
    `| end to end / consume only | ${fmt(c.consumeOnly.wholeSeconds / c.e2eSeconds, 2)} | | |`,
    `| event-loop delay p99 of the serving thread during the catch-up (worst 1 s; median ${fmt(e.median, 1)} ms, max ${fmt(e.max, 0)} ms) | ${fmt(e.worst, 1)} ms | <= ${TARGETS.eldP99Ms} ms | ${met(e.worst <= TARGETS.eldP99Ms)} |`,
  ].join('\n');
}

/** Transactions committed between the first and the last sample, and events applied per transaction (ops /metrics). */
function perTransaction(samples: Sample[]): { transactions: number; perTransaction: number } | null {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (first?.transactions == null || last?.transactions == null || first.applied == null || last.applied == null) return null;
  const transactions = last.transactions - first.transactions;
  return { transactions, perTransaction: transactions > 0 ? (last.applied - first.applied) / transactions : 0 };
}

export function liveTable(phases: PhaseResult[], drainSeconds: number, readRate: number): string {
  const head = `| figure | target | ${phases.map((p) => `${fmt(p.rate)} events/s | met | `).join('')}`;
  const rule = `|---|---:|${phases.map(() => '---:|---|').join('')}`;
  const row = (figure: string, target: string, cell: (p: PhaseResult) => [string, boolean | null]): string =>
    `| ${figure} | ${target} | ${phases.map((p) => {
      const [v, ok] = cell(p);
      return `${v} | ${ok === null ? '' : met(ok)} | `;
    }).join('')}`;
  const cutoff = `within ${drainSeconds} s of the stream's end`;
  return [
    head, rule,
    row('events produced (achieved rate)', '', (p) => [`${fmt(p.produced)} (${fmt(p.produced / p.streamSeconds)}/s)`, null]),
    row('probe groups visible / produced', '', (p) => [`${p.freshness.filter((f) => f !== null).length} / ${p.freshness.length}`, null]),
    row('freshness p50 (produce ack -> group and run in the API)', '', (p) => [ms(percentile(p.freshness, 50), cutoff), null]),
    row('**freshness p99**', `<= ${TARGETS.freshnessP99Ms} ms`, (p) => {
      const v = percentile(p.freshness, 99);
      return [ms(v, cutoff), v <= TARGETS.freshnessP99Ms];
    }),
    row('lag at the start (produced - committed)', '', (p) => [fmt(p.samples[0]?.lag ?? NaN), null]),
    row('lag max during the stream', '', (p) => [fmt(Math.max(0, ...p.samples.filter((s) => s.streaming).map((s) => s.lag))), null]),
    row('**lag at the stream\'s end** (bounded: at most 1 s of production)', '<= rate', (p) => [fmt(p.lagAtEnd), p.lagAtEnd <= p.rate]),
    row('lag trend over the 2nd half of the stream', '', (p) => [`${fmt(lagSlope(p.samples))} events/s`, null]),
    row('drained after the stream stopped', '', (p) => [p.drainedIn === null ? `no: ${fmt(p.lagAfterDrain)} left after ${drainSeconds} s` : `in ${fmt(p.drainedIn, 1)} s`, null]),
    row('SQLite transactions during the stream, events applied per transaction', '', (p) => {
      const t = perTransaction(p.samples.filter((s) => s.streaming));
      return [t === null ? '-' : `${fmt(t.transactions)}, ${fmt(t.perTransaction, 0)}`, null];
    }),
    row('**event-loop delay p99** of the serving thread (worst 1 s)', `<= ${TARGETS.eldP99Ms} ms`, (p) => {
      const e = eld(p.samples.filter((s) => s.streaming));
      return [`${fmt(e.worst, 1)} ms`, e.worst <= TARGETS.eldP99Ms];
    }),
    row('event-loop delay p99 (median 1 s) / max', '', (p) => {
      const e = eld(p.samples.filter((s) => s.streaming));
      return [`${fmt(e.median, 1)} / ${fmt(e.max, 0)} ms`, null];
    }),
    row(`read load (${readRate === 0 ? 'unthrottled' : `${fmt(readRate)} req/s offered`}): answered/s, p50 / p99`, '', (p) =>
      [`${fmt(p.reads.requests / p.reads.seconds)}/s, ${fmt(p.reads.p50, 0)} / ${fmt(p.reads.p99, 0)} ms`, null]),
    row('dead letters (service total at the phase\'s end)', '0', (p) => {
      const d = p.samples[p.samples.length - 1]?.deadLetters ?? null;
      return [d === null ? '-' : fmt(d), d === 0];
    }),
    row('read load without the stream, just before: answered/s, p50 / p99', '', (p) =>
      [`${fmt(p.quiet.requests / p.quiet.seconds)}/s, ${fmt(p.quiet.p50, 0)} / ${fmt(p.quiet.p99, 0)} ms`, null]),
    row('**read rate kept under the stream** (with / without)', '>= 0.80 (1,000/s), >= 0.60 (10,000/s)', (p) => {
      const kept = (p.reads.requests / p.reads.seconds) / (p.quiet.requests / p.quiet.seconds);
      return [fmt(kept, 2), kept >= KEPT(p.rate)];
    }),
    row('**read p99 under the stream**', `<= ${TARGETS.readP99Ms} ms`, (p) => [`${fmt(p.reads.p99, 0)} ms`, p.reads.p99 <= TARGETS.readP99Ms]),
    row('read load: non-2xx, errors (with / without the stream)', '0', (p) =>
      [`${fmt(p.reads.non2xx)}, ${fmt(p.reads.errors)} / ${fmt(p.quiet.non2xx)}, ${fmt(p.quiet.errors)}`, p.reads.non2xx + p.reads.errors + p.quiet.non2xx + p.quiet.errors === 0]),
    ...halfRows(phases, row),
    row('staleness of a cached endpoint vs the change feed: p50 / p99 / max (answers)', '', (p) =>
      [`${fmt(percentile(p.staleness, 50), 0)} / ${fmt(percentile(p.staleness, 99), 0)} / ${fmt(Math.max(0, ...p.staleness), 0)} ms (${fmt(p.staleness.length)})`, null]),
    row('bodies built per second, without / with the stream; answers given stale per second with it', '', (p) =>
      [`${fmt(p.cache.quiet.buildsPerSecond, 0)} / ${fmt(p.cache.stream.buildsPerSecond, 0)}; ${fmt(p.cache.stream.stalePerSecond, 0)}`, null]),
    row('CPU while streaming, cores: host busy (of its cores)', '', (p) => [`${fmt(p.cpu.machineBusy, 2)} (of ${p.cpu.cores})`, null]),
    row('- service: serving thread / ingest threads (Kafka, precompute) / build threads / other threads', '', (p) =>
      [`${fmt(p.cpu.serving, 2)} / ${fmt(p.cpu.ingest, 2)} / ${fmt(p.cpu.build, 2)} / ${fmt(p.cpu.otherService, 2)}`, null]),
    row('- broker / bench process (producer, probes; autocannon) / rest of the host (wrk, other processes)', '', (p) =>
      [`${p.cpu.broker === null ? '-' : fmt(p.cpu.broker, 2)} / ${fmt(p.cpu.bench, 2)} / ${fmt(p.cpu.rest, 2)}`, null]),
  ].join('\n');
}

/** The staleness bound the service runs with (serve --max-staleness, its default). */
const STALENESS_BOUND_MS = 1000;

/** With the stream measured in halves (bench:kafka --concentrated): each half's rate kept, p99, staleness p99 and errors. */
function halfRows(phases: PhaseResult[], row: (figure: string, target: string, cell: (p: PhaseResult) => [string, boolean | null]) => string): string[] {
  if (!phases.some((p) => p.halves !== null)) return [];
  return (['1st', '2nd'] as const).flatMap((name, i) => {
    const half = (p: PhaseResult) => p.halves?.[i] ?? null;
    const cell = (p: PhaseResult, f: (h: NonNullable<ReturnType<typeof half>>) => [string, boolean | null]): [string, boolean | null] => {
      const h = half(p);
      return h === null ? ['-', null] : f(h);
    };
    return [
      row(`**read rate kept, ${name} half of the stream** (with / without)`, '>= 0.80', (p) => cell(p, (h) => {
        const kept = (h.reads.requests / h.reads.seconds) / (p.quiet.requests / p.quiet.seconds);
        return [`${fmt(kept, 2)} (${fmt(h.reads.requests / h.reads.seconds)}/s)`, kept >= 0.8];
      })),
      row(`**read p99, ${name} half**`, `<= ${TARGETS.readP99Ms} ms`, (p) => cell(p, (h) => [`${fmt(h.reads.p99, 0)} ms`, h.reads.p99 <= TARGETS.readP99Ms])),
      row(`**staleness p99, ${name} half** (answers)`, `<= ${STALENESS_BOUND_MS} ms`, (p) => cell(p, (h) => {
        const v = percentile(h.staleness, 99);
        return [`${fmt(v, 0)} ms (${fmt(h.staleness.length)})`, v <= STALENESS_BOUND_MS];
      })),
      row(`read non-2xx, errors, ${name} half`, '0', (p) => cell(p, (h) => [`${fmt(h.reads.non2xx)}, ${fmt(h.reads.errors)}`, h.reads.non2xx + h.reads.errors === 0])),
    ];
  });
}
