// npm run bench:kafka [-- --events N --seconds S --rates 1000,10000 --read-rate R --connections C --drain S --client wrk|autocannon]
// npm run bench:kafka -- --concentrated [--read-rate 0 ...]: the stream's run groups all belong to one
// project of 1,000 prompts x 8 engines (8,000 runs a group; rates 1000 and 60 s unless given), the
// dashboard mix over that project's endpoints, the read load measured in each half of the stream.
// (--read-rate 0: unthrottled; each rate's phase first runs the read load alone for S seconds, then with
// the stream, and reports the rate kept, p99, errors and a cached endpoint's staleness vs the change feed)
// Kafka through what users run, against the local broker (127.0.0.1:9092, started by the npm script):
//  a) a generated log of N events on a fresh 3-partition topic; baselines in the same run: a
//     consume-only kafkajs loop over the topic, and `visibility-api replay` of the same log from a
//     file (whole process); then `visibility-api serve` with KAFKA_* set, on a fresh SQLite file:
//     spawned -> every offset committed in SQLite. The figure is end to end / file replay.
//  b) the same service, under read load, while a live stream of new runs dated now (existing
//     projects, prompts, engines) is produced at each rate for S seconds: freshness (produce ack ->
//     a probe group and its run answered by the API), consumer lag every second, event-loop delay of
//     the serving thread (ops /metrics), and where the host's CPU went (bench/lib/cpu.ts). Everything
//     on 127.0.0.1; the run deletes its topic, its consumer groups and its temporary files.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Admin } from 'kafkajs';
import { cleanUp, consumeOnly, createTopic, kafkaOf, produceFile, producedCount } from './kafka-broker';
import { livePhase, type PhaseResult, type Sample } from './kafka-live';
import { catchUpTable, liveTable, type CatchUp } from './kafka-report';
import { CommittedOffsets, scrapeOps, serviceLogTail, spawnService, stopService, waitReady, type Service } from './kafka-service';
import { concentratedWorldFor, worldFor, writeWorld, type BenchWorld } from './kafka-world';
import { localBrokerPid } from '../lib/cpu';
import { numberFlag, numberListFlag, orExit, parseFlags } from '../lib/bench-flags';
import { WRK } from '../lib/wrk';
import { fmt, machineLine } from '../lib/machine';
import { runBench } from '../lib/lib';
import { packageRoot } from '../../src/lib/root';

const { values } = parseFlags({
  options: {
    events: { type: 'string' }, seconds: { type: 'string' }, rates: { type: 'string' }, 'read-rate': { type: 'string' },
    connections: { type: 'string' }, drain: { type: 'string' }, client: { type: 'string' }, concentrated: { type: 'boolean' },
  },
});
const CONCENTRATED = values.concentrated === true;
const num = (name: Exclude<keyof typeof values, 'rates' | 'client' | 'concentrated'>, fallback: number): number => numberFlag(name, values[name], fallback, 'positive number');
const EVENTS = num('events', 120_000);
const SECONDS = num('seconds', CONCENTRATED ? 60 : 20);
const RATES = numberListFlag('rates', values.rates, CONCENTRATED ? '1000' : '1000,10000', 'positive number');
/** 0: as fast as the connections go (the dashboard mix's rate, with and without the stream: how much of it the stream leaves). */
const READ_RATE = numberFlag('read-rate', values['read-rate'], 200, 'non-negative number');
const CONNECTIONS = num('connections', 8);
const DRAIN = num('drain', 30);
/**
 * The read load's generator. wrk (when installed) for an unthrottled load: in C it leaves the host's
 * CPU to what is measured (autocannon, in Node, took 0.5-0.6 of the 2 cores); a read rate needs autocannon.
 */
const CLIENT = ((): 'wrk' | 'autocannon' => {
  const c = values.client ?? (READ_RATE === 0 && WRK ? 'wrk' : 'autocannon');
  if (c !== 'wrk' && c !== 'autocannon') orExit(() => { throw new Error(`--client must be wrk or autocannon, not '${c}'`); });
  if (c === 'wrk' && READ_RATE !== 0) orExit(() => { throw new Error('--client wrk runs unthrottled: give --read-rate 0, or --client autocannon'); });
  if (c === 'wrk' && !WRK) orExit(() => { throw new Error('--client wrk: wrk is not installed (apt-get install wrk)'); });
  return c as 'wrk' | 'autocannon';
})();

