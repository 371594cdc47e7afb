// npm run bench:shards [-- --events N --projects P --partitions 12 --read-seconds S --read-rounds R --connections C]
// Sharded writers (write capacity beyond one writer) on one machine, on 127.0.0.1 only: the per-shard figures docs/scale-out.md
// projects from.
//  1. Events/s per writer. A generated world of P projects, produced as `produce --catalog-topic`
//     sends it (the catalog facts to a 1-partition topic of their own, the rest keyed by project to
//     an events topic of 12 partitions). The catch-up of a fresh `serve` (spawn -> every record of
//     its partitions and of the catalog committed in SQLite) of (a) the unsharded service, (b) shard
//     0/2 alone, (c) shard 1/2 alone, (d) both shards at once (sharing the host's cores), (e) the
//     unsharded service again (what the order of the runs adds).
//  2. Bootstrap per shard. A replica of shard 0/2 started with `--bootstrap-from` (d)'s shard 0/2,
//     and an unsharded replica from (a): snapshot MiB and seconds (its log line), spawn -> /readyz 200.
//  3. Reads per replica. autocannon over every endpoint URL of shard 0/2's projects (the dashboard
//     mix of bench:kafka), against the shard's replica, then the unsharded replica, same URLs.
// The run deletes its topics, consumer groups and files, and stops the broker when it started it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Admin } from 'kafkajs';
import { kafkaConnectionFromEnv, produceFiles } from '../../src/ingest/kafka';
import { partitionOf } from '../../src/lib/partition';
import { benchBroker, cleanUp, createTopic, kafkaOf, type BenchBroker } from '../kafka/kafka-broker';
import { cacheCounts, readLoad, type Reads } from '../kafka/kafka-live';
import { CommittedOffsets, scrapeOps, serviceLogTail, spawnService, stopService, waitReady, type Service } from '../kafka/kafka-service';
import { worldFor, writeWorld, type BenchWorld, type ReadRequest } from '../kafka/kafka-world';
import { numberFlag, orExit, parseFlags } from '../lib/bench-flags';
import { fmt, machineLine } from '../lib/machine';
import { runBench } from '../lib/lib';
import { packageRoot } from '../../src/lib/root';

const { values } = parseFlags({
  options: {
    events: { type: 'string' }, projects: { type: 'string' }, partitions: { type: 'string' },
    'read-seconds': { type: 'string' }, 'read-rounds': { type: 'string' }, connections: { type: 'string' },
  },
});
const EVENTS = numberFlag('events', values.events, 160_000, 'positive integer');
const PROJECTS = numberFlag('projects', values.projects, 24, 'positive integer');
if (PROJECTS % 2 !== 0) orExit(() => { throw new Error(`--projects: "${PROJECTS}" is not even (2 projects per account)`); });
const PARTITIONS = numberFlag('partitions', values.partitions, 12, 'positive integer');
if (PARTITIONS < 2) orExit(() => { throw new Error(`--partitions: "${PARTITIONS}" is below 2 (2 shards)`); });
const READ_SECONDS = numberFlag('read-seconds', values['read-seconds'], 10, 'positive number');
const READ_ROUNDS = numberFlag('read-rounds', values['read-rounds'], 4, 'positive integer');
const CONNECTIONS = numberFlag('connections', values.connections, 8, 'positive integer');
const SHARDS = 2;

const ROOT = packageRoot();
const OUT = path.join(ROOT, 'bench', 'out');
const RUN = Date.now().toString(16).slice(-8);
const TOPIC = `bench-shards-${RUN}`;
const CATALOG = `${TOPIC}-catalog`;

