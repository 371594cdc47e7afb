// npm run bench [-- --accounts N --days N --duration S --rounds N --rate-limit N --hot-only]
// Serving benchmark, all in one run on loopback:
//   (a) a bare node:http server sending the cached /visibility bytes: the limit for Node here;
//   (b) the service's hot /visibility, and a mix over all 22 endpoints and many projects;
//   (c) the same mix on a cold cache (CACHE_MAX_BYTES=0: every request builds its body);
//   (d) a naive server computing /visibility from the raw prompt runs on every request;
// plus p99 latency at 80% of the top rate, resident memory, and event-loop delay while events are
// applied under read load. Prints a table and writes bench/out/serve.md.
// The service writes its access log (LOG_LEVEL info, a JSON line per request) to bench/out/service-access.log,
// as `serve` writes to stdout; --log-level warn measures it without the access lines.
// --rate-limit N runs the service with the per-key limiter on (N requests/s per key: set it far above
// what the load reaches, so no request is turned away) and the bare server sends RateLimit headers
// of the same length, so (a) and (b) still send the same bytes. --hot-only stops after the hot
// /visibility comparison (a against b), for profiling and quick before/after runs.
//
// The load generator and the server under test each get a CPU of their own (taskset), so neither
// slows the other down; (a) and (b) are measured in alternating rounds and compared by the median.
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { DEMO_OPTIONS, worldKeys, type WorldOptions } from '../../fixtures/world';
import { replayFiles } from '../../src/ingest';
import { packageRoot } from '../../src/lib/root';
import { openDb, Projector } from '../../src/store';
import { fmt, machineLine } from '../lib/machine';
import { numberFlag, parseFlags } from '../lib/bench-flags';
import { median, writeLog } from '../lib/lib';

const { values } = parseFlags({
  options: {
    accounts: { type: 'string' }, days: { type: 'string' }, prompts: { type: 'string' }, duration: { type: 'string' }, connections: { type: 'string' },
    rounds: { type: 'string' }, 'no-pin': { type: 'boolean' }, 'rate-limit': { type: 'string' }, 'hot-only': { type: 'boolean' },
    'log-level': { type: 'string' },
  },
});
const OUT = path.join(packageRoot(), 'bench', 'out');
const WORLD: WorldOptions = {
  ...DEMO_OPTIONS, seed: 11, accounts: numberFlag('accounts', values.accounts, 100, 'positive integer'), projectsPerAccount: 2, sharedProjects: 10,
  days: numberFlag('days', values.days, 90, 'positive integer'), promptsPerProject: numberFlag('prompts', values.prompts, 14, 'positive integer'),
};
// Events applied during the event-loop measurement: new projects (a fresh seed each run), so they are
// real writes even against a world an earlier run already wrote them into.
const EXTRA: WorldOptions = { ...DEMO_OPTIONS, seed: 1000 + (Date.now() % 1_000_000), accounts: 4, projectsPerAccount: 2, sharedProjects: 0, days: 20 };
const DURATION = numberFlag('duration', values.duration, 10, 'positive number');
const CONNECTIONS = numberFlag('connections', values.connections, 32, 'positive integer');
const ROUNDS = numberFlag('rounds', values.rounds, 9, 'positive integer');
const RATE_LIMIT = numberFlag('rate-limit', values['rate-limit'], 0, 'non-negative number');
const RATE_ARGS = RATE_LIMIT > 0 ? ['--rate-limit', String(RATE_LIMIT)] : [];

/**
 * CPU 0 for this process (autocannon), CPU 1 for servers: on two shared cores, a load generator and
 * a server that fight for CPU measure each other. Returns the command prefix for servers.
 */
function pinning(): string[] {
  if (values['no-pin'] || os.cpus().length < 2) return [];
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    return ['-c', '1'];
  } catch {
    return []; // no taskset: unpinned, and the table says so
  }
}
const PIN = pinning();
// Short rounds: the host's speed drifts within seconds, and a pair of short runs sees less of it.
const ROUND_SECONDS = 3;
const CACHE_MAX_BYTES = Number(process.env.CACHE_MAX_BYTES ?? 256 * 1024 * 1024);