const ROOT = packageRoot();
const OUT = path.join(ROOT, 'bench', 'out');
const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';
const RUN = Date.now().toString(16).slice(-8);
const TOPIC = `bench-kafka-${RUN}`;
const GROUPS = { noop: `${TOPIC}-noop`, serve: `${TOPIC}-serve` };

const log = (s: string): void => console.log(`[kafka ${new Date().toISOString().slice(11, 19)}] ${s}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- what the run owns, released once

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-kafka-'));
const kafka = kafkaOf(BROKERS, 'bench-kafka');
let admin: Admin | null = null;
let service: Service | null = null;
let offsets: CommittedOffsets | null = null;
let cleaning: Promise<void> | null = null;

function cleanup(): Promise<void> {
  return (cleaning ??= (async () => {
    offsets?.close();
    if (service) await stopService(service);
    if (admin) {
      await cleanUp(admin, [TOPIC], [GROUPS.noop, GROUPS.serve], log);
      await admin.disconnect().catch(() => undefined);
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  })());
}
process.on('exit', () => {
  if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- a) catch-up

/** `visibility-api replay` of the log into a fresh file: spawn -> exit, as a user times it. */
async function fileReplay(logFile: string, timeoutMs: number): Promise<number> {
  const db = path.join(tmp, 'replay.db');
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'visibility-api.js'), 'replay', '--db', db, logFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`replay exited with ${code}:\n${output.slice(-2000)}`);
  log(`  ${output.trim().split('\n').pop()}`);
  for (const s of ['', '-wal', '-shm']) fs.rmSync(db + s, { force: true });
  return seconds;
}

/** Spawns the service on a fresh file and waits until every produced offset is committed in SQLite. */
async function endToEnd(total: number, timeoutMs: number): Promise<{ seconds: number; steady: number; samples: Sample[]; transactions: number | null }> {
  const dbFile = path.join(tmp, 'serve.db');
  const logFile = path.join(tmp, 'serve.log');
  const started = performance.now();
  service = await spawnService({ root: ROOT, dbFile, logFile, brokers: BROKERS, topic: TOPIC, groupId: GROUPS.serve });
  offsets = new CommittedOffsets(dbFile, TOPIC);
  const samples: Sample[] = [];
  let first = 0;
  let lastScrape = 0;
  for (;;) {
    const now = performance.now();
    const committed = offsets.read() ?? 0;
    if (committed > 0 && first === 0) first = now;
    if (committed >= total) break;
    if (service.child.exitCode !== null) throw new Error(`the service exited:\n${serviceLogTail(logFile)}`);
    if (now - started > timeoutMs) throw new Error(`end to end: ${committed} of ${total} committed after ${timeoutMs / 1000} s`);
    if (now - lastScrape >= 1000) {
      lastScrape = now;
      const ops = await scrapeOps(service.ops).catch(() => null);
      if (ops) samples.push({ t: (now - started) / 1000, produced: total, committed, lag: total - committed, ...ops, streaming: false });
    }
    await sleep(20);
  }
  const end = performance.now();
  await waitReady(service, logFile, 60_000);
  const last = await scrapeOps(service.ops).catch(() => null);
  return { seconds: (end - started) / 1000, steady: (end - first) / 1000, samples, transactions: last?.transactions ?? null };
}

async function catchUp(world: BenchWorld, logFile: string): Promise<CatchUp> {
  const timeoutMs = Math.max(600_000, (EVENTS / 200) * 1000);
  log(`producing ${fmt(world.events)} events (${fmt(world.bytes / 1024 ** 2, 0)} MiB) to ${TOPIC} (3 partitions)`);
  const t = performance.now();
  const sent = await produceFile(kafka, TOPIC, logFile);
  const produceSeconds = (performance.now() - t) / 1000;
  const total = await producedCount(admin!, TOPIC);
  if (total !== sent) throw new Error(`produced ${sent} records but the topic holds ${total}`);
  log(`  ${fmt(total / produceSeconds)} events/s; consume only ...`);
  const noop = await consumeOnly(kafka, TOPIC, GROUPS.noop, total, timeoutMs);
  log(`  ${fmt(total / noop.wholeSeconds)} events/s; file replay ...`);
  const replaySeconds = await fileReplay(logFile, timeoutMs);
  log(`  ${fmt(total / replaySeconds)} events/s; end to end through serve's Kafka thread ...`);
  const e2e = await endToEnd(total, timeoutMs);
  log(`  ${fmt(total / e2e.seconds)} events/s`);
  return { events: total, produceSeconds, consumeOnly: noop, replaySeconds, e2eSeconds: e2e.seconds, e2eSteadySeconds: e2e.steady, e2eSamples: e2e.samples,
    e2eTransactions: e2e.transactions };
}