const log = (s: string): void => console.log(`[shards ${new Date().toISOString().slice(11, 19)}] ${s}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mib = (bytes: number): number => bytes / 1024 ** 2;

// ---------------------------------------------------------------- what the run owns, released once

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-shards-'));
let broker: BenchBroker | null = null;
let admin: Admin | null = null;
const running = new Set<Service>();
const groups: string[] = [];
let cleaning: Promise<void> | null = null;

function cleanup(): Promise<void> {
  return (cleaning ??= (async () => {
    await Promise.all([...running].map((s) => stopService(s)));
    if (admin) {
      await cleanUp(admin, [TOPIC, CATALOG], groups, log);
      await admin.disconnect().catch(() => undefined);
    }
    await broker?.stop().catch((e: unknown) => log(`could not stop the broker: ${String(e)}`));
    fs.rmSync(tmp, { recursive: true, force: true });
  })());
}
process.on('exit', () => {
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- the processes

/** A `serve` of the run: its files, its process, and the offsets it committed (events topic + catalog). */
interface Node {
  name: string;
  shard: string | null;
  dbFile: string;
  logFile: string;
  service: Service;
  committed: () => number | null;
  closeOffsets: () => void;
}

async function startNode(name: string, shard: string | null, extraArgs: string[] = []): Promise<Node> {
  const slug = name.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '');
  const dbFile = path.join(tmp, `${slug}.db`);
  const logFile = path.join(tmp, `${slug}.log`);
  const groupId = `${TOPIC}-${slug}`;
  groups.push(groupId);
  const service = await spawnService({
    root: ROOT, dbFile, logFile, brokers: broker!.brokers, topic: TOPIC, groupId,
    args: [...(shard === null ? [] : ['--shard', shard]), ...extraArgs], env: { KAFKA_CATALOG_TOPIC: CATALOG, LOG_LEVEL: 'info' },
  });
  running.add(service);
  const offsets = [new CommittedOffsets(dbFile, TOPIC), new CommittedOffsets(dbFile, CATALOG)];
  return {
    name, shard, dbFile, logFile, service,
    committed: () => {
      const each = offsets.map((o) => o.read());
      return each.some((n) => n === null) ? null : each.reduce((a, b) => a! + b!, 0);
    },
    closeOffsets: () => offsets.forEach((o) => o.close()),
  };
}

async function stopNode(n: Node, removeFiles = true): Promise<void> {
  n.closeOffsets();
  await stopService(n.service);
  running.delete(n.service);
  if (removeFiles) for (const s of ['', '-wal', '-shm']) fs.rmSync(n.dbFile + s, { force: true });
}

interface CatchUp {
  writer: string;
  shard: string | null;
  /** Records of its partitions and of the catalog committed in SQLite. */
  records: number;
  /** ops /metrics visibility_ingest_events{outcome="applied"} once caught up. */
  applied: number | null;
  /** spawn -> every record committed; first commit -> last. */
  seconds: number;
  applySeconds: number;
}

/** Waits until `n` has committed `target` records; the clock starts at `started` (its spawn). */
async function catchUp(n: Node, target: number, started: number): Promise<CatchUp> {
  const timeoutMs = Math.max(300_000, (target / 200) * 1000);
  let first = 0;
  let committed = 0;
  for (;;) {
    const now = performance.now();
    committed = n.committed() ?? 0;
    if (committed > 0 && first === 0) first = now;
    if (committed >= target) break;
    if (n.service.child.exitCode !== null) throw new Error(`${n.name} exited:\n${serviceLogTail(n.logFile)}`);
    if (now - started > timeoutMs) throw new Error(`${n.name}: ${committed} of ${target} records committed after ${timeoutMs / 1000} s`);
    await sleep(20);
  }
  const end = performance.now();
  await waitReady(n.service, n.logFile, 60_000);
  const ops = await scrapeOps(n.service.ops).catch(() => null);
  return { writer: n.name, shard: n.shard, records: committed, applied: ops?.applied ?? null, seconds: (end - started) / 1000, applySeconds: (end - first) / 1000 };
}

// ---------------------------------------------------------------- 1. events/s per writer

interface Spread { shard: number; partitions: number[]; projects: number; events: number }

async function produce(file: string): Promise<{ seconds: number; highs: number[]; catalog: number }> {
  const conn = kafkaConnectionFromEnv({ KAFKA_BROKERS: broker!.brokers, KAFKA_LOG_LEVEL: 'error' });
  const t = performance.now();
  const totals = await produceFiles(conn, TOPIC, [file], { catalogTopic: CATALOG });
  const seconds = (performance.now() - t) / 1000;
  const highs = (await admin!.fetchTopicOffsets(TOPIC)).sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
  const catalog = (await admin!.fetchTopicOffsets(CATALOG)).reduce((s, o) => s + Number(o.high), 0);
  const held = highs.reduce((a, b) => a + b, 0) + catalog;
  if (held !== totals.sent) throw new Error(`produced ${totals.sent} records but the topics hold ${held}`);
  return { seconds, highs, catalog };
}

/** Records a writer of `shard` (null: every partition) consumes: its partitions of the events topic, and the whole catalog. */
const targetOf = (shard: number | null, highs: number[], catalog: number): number =>
  highs.reduce((s, h, p) => s + (shard === null || p % SHARDS === shard ? h : 0), 0) + catalog;

/** Spawns the writers at once and waits until each has caught up. */
async function writers(specs: Array<{ name: string; shard: number | null }>, highs: number[], catalog: number, keep: (name: string) => boolean): Promise<{ results: CatchUp[]; wall: number; kept: Node[] }> {
  const started = performance.now();
  const nodes = await Promise.all(specs.map((s) => startNode(s.name, s.shard === null ? null : `${s.shard}/${SHARDS}`)));
  const results = await Promise.all(nodes.map((n, i) => catchUp(n, targetOf(specs[i]!.shard, highs, catalog), started)));
  const wall = Math.max(...results.map((r) => r.seconds));
  for (const r of results) log(`  ${r.writer}: ${fmt(r.records)} records in ${fmt(r.seconds, 1)} s (applying ${fmt(r.applySeconds, 1)} s): ${fmt(r.records / r.applySeconds)} events/s`);
  const kept: Node[] = [];
  for (const n of nodes) {
    if (keep(n.name)) kept.push(n);
    else await stopNode(n);
  }
  return { results, wall, kept };
}

// ---------------------------------------------------------------- 2. bootstrap

interface Bootstrap { replica: string; from: string; snapshotMiB: number; downloadSeconds: number; readySeconds: number; sourceFileMiB: number }

async function bootstrap(name: string, shard: string | null, source: Node): Promise<{ result: Bootstrap; node: Node }> {
  const started = performance.now();
  const node = await startNode(name, shard, ['--bootstrap-from', source.service.ops]);
  await waitReady(node.service, node.logFile, 300_000);
  const readySeconds = (performance.now() - started) / 1000;
  const m = /bootstrapped .*: ([\d.]+) MiB in ([\d.]+) s/.exec(fs.readFileSync(node.logFile, 'utf8'));
  if (!m) throw new Error(`${name}: no "bootstrapped" line in its log:\n${serviceLogTail(node.logFile)}`);
  const result = { replica: name, from: source.name, snapshotMiB: Number(m[1]), downloadSeconds: Number(m[2]), readySeconds, sourceFileMiB: mib(fs.statSync(source.dbFile).size) };
  log(`  ${name}: ${result.snapshotMiB} MiB in ${result.downloadSeconds} s; /readyz 200 ${fmt(readySeconds, 1)} s after its spawn`);
  return { result, node };
}

// ---------------------------------------------------------------- 3. reads

interface ReadRun { target: string; urls: number; warmNon200: number; rounds: Array<Reads & { builds: number }>; requests: number; seconds: number; failed: number; p99: number }

/**
 * One pass over the URLs (their first builds), then 2 s of the load, not counted (the replica's
 * JIT): the first measured round would otherwise carry the warm-up of whichever replica goes first.
 */
async function warm(n: Node, mix: ReadRequest[]): Promise<number> {
  let non200 = 0;
  const origin = new URL(n.service.api).origin;
  for (const r of mix) {
    const res = await fetch(origin + r.path, { headers: r.headers });
    await res.arrayBuffer();
    if (res.status !== 200) non200 += 1;
  }
  await readLoad(n.service.api, mix, { client: 'autocannon', connections: CONNECTIONS, seconds: 2, readRate: 0 });
  return non200;
}

/**
 * The same load on each replica in turn, READ_ROUNDS times (A B, B A, A B, ...): the host's speed
 * drifts (other work on it), and alternating short rounds sees the same drift on both.
 */
async function reads(nodes: Node[], mix: ReadRequest[]): Promise<ReadRun[]> {
  const runs: ReadRun[] = [];
  for (const n of nodes) runs.push({ target: n.name, urls: mix.length, warmNon200: await warm(n, mix), rounds: [], requests: 0, seconds: 0, failed: 0, p99: 0 });
  for (let round = 0; round < READ_ROUNDS; round++) {
    // A B, then B A: a drift over the rounds favours neither the first nor the second of a pair.
    const order = [...nodes.keys()];
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const n = nodes[i]!;
      const from = await cacheCounts(n.service.ops);
      const r = await readLoad(n.service.api, mix, { client: 'autocannon', connections: CONNECTIONS, seconds: READ_SECONDS / READ_ROUNDS, readRate: 0 });
      const builds = (await cacheCounts(n.service.ops)).builds - from.builds;
      runs[i]!.rounds.push({ ...r, builds });
      log(`  round ${round + 1}, ${n.name}: ${fmt(r.requests / r.seconds)} req/s, p99 ${r.p99} ms, ${r.non2xx + r.errors} failed, ${builds} bodies built`);
    }
  }
  for (const run of runs) {
    run.requests = run.rounds.reduce((s, r) => s + r.requests, 0);
    run.seconds = run.rounds.reduce((s, r) => s + r.seconds, 0);
    run.failed = run.rounds.reduce((s, r) => s + r.non2xx + r.errors, 0);
    run.p99 = Math.max(...run.rounds.map((r) => r.p99));
  }
  return runs;
}

// ---------------------------------------------------------------- the report

const rate = (events: number, seconds: number): string => fmt(events / seconds);

function writerTable(rows: CatchUp[], reference: CatchUp, fleet: { records: number; wall: number; produced: number }): string {
  const perEvent = (r: CatchUp): number => r.records / r.applySeconds / (reference.records / reference.applySeconds);
  return [
    '| writer | records applied (events + catalog) | spawn -> caught up, s | first -> last commit, s | events/s (spawn -> caught up) | events/s (applying) | applying rate / unsharded |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.writer} | ${fmt(r.records)} | ${fmt(r.seconds, 1)} | ${fmt(r.applySeconds, 1)} | ${rate(r.records, r.seconds)} | ${rate(r.records, r.applySeconds)} | ${fmt(perEvent(r), 2)} |`),
    `| (d) fleet: both shards at once | ${fmt(fleet.records)} | ${fmt(fleet.wall, 1)} (wall) | | ${rate(fleet.records, fleet.wall)} | | ${fmt(fleet.records / fleet.wall / (reference.records / reference.seconds), 2)} (of (a), spawn -> caught up) |`,
  ].join('\n');
}