/** The big world, generated and replayed once, then kept in bench/out (gitignored). */
async function ensureWorld(): Promise<string> {
  fs.mkdirSync(OUT, { recursive: true });
  const name = `world-${WORLD.accounts}x${WORLD.days}x${WORLD.promptsPerProject}`;
  const dbFile = path.join(OUT, `${name}.db`);
  if (fs.existsSync(dbFile)) return dbFile;
  const log = path.join(OUT, `${name}.ndjson`);
  console.log(`generating ${name} ...`);
  await writeLog(log, WORLD);
  console.log('replaying it into SQLite (once; later runs reuse the file) ...');
  const tmp = `${dbFile}.tmp`;
  for (const s of ['', '-wal', '-shm']) fs.rmSync(tmp + s, { force: true });
  const db = openDb(tmp, { fast: true });
  const started = Date.now();
  const t = await replayFiles(db, new Projector(db), [log], { batchSize: 2000 });
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  console.log(`  ${fmt(t.applied)} events in ${fmt((Date.now() - started) / 1000, 0)} s`);
  fs.renameSync(tmp, dbFile);
  return dbFile;
}

interface Child { proc: ChildProcess; port: number; ask<T>(msg: object, reply: string): Promise<T> }

function startServer(kind: string, args: string[]): Promise<Child> {
  const script = path.join(__dirname, 'server.js');
  const proc = PIN.length > 0
    ? spawn('taskset', [...PIN, process.execPath, script, kind, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : fork(script, [kind, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = <T>(msg: object, reply: string): Promise<T> => new Promise((resolve) => {
    const on = (m: { type: string }): void => {
      if (m.type !== reply) return;
      proc.off('message', on);
      resolve(m as T);
    };
    proc.on('message', on);
    proc.send(msg);
  });
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)));
    proc.once('message', (m: { port: number }) => resolve({ proc, port: m.port, ask }));
  });
}

function stop(c: Child): Promise<void> {
  return new Promise((resolve) => {
    c.proc.removeAllListeners('exit');
    c.proc.once('exit', () => resolve());
    c.proc.kill('SIGTERM');
  });
}

interface Load { rps: number; p50: number; p99: number; non2xx: number; errors: number; requests: number }

/**
 * autocannon on `requests`, as fast as it goes or at `overallRate`. At a rate, autocannon sends each
 * connection's quota for a second as fast as it can, then waits for the next second; with its
 * coordinated-omission correction, a request waiting for that next second would count as a server
 * stall of the same length (the bare server shows p99 in the hundreds of ms that way), so rated
 * runs record raw response times and are read next to the bare server at the same rate.
 */
async function load(port: number, requests: Array<{ path: string; headers: Record<string, string> }>, overallRate?: number, duration = DURATION): Promise<Load> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration, requests: requests.map((q) => ({ method: 'GET', ...q })),
    ...(overallRate ? { overallRate: Math.round(overallRate), ignoreCoordinatedOmission: true } : {}),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors, requests: r.requests.total };
}

/** A load run and the CPU time (microseconds, all threads) the server spent during it. */
async function measuredLoad(c: Child, requests: Array<{ path: string; headers: Record<string, string> }>): Promise<[Load, number]> {
  const before = await c.ask<{ micros: number }>({ type: 'cpu' }, 'cpu');
  const l = await load(c.port, requests, undefined, ROUND_SECONDS);
  const after = await c.ask<{ micros: number }>({ type: 'cpu' }, 'cpu');
  return [l, after.micros - before.micros];
}

async function get(port: number, p: string, headers: Record<string, string>): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(`http://127.0.0.1:${port}${p}`, { headers });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