/** One pass over the read mix, so the load measures a running service rather than its first builds. */
async function warm(world: BenchWorld): Promise<void> {
  let bad = 0;
  for (const r of world.reads) {
    const res = await fetch(service!.api.replace('/v1/public', '') + r.path, { headers: r.headers });
    await res.arrayBuffer();
    if (res.status !== 200) bad += 1;
  }
  if (bad > 0) log(`  warning: ${bad} of ${world.reads.length} warm-up reads did not answer 200`);
}

async function main(): Promise<void> {
  log(`machine: ${machineLine()}`);
  admin = kafka.admin();
  await admin.connect();
  await createTopic(admin, TOPIC, 3);
  const logFile = path.join(tmp, 'world.ndjson');
  const world = await writeWorld(logFile, CONCENTRATED ? concentratedWorldFor(EVENTS) : worldFor(EVENTS));
  log(`world: ${world.opts.accounts * (world.opts.projectsPerAccount as number)} projects x ${world.opts.days} days = ${fmt(world.events)} events`);
  const a = await catchUp(world, logFile);
  fs.rmSync(logFile, { force: true });
  await warm(world);
  const phases: PhaseResult[] = [];
  for (const [i, rate] of RATES.entries()) {
    log(`live stream at ${fmt(rate)} events/s for ${SECONDS} s, read load ${READ_RATE === 0 ? 'unthrottled' : `${fmt(READ_RATE)} req/s`} on ${CONNECTIONS} connections (${CLIENT})`);
    const tag = `${RUN.slice(0, 7)}${i.toString(16)}`;
    phases.push(await livePhase(service!, admin, TOPIC, offsets!, world, BROKERS, {
      rate, seconds: SECONDS, drainSeconds: DRAIN, readRate: READ_RATE, connections: CONNECTIONS, client: CLIENT, tag, brokerPid: localBrokerPid(ROOT), halves: CONCENTRATED,
    }, log));
  }
  const md = [
    `Machine: ${machineLine()}`, '',
    `Command: \`npm run bench:kafka -- ${CONCENTRATED ? '--concentrated ' : ''}--events ${EVENTS} --seconds ${SECONDS} --rates ${RATES.join(',')} --read-rate ${READ_RATE} --connections ${CONNECTIONS} --drain ${DRAIN} --client ${CLIENT}\``, '',
    `**a) Catch-up**: ${fmt(a.events)} generated events (${world.opts.accounts * (world.opts.projectsPerAccount as number)} projects x ${world.opts.days} days, ` +
      `${fmt(world.bytes / a.events, 0)} B each) on a 3-partition topic; the service and the replay each write a fresh SQLite file.`, '',
    catchUpTable(a), '',
    `**b) Live stream** of new runs dated now (${world.templates.length} projects' latest groups under new ids, keyed by project${CONCENTRATED ? `: one project of ${fmt(world.opts.promptsPerProject)} prompts x ${world.opts.enginesPerProject} engines, ${fmt(world.templates[0]!.runs.length)} runs a group; the read load measured in each half of the stream` : ''}), ` +
      `${SECONDS} s per rate, one probe group every 100 ms, read load ${READ_RATE === 0 ? 'unthrottled' : `${fmt(READ_RATE)} req/s offered`} on ${CONNECTIONS} keep-alive connections by ${CLIENT} ` +
      `(${world.reads.length} requests: 12 endpoints per project). Lag = high watermarks - offsets committed in SQLite, every second; ` +
      'event-loop delay = ops /metrics `nodejs_eventloop_lag_p99_seconds` per 1 s scrape, minus its 10 ms sampling interval. ' +
      'Phases run one after the other on the same service: a phase that did not drain leaves its backlog to the next.', '',
    liveTable(phases, DRAIN, READ_RATE),
  ].join('\n');
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'kafka.md'), md + '\n');
  console.log(`\n${md}\n`);
}

runBench(main, cleanup);