async function main(): Promise<void> {
  log(`machine: ${machineLine()}`);
  broker = await benchBroker(ROOT, log);
  const kafka = kafkaOf(broker.brokers, 'bench-shards');
  admin = kafka.admin();
  await admin.connect();
  await createTopic(admin, TOPIC, PARTITIONS);
  await createTopic(admin, CATALOG, 1);
  const logFile = path.join(tmp, 'world.ndjson');
  const world: BenchWorld = await writeWorld(logFile, worldFor(EVENTS, new Date(), PROJECTS));
  log(`world: ${PROJECTS} projects x ${world.opts.days} days = ${fmt(world.events)} events (${fmt(mib(world.bytes), 0)} MiB)`);
  const produced = await produce(logFile);
  fs.rmSync(logFile, { force: true });
  log(`  produced to ${TOPIC} (${PARTITIONS} partitions) and ${CATALOG} (${fmt(produced.catalog)} catalog records) in ${fmt(produced.seconds, 1)} s`);

  const projects = world.templates.map((t) => t.project_id);
  const shardOf = (id: string): number => partitionOf(id, PARTITIONS) % SHARDS;
  const spread: Spread[] = [...Array(SHARDS).keys()].map((k) => ({
    shard: k, partitions: produced.highs.map((_, p) => p).filter((p) => p % SHARDS === k),
    projects: projects.filter((id) => shardOf(id) === k).length, events: produced.highs.reduce((s, h, p) => s + (p % SHARDS === k ? h : 0), 0),
  }));
  const eventsTopic = produced.highs.reduce((a, b) => a + b, 0);

  log('(a) the unsharded service catches up ...');
  const a = await writers([{ name: 'unsharded', shard: null }], produced.highs, produced.catalog, () => true);
  log('(b) shard 0/2 alone ...');
  const b = await writers([{ name: 'shard 0/2 alone', shard: 0 }], produced.highs, produced.catalog, () => false);
  log('(c) shard 1/2 alone ...');
  const c = await writers([{ name: 'shard 1/2 alone', shard: 1 }], produced.highs, produced.catalog, () => false);
  log('(d) both shards at once ...');
  const d = await writers([{ name: 'shard 0/2 (of d)', shard: 0 }, { name: 'shard 1/2 (of d)', shard: 1 }], produced.highs, produced.catalog, (name) => name.startsWith('shard 0/2'));
  // The first writer of the run reads a topic no consumer has read yet: the same again, last, shows what the order adds.
  log('(e) the unsharded service again, after the shards ...');
  const e = await writers([{ name: 'unsharded, again after (d)', shard: null }], produced.highs, produced.catalog, () => false);
  const whole = a.kept[0]!;
  const shard0 = d.kept[0]!;

  log('bootstrap: a replica of shard 0/2 from shard 0/2, an unsharded replica from the unsharded service ...');
  const r0 = await bootstrap('shard 0/2 replica', `0/${SHARDS}`, shard0);
  const rw = await bootstrap('unsharded replica', null, whole);
  // Only the replicas under the read load, one at a time.
  await stopNode(shard0, false);
  await stopNode(whole, false);

  const mix = world.reads.filter((r) => shardOf(r.project) === 0);
  log(`reads: ${mix.length} URLs of shard 0/2's ${spread[0]!.projects} projects, ${READ_SECONDS} s each in ${READ_ROUNDS} alternating rounds, ${CONNECTIONS} connections (autocannon) ...`);
  const readRuns = await reads([r0.node, rw.node], mix);

  const results = [...a.results, ...b.results, ...c.results, ...d.results, ...e.results];
  const fleet = { records: d.results.reduce((s, r) => s + r.records, 0), wall: d.wall, produced: eventsTopic + produced.catalog };
  const [rs, ru] = readRuns as [ReadRun, ReadRun];
  const command = `npm run bench:shards -- --events ${EVENTS} --projects ${PROJECTS} --partitions ${PARTITIONS} --read-seconds ${READ_SECONDS} --read-rounds ${READ_ROUNDS} --connections ${CONNECTIONS}`;
  const md = [
    `Machine: ${machineLine()}`, '',
    `Command: \`${command}\``, '',
    `World: ${PROJECTS} projects x ${world.opts.days} days, ${fmt(world.events)} events (${fmt(world.bytes / world.events, 0)} B each): ` +
      `${fmt(eventsTopic)} on the events topic (${PARTITIONS} partitions, keyed by project), ${fmt(produced.catalog)} on the catalog topic ` +
      `(every shard applies them all); produced in ${fmt(produced.seconds, 1)} s (\`produceFiles\` as \`produce --catalog-topic\`).`, '',
    '**Spread** (murmur2 of the project id, partition p on shard p % 2):', '',
    '| shard | partitions | projects | events (events topic) | share |', '|---|---|---:|---:|---:|',
    ...spread.map((s) => `| ${s.shard}/${SHARDS} | ${s.partitions.join(',')} | ${s.projects} | ${fmt(s.events)} | ${fmt((100 * s.events) / eventsTopic, 1)} % |`), '',
    '**1. Catch-up per writer**, each a fresh `serve` on a fresh SQLite file (spawn -> every record of its partitions and of the catalog ' +
      'committed in SQLite). (d) runs both shards at once on this host\'s cores, with the broker: each one\'s rate there is what a shard ' +
      'gets sharing the machine, not what it gets on a machine of its own.', '',
    writerTable(results, a.results[0]!, fleet), '',
    '**2. Bootstrap** (`serve --bootstrap-from` the peer\'s ops URL, while the peer runs idle): snapshot size and download + checks ' +
      '(the replica\'s "bootstrapped" line), and spawn -> `/readyz` 200.', '',
    '| replica | from | snapshot MiB | download s | MiB/s | spawn -> /readyz 200, s |', '|---|---|---:|---:|---:|---:|',
    ...[r0.result, rw.result].map((x) => `| ${x.replica} | ${x.from} | ${fmt(x.snapshotMiB, 1)} | ${fmt(x.downloadSeconds, 1)} | ${fmt(x.snapshotMiB / Math.max(x.downloadSeconds, 0.05), 0)} | ${fmt(x.readySeconds, 1)} |`), '',
    `Snapshot of shard 0/2 / the unsharded one: **${fmt(r0.result.snapshotMiB / rw.result.snapshotMiB, 2)}** (the shard holds ` +
      `${fmt((100 * spread[0]!.events) / eventsTopic, 1)} % of the events, and every project's catalog row).`, '',
    `**3. Reads**: autocannon, ${CONNECTIONS} connections, unthrottled, ${READ_SECONDS} s per replica in ${READ_ROUNDS} rounds taken in turn (shard, unsharded; unsharded, shard; ...), over the ${mix.length} endpoint URLs of shard 0/2's ` +
      `projects (12 a project: the project list, the overview, visibility, trend, rankings, scores, prompts, runs, a run group, citations, mentions), ` +
      'each replica alone under the load after a warm-up (one pass, then 2 s of the load, not counted); autocannon and the replica share the host\'s cores.', '',
    '| replica | URLs | requests | req/s | req/s by round | worst round p99 ms | failed | bodies built under load | warm-up non-200 |', '|---|---:|---:|---:|---|---:|---:|---:|---:|',
    ...readRuns.map((x) => `| ${x.target} | ${x.urls} | ${fmt(x.requests)} | ${rate(x.requests, x.seconds)} | ${x.rounds.map((r) => rate(r.requests, r.seconds)).join(', ')} | ` +
      `${x.p99} | ${x.failed} | ${x.rounds.reduce((s, r) => s + r.builds, 0)} | ${x.warmNon200} |`), '',
    `Read rate of the shard's replica / the unsharded replica over the same URLs: **${fmt(rs.requests / rs.seconds / (ru.requests / ru.seconds), 2)}**.`,
  ].join('\n');
  const json = {
    run: RUN, at: new Date().toISOString(), machine: machineLine(), command, brokerStartedByRun: broker.started,
    world: { projects: PROJECTS, days: world.opts.days, events: world.events, bytes: world.bytes, partitions: PARTITIONS, partitionEvents: produced.highs, eventsTopic, catalog: produced.catalog, produceSeconds: produced.seconds },
    spread, catchUp: results, fleet,
    bootstrap: [r0.result, rw.result],
    reads: readRuns.map((x) => ({ ...x, rps: x.requests / x.seconds })),
    ratios: {
      shardAloneOverUnshardedPerEvent: [b.results[0]!, c.results[0]!].map((r) => r.records / r.applySeconds / (a.results[0]!.records / a.results[0]!.applySeconds)),
      shardAloneOverUnshardedAgainPerEvent: [b.results[0]!, c.results[0]!].map((r) => r.records / r.applySeconds / (e.results[0]!.records / e.results[0]!.applySeconds)),
      readShardOverUnsharded: rs.requests / rs.seconds / (ru.requests / ru.seconds),
      snapshotShardOverUnsharded: r0.result.snapshotMiB / rw.result.snapshotMiB,
    },
  };
  fs.mkdirSync(OUT, { recursive: true });
  const jsonFile = path.join(OUT, `shards-${json.at.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(jsonFile, JSON.stringify(json, null, 2) + '\n');
  fs.writeFileSync(path.join(OUT, 'shards.md'), md + '\n');
  console.log(`\n${md}\n\nJSON: ${jsonFile}\n`);
}

runBench(main, cleanup);