/** Every endpoint of `projects` projects, with the key of an account that can see each. */
function mixRequests(dbFile: string, projects: number): Array<{ path: string; headers: Record<string, string> }> {
  const db = openDb(dbFile, { readonly: true });
  const keys = new Map(worldKeys(WORLD).filter((k) => !k.revoked).map((k) => [k.account_id, k.key]));
  const rows = db.prepare(`SELECT p.id, p.company_id, (SELECT id FROM run_groups g WHERE g.project_id = p.id ORDER BY started_at DESC LIMIT 1) AS grp,
      (SELECT engine_id FROM project_engines e WHERE e.project_id = p.id ORDER BY engine_id LIMIT 1) AS engine
    FROM projects p WHERE p.deleted = 0 ORDER BY p.id`).all() as Array<{ id: string; company_id: string; grp: string; engine: string }>;
  db.close();
  // Only the big world's projects (earlier runs added others for the event-loop measurement).
  const chosen = rows.filter((p) => keys.has(p.company_id)).slice(0, projects);
  const out: Array<{ path: string; headers: Record<string, string> }> = [];
  for (const p of chosen) {
    const headers = { 'x-api-key': keys.get(p.company_id)!, 'accept-encoding': 'gzip, br' };
    const base = `/v1/public/projects/${p.id}`;
    for (const s of ['', '/visibility', `/visibility?engine_ids=${p.engine}`, '/visibility/timeseries', '/scores/daily', '/prompts', '/segments', '/segments/analytics',
      '/competitors', '/competitor-rankings', '/citations', '/mentions?limit=50', '/referrers', '/warm-leads', '/engines', '/terms', '/runs',
      '/forum/metrics', '/forum/leads', '/forum/opportunities']) out.push({ path: base + s, headers });
    out.push({ path: `/v1/public/runs/${p.grp}`, headers }, { path: `/v1/public/runs/${p.grp}/results`, headers }, { path: '/v1/public/projects', headers });
  }
  return out;
}

async function warm(port: number, requests: Array<{ path: string; headers: Record<string, string> }>): Promise<void> {
  for (const r of requests) {
    const res = await get(port, r.path, r.headers);
    if (res.status !== 200) throw new Error(`warm-up ${r.path} answered ${res.status}`);
  }
}

async function main(): Promise<void> {
  console.log(`machine: ${machineLine()}`);
  const dbFile = await ensureWorld();
  const extraLog = path.join(OUT, 'extra-events.ndjson');
  fs.rmSync(extraLog, { force: true });
  await writeLog(extraLog, EXTRA);
  const mix = mixRequests(dbFile, 60);
  const hot = [mix[1]!];
  const identity = { ...hot[0]!.headers };
  delete identity['accept-encoding'];
  const hotPlain = [{ path: hot[0]!.path, headers: identity }];
  const rows: string[][] = [];
  const row = (name: string, l: Load, note = ''): void => {
    rows.push([name, fmt(l.rps), fmt(l.p50, 1), fmt(l.p99, 1), String(l.non2xx + l.errors), note]);
    console.log(`${name}: ${fmt(l.rps)} req/s, p50 ${l.p50} ms, p99 ${l.p99} ms, non-2xx+errors ${l.non2xx + l.errors}`);
  };

  // The service writes its access log as `serve` does (a JSON line per request at info) into a file.
  const LOG_ARGS = ['--log', path.join(OUT, 'service-access.log'), ...(values['log-level'] ? ['--log-level', values['log-level']] : [])];
  let service = await startServer('service', ['--db', dbFile, '--cache-max-bytes', String(CACHE_MAX_BYTES), ...RATE_ARGS, ...LOG_ARGS]);
  await warm(service.port, mix);
  const bodyFile = path.join(OUT, 'visibility.json');
  fs.writeFileSync(bodyFile, (await get(service.port, hotPlain[0]!.path, identity)).body);

  // (a) and (b) in alternating rounds: the machine's speed drifts, a round compares like with like.
  const bare = await startServer('bare', ['--db', dbFile, '--body', bodyFile, ...RATE_ARGS]);
  // The same service without access lines (LOG_LEVEL=warn), in the same rounds: what the access log costs.
  const unlogged = await startServer('service', ['--db', dbFile, '--cache-max-bytes', String(CACHE_MAX_BYTES), ...RATE_ARGS,
    '--log', path.join(OUT, 'service-unlogged.log'), '--log-level', 'warn']);
  await warm(unlogged.port, hotPlain);
  const logRatios: number[] = [];
  const logCpu: Array<{ on: number; off: number }> = [];
  const rounds: Array<{ a: Load; b: Load }> = [];
  const cpuRatios: number[] = [];
  let cpuA = 0;
  let cpuB = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const [a, aMicros] = await measuredLoad(bare, hotPlain);
    const [b, bMicros] = await measuredLoad(service, hotPlain);
    const [u, uMicros] = await measuredLoad(unlogged, hotPlain);
    logRatios.push(b.rps / u.rps);
    logCpu.push({ on: bMicros / b.requests, off: uMicros / u.requests });
    rounds.push({ a, b });
    cpuA += aMicros / a.requests;
    cpuB += bMicros / b.requests;
    cpuRatios.push(aMicros / a.requests / (bMicros / b.requests));
    console.log(`  round ${i + 1}: bare ${fmt(a.rps)} req/s, service ${fmt(b.rps)} req/s, ratio ${fmt(b.rps / a.rps, 2)}; ` +
      `server CPU per request: bare ${fmt(aMicros / a.requests, 1)} us, service ${fmt(bMicros / b.requests, 1)} us; ` +
      `without access lines ${fmt(u.rps)} req/s, ${fmt(uMicros / u.requests, 1)} us`);
  }
  await stop(unlogged);
  const accessLine = `access log on vs off: ${fmt(median(logRatios), 2)} in req/s (median round; rounds ${logRatios.map((r) => fmt(r, 2)).join(', ')}); ` +
    `CPU per request ${fmt(median(logCpu.map((c) => c.on)), 1)} us on, ${fmt(median(logCpu.map((c) => c.off)), 1)} us off (medians)`;
  console.log(accessLine);
  const cpuRatio = median(cpuRatios);
  // The same comparison with (a) and (b) loaded at the same time, sharing the server CPU: whatever
  // the host does during a round, it does to both.
  const paired: Array<{ rps: number; cpu: number }> = [];
  for (let i = 0; i < ROUNDS; i++) {
    const [[a, aMicros], [b, bMicros]] = await Promise.all([measuredLoad(bare, hotPlain), measuredLoad(service, hotPlain)]);
    paired.push({ rps: b.rps / a.rps, cpu: aMicros / a.requests / (bMicros / b.requests) });
    console.log(`  paired round ${i + 1}: bare ${fmt(a.rps)} req/s, service ${fmt(b.rps)} req/s; CPU per request ${fmt(aMicros / a.requests, 1)} us, ${fmt(bMicros / b.requests, 1)} us`);
  }
  const pairedRps = median(paired.map((p) => p.rps));
  const pairedCpu = median(paired.map((p) => p.cpu));
  const byRatio = [...rounds].sort((x, y) => x.b.rps / x.a.rps - y.b.rps / y.a.rps);
  const { a, b: b1 } = byRatio[Math.floor(byRatio.length / 2)]!;
  const ratios = rounds.map((r) => fmt(r.b.rps / r.a.rps, 2)).join(', ');
  if (values['hot-only']) {
    console.log(`\nhot /visibility${RATE_LIMIT > 0 ? ` (--rate-limit ${RATE_LIMIT})` : ''} vs bare: ${fmt(b1.rps / a.rps, 2)} in req/s (median round; rounds ${ratios}); ` +
      `${fmt(cpuRatio, 2)} in server CPU per request; loaded at the same time: ${fmt(pairedRps, 2)} req/s, ${fmt(pairedCpu, 2)} CPU per request`);
    await stop(bare);
    await stop(service);
    return;
  }
  row('(a) bare node:http, same bytes', a, `median round of ${ROUNDS}`);
  row('(b) service, hot /visibility', b1, `${fmt(b1.rps / a.rps, 2)} of (a); rounds: ${ratios}`);
  const b2 = await load(service.port, mix);
  row(`(b) service, mix of 22 endpoints x ${mix.length / 23} projects`, b2);
  const hotRate = b1.rps * 0.8;
  const a80 = await load(bare.port, hotPlain, hotRate);
  row('(a) bare at 80% of the hot top rate (baseline)', a80);
  const b80 = await load(service.port, hotPlain, hotRate);
  row('(b) hot /visibility at 80% of its top rate', b80);
  const mixRate = b2.rps * 0.8;
  const am80 = await load(bare.port, mix, mixRate);
  await stop(bare);
  row('(a) bare at 80% of the mix top rate (baseline)', am80);
  const m80 = await load(service.port, mix, mixRate);
  row('(b) mix at 80% of its top rate', m80);
  const stats = await service.ask<{ rss_max: number }>({ type: 'stats' }, 'stats');
  const eldIdleP = service.ask<{ eld_p99_ms: number; eld_max_ms: number }>({ type: 'eld' }, 'eld');
  const eldIdleLoad = load(service.port, mix, b2.rps * 0.5);
  const eldIdle = await eldIdleP;
  await eldIdleLoad;
  const ingestP = service.ask<{ events: number; seconds: number; eld_p99_ms: number; eld_max_ms: number; slices: number; slowest_slice_ms: number }>({ type: 'ingest', file: extraLog }, 'ingested');
  const underIngest = await load(service.port, mix, b2.rps * 0.5);
  const ing = await ingestP;
  row('(b) mix at 50% while events are applied', underIngest);
  await stop(service);

  service = await startServer('service', ['--db', dbFile, '--cache-max-bytes', '0', ...LOG_ARGS]);
  const c = await load(service.port, mix);
  await stop(service);
  row('(c) same mix, cold cache (every request builds)', c);
  const naive = await startServer('naive', ['--db', dbFile]);
  const d = await load(naive.port, hotPlain);
  await stop(naive);
  row('(d) naive server, /visibility from raw runs', d, `(b) is ${fmt(b1.rps / d.rps, 0)} x (d)`);

  const table = [
    '| scenario | req/s | p50 ms | p99 ms | non-2xx + errors | note |', '|---|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  const summary = [
    `- hot path vs bare node:http: **${fmt(b1.rps / a.rps, 2)}** in requests per second (median round; rounds ${ratios}); ` +
      `**${fmt(cpuRatio, 2)}** in server CPU per request (median round; mean ${fmt(cpuA / ROUNDS, 1)} us bare, ${fmt(cpuB / ROUNDS, 1)} us service); ` +
      `loaded at the same time: **${fmt(pairedRps, 2)}** in requests per second, **${fmt(pairedCpu, 2)}** in CPU per request (medians of ${ROUNDS} rounds) (target >= 0.90)`,
    `- ${accessLine} (the service above writes its access lines)`,
    `- hot path vs naive: **${fmt(b1.rps / d.rps, 0)} x** (target >= 50)`,
    `- p99 at 80% of top rate: hot ${fmt(b80.p99, 1)} ms, mix ${fmt(m80.p99, 1)} ms (target <= 5 ms); the bare server at the same rates: ${fmt(a80.p99, 1)} ms and ${fmt(am80.p99, 1)} ms`,
    `- resident memory (max): ${fmt(stats.rss_max / 1024 ** 2)} MiB with CACHE_MAX_BYTES = ${fmt(CACHE_MAX_BYTES / 1024 ** 2)} MiB (target <= CACHE_MAX_BYTES + 200 MiB)`,
    `- event-loop delay p99: ${fmt(eldIdle.eld_p99_ms, 1)} ms serving only; ${fmt(ing.eld_p99_ms, 1)} ms (max ${fmt(ing.eld_max_ms, 1)} ms) while applying ${fmt(ing.events)} events in ${fmt(ing.seconds, 1)} s under read load (target <= 20 ms), applied by an ingest thread in ${fmt(ing.slices)} transactions, the slowest ${fmt(ing.slowest_slice_ms, 0)} ms; serving only, max delay ${fmt(eldIdle.eld_max_ms, 1)} ms`,
  ].join('\n');
  const md = `Machine: ${machineLine()}\n\nWorld: ${WORLD.accounts * 2} projects x ${WORLD.days} days, ${WORLD.promptsPerProject} prompts x 4 engines a day; ` +
    `autocannon, ${CONNECTIONS} connections, ${DURATION} s per scenario, on 127.0.0.1; ` +
    `${PIN.length > 0 ? 'autocannon pinned to CPU 0, servers to CPU 1' : 'not pinned to CPUs'}.\n\n${table}\n\n${summary}\n`;
  fs.writeFileSync(path.join(OUT, 'serve.md'), md);
  console.log(`\n${md}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
