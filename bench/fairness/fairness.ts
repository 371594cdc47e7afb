// npm run bench:fairness [-- --tier medium|large --prompts N (300) --engines N (6) --days N (60) --seconds S (6) --cold-ms N (50) --serve-root DIR --db FILE]
// --tier: the project size of bench:builds' tiers (medium 300 prompts x 6 engines, large 1,000 x 8),
// each of the two accounts one such project; --prompts and --engines override it.
// Fair sharing between accounts: one account (A) floods the most expensive reports it can ask for,
// another (B) goes on with its ordinary use, against `visibility-api serve` with its default flags
// (the rate limit, the per-account build cap, the cache's shares all as shipped).
//
// World: 2 accounts with one project each, N prompts x N engines, one run per prompt, engine and day
// (fixtures/world.ts), replayed once with `visibility-api replay` into bench/out (kept: gitignored).
//
// Phases, each S seconds, each measuring B:
//   alone        B alone
//   HTTP flood   A on 8 connections, each asking without pause for signals, mentions (1000 a page),
//                group_by day x engine and a trend over a random range of the world: a new cold
//                build almost every time
//   MCP flood    A on 4 connections, each posting batches of 100 mentions calls over random ranges
// B's measures: a cold one-day visibility report (two- and three-day ones too when the phases need
// more URLs than the world has days; a new URL every 50 ms, --cold-ms: fewer on a host
// so loaded that B alone cannot keep up) and its cached answers
// (5 URLs warmed before, asked in turn every 100 ms). Reported: B's p50/p99 of each and the ratios
// to alone; what A got (200, stale, 429, other); the server's peak RSS (VmHWM).
// BUILD_THREADS=N in the environment sets serve's build threads (its default otherwise). serve runs
// with MALLOC_ARENA_MAX=2, as the image sets it (another value from the environment wins).
// --serve-root DIR runs `serve` from another checkout's build (DIR/bin/visibility-api.js) on this
// world (--db FILE: a copy of the world at that build's schema, e.g. replayed by it), for paired
// runs against a base build; the server's memory at its largest RSS
// (/proc/PID/smaps_rollup, sampled every 250 ms) is printed split into anonymous and file-backed.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { worldKeys, DEMO_OPTIONS, type WorldOptions } from '../../fixtures/world';
import { packageRoot } from '../../src/lib/root';
import { openDb } from '../../src/store';
import { numberFlag, orExit, parseFlags } from '../lib/bench-flags';
import { CLI, freePort, highWaterKb, runBench, writeLog } from '../lib/lib';
import { fmt, machineLine } from '../lib/machine';

const { values } = parseFlags({ options: { tier: { type: 'string' }, prompts: { type: 'string' }, engines: { type: 'string' }, days: { type: 'string' }, seconds: { type: 'string' }, 'cold-ms': { type: 'string' }, 'serve-root': { type: 'string' }, db: { type: 'string' } } });
/** bench/builds.ts's tiers, by project size (the world is the same generator's: fixtures/world.ts). */
const TIERS: Record<string, { prompts: number; engines: number }> = { medium: { prompts: 300, engines: 6 }, large: { prompts: 1000, engines: 8 } };
const TIER = orExit(() => {
  const t = TIERS[values.tier ?? 'medium'];
  if (!t) throw new Error(`--tier: "${values.tier}" is not one of ${Object.keys(TIERS).join(', ')}`);
  return t;
});
const PROMPTS = numberFlag('prompts', values.prompts, TIER.prompts, 'positive integer');
const ENGINES = numberFlag('engines', values.engines, TIER.engines, 'positive integer');
const DAYS = numberFlag('days', values.days, 60, 'positive integer');
const SECONDS = numberFlag('seconds', values.seconds, 6, 'positive number');
const COLD_MS = numberFlag('cold-ms', values['cold-ms'], 50, 'positive integer');
const ROOT = packageRoot();
const SERVE_CLI = orExit(() => {
  if (values['serve-root'] === undefined) return CLI;
  const cli = path.join(path.resolve(values['serve-root']), 'bin', 'visibility-api.js');
  if (!fs.existsSync(cli)) throw new Error(`--serve-root: no ${cli}`);
  return cli;
});
const OUT = path.join(ROOT, 'bench', 'out');
const END_DAY = '2026-11-15';

const WORLD: WorldOptions = {
  ...DEMO_OPTIONS, seed: 54, accounts: 2, projectsPerAccount: 1, sharedProjects: 0, engines: ENGINES, enginesPerProject: ENGINES,
  promptsPerProject: PROMPTS, runsPerPromptPerDay: 1, days: DAYS, endDay: END_DAY, forumPostsPerProject: 30,
};

async function ensureWorld(): Promise<string> {
  fs.mkdirSync(OUT, { recursive: true });
  const name = `fairness-2x${PROMPTS}x${ENGINES}x${DAYS}`;
  const dbFile = path.join(OUT, `${name}.db`);
  if (fs.existsSync(dbFile)) return dbFile;
  const log = path.join(OUT, `${name}.ndjson`);
  console.log(`generating ${name} ...`);
  await writeLog(log, WORLD);
  const tmp = `${dbFile}.tmp`;
  for (const s of ['', '-wal', '-shm']) fs.rmSync(tmp + s, { force: true });
  const started = performance.now();
  execFileSync(process.execPath, [CLI, 'replay', '--db', tmp, log], { stdio: ['ignore', 'ignore', 'inherit'] });
  console.log(`  replayed in ${fmt((performance.now() - started) / 1000, 1)} s`);
  for (const s of ['-wal', '-shm']) fs.rmSync(tmp + s, { force: true });
  fs.renameSync(tmp, dbFile);
  return dbFile;
}

interface Party { key: string; project: string; engines: string[] }

function parties(dbFile: string): [Party, Party] {
  const keys = new Map(worldKeys(WORLD).filter((k) => !k.revoked).map((k) => [k.account_id, k.key]));
  const db = openDb(dbFile, { readonly: true });
  const rows = db.prepare('SELECT id, company_id FROM projects WHERE deleted = 0 ORDER BY company_id').all() as Array<{ id: string; company_id: string }>;
  const engines = (p: string): string[] => (db.prepare('SELECT engine_id FROM project_engines WHERE project_id = ? ORDER BY engine_id').all(p) as Array<{ engine_id: string }>).map((r) => r.engine_id);
  const out = rows.filter((r) => keys.has(r.company_id)).slice(0, 2).map((r) => ({ key: keys.get(r.company_id)!, project: r.id, engines: engines(r.id) }));
  db.close();
  if (out.length < 2) throw new Error('the world has fewer than two accounts with a project');
  return [out[0]!, out[1]!];
}

const DAY_MS = 86_400_000;
const dayOf = (i: number): string => new Date(Date.parse(`${END_DAY}T00:00:00Z`) - (DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10);
const rand = (n: number): number => Math.floor(Math.random() * n);
function randomRange(): string {
  const a = rand(DAYS);
  const b = a + rand(DAYS - a);
  return `start_date=${dayOf(a)}&end_date=${dayOf(b)}`;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function get(port: number, p: string, key: string): Promise<{ status: number; ms: number; stale: boolean }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent, headers: { 'x-api-key': key, 'accept-encoding': 'br' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, stale: res.headers['cache-status'] !== undefined }));
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t0, stale: false }));
  });
}

function post(port: number, body: string, key: string, a: http.Agent): Promise<{ status: number; bytes: number; toolErrors: number }> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', agent: a,
      headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
      let bytes = 0;
      let text = '';
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (text.length < 1 << 20) text += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, toolErrors: (text.match(/"isError":true/g) ?? []).length }));
    });
    req.on('error', () => resolve({ status: 0, bytes: 0, toolErrors: 0 }));
    req.end(body);
  });
}

const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

interface Flood { ok: number; stale: number; limited: number; other: number; mcpToolErrors: number; mcpBytes: number; mcpPosts: number }
const newFlood = (): Flood => ({ ok: 0, stale: 0, limited: 0, other: 0, mcpToolErrors: 0, mcpBytes: 0, mcpPosts: 0 });

function count(f: Flood, status: number, stale: boolean): void {
  if (status === 200 && stale) f.stale += 1;
  else if (status === 200) f.ok += 1;
  else if (status === 429) f.limited += 1;
  else f.other += 1;
}

/** A's expensive requests: a new range each time, so nearly every one needs a build. */
function expensive(a: Party): string {
  const base = `/v1/public/projects/${a.project}`;
  switch (rand(4)) {
    case 0: return `${base}/signals?${randomRange()}`;
    case 1: return `${base}/mentions?limit=1000&${randomRange()}`;
    case 2: return `${base}/visibility?group_by=day&group_by=engine&${randomRange()}`;
    default: return `${base}/visibility/timeseries?${randomRange()}`;
  }
}

async function httpFlood(port: number, a: Party, until: () => boolean, f: Flood): Promise<void> {
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (!until()) {
      const r = await get(port, expensive(a), a.key);
      count(f, r.status, r.stale);
    }
  }));
}

async function mcpFlood(port: number, a: Party, until: () => boolean, f: Flood): Promise<void> {
  const mcpAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (!until()) {
      const batch = Array.from({ length: 100 }, (_, i) => {
        const [s, e] = randomRange().split('&').map((x) => x.split('=')[1]!);
        return { jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'mentions', arguments: { project_id: a.project, limit: 1000, start_date: s, end_date: e } } };
      });
      const r = await post(port, JSON.stringify(batch), a.key, mcpAgent);
      f.mcpPosts += 1;
      f.mcpBytes += r.bytes;
      f.mcpToolErrors += r.toolErrors;
      count(f, r.status, false);
    }
  }));
  mcpAgent.destroy();
}

interface Measured { cold: number[]; cached: number[]; errors: number }

/** B for SECONDS: a cold one-day report every COLD_MS, and a cached one every 100 ms (30 requests a second: within the default rate). */
async function measureB(port: number, b: Party, coldPaths: string[], hot: string[]): Promise<Measured> {
  const m: Measured = { cold: [], cached: [], errors: 0 };
  const end = performance.now() + SECONDS * 1000;
  const pending: Array<Promise<void>> = [];
  let j = 0;
  const coldTimer = setInterval(() => {
    const p = coldPaths.shift();
    if (!p) return;
    pending.push(get(port, p, b.key).then((r) => {
      if (r.status === 200) m.cold.push(r.ms);
      else m.errors += 1;
    }));
  }, COLD_MS);
  const hotTimer = setInterval(() => {
    pending.push(get(port, hot[j++ % hot.length]!, b.key).then((r) => {
      if (r.status === 200) m.cached.push(r.ms);
      else m.errors += 1;
    }));
  }, 100);
  while (performance.now() < end) await new Promise((r) => setTimeout(r, 50));
  clearInterval(coldTimer);
  clearInterval(hotTimer);
  await Promise.all(pending);
  return m;
}

let server: ChildProcess | null = null;

/** glibc's malloc arenas for serve: the image's setting (Dockerfile, docs/operations.md) unless the environment sets one. */
const ARENAS = process.env.MALLOC_ARENA_MAX ?? '2';

/** smaps_rollup's lines in kB (Rss, Anonymous, ...), or null once the process is gone. */
function rollup(pid: number): Record<string, number> | null {
  try {
    const out: Record<string, number> = {};
    for (const m of fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').matchAll(/^(\w+):\s+(\d+) kB/gm)) out[m[1]!] = Number(m[2]);
    return out;
  } catch {
    return null;
  }
}

/** The server's memory at its largest RSS seen, sampled every 250 ms while the phases run. */
function sampleMemory(pid: number): { stop: () => Record<string, number> | null } {
  let top: Record<string, number> | null = null;
  const timer = setInterval(() => {
    const r = rollup(pid);
    if (r && (top === null || (r.Rss ?? 0) > (top.Rss ?? 0))) top = r;
  }, 250);
  return { stop: () => { clearInterval(timer); return top; } };
}

async function startServe(dbFile: string): Promise<{ port: number; opsPort: number; pid: number }> {
  const port = await freePort();
  const opsPort = await freePort();
  const child = spawn(process.execPath, [SERVE_CLI, 'serve', '--db', dbFile, '--host', '127.0.0.1', '--port', String(port), '--ops-port', String(opsPort)],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, LOG_LEVEL: 'warn', MALLOC_ARENA_MAX: ARENAS } });
  server = child;
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`http://127.0.0.1:${opsPort}/readyz`).then((r) => r.ok, () => false);
    if (ok) return { port, opsPort, pid: child.pid! };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('serve did not become ready');
}

async function main(): Promise<void> {
  console.log(machineLine());
  const dbFile = values.db === undefined ? await ensureWorld() : path.resolve(values.db);
  const [a, b] = parties(dbFile);
  const s = await startServe(dbFile);
  const threads = process.env.BUILD_THREADS ?? 'default';
  console.log(`world: 2 accounts x 1 project, ${PROMPTS} prompts x ${ENGINES} engines x ${DAYS} days; serve with its defaults (build threads: ${threads}; MALLOC_ARENA_MAX=${ARENAS}, as the image); ${SECONDS} s a phase; B's cold report every ${COLD_MS} ms`);
  // B's cold reports: every day x (no filter, each engine), never asked twice; when three phases
  // need more than a world's days give, two-day ranges too, then three-day ones, shuffled together
  // so that every phase draws the same mix.
  const bBase = `/v1/public/projects/${b.project}`;
  const cold: string[] = [];
  const needed = 3 * (Math.ceil((SECONDS * 1000) / COLD_MS) + 2);
  for (let span = 1; span <= DAYS && cold.length < needed; span++) {
    for (const e of ['', ...b.engines.map((id) => `&engine_ids=${id}`)]) for (let d = 0; d + span <= DAYS; d++) cold.push(`${bBase}/visibility?start_date=${dayOf(d)}&end_date=${dayOf(d + span - 1)}${e}`);
  }
  cold.sort(() => Math.random() - 0.5);
  const hot = [`${bBase}/visibility`, `${bBase}/visibility/timeseries`, `${bBase}/prompts`, `${bBase}/competitor-rankings`, `${bBase}/scores/daily`];
  for (const p of hot) await get(s.port, p, b.key);
  // Warm A's side too (its threads, statements), so "alone" is not a cold start.
  for (let i = 0; i < 4; i++) await get(s.port, expensive(a), a.key);
  await new Promise((r) => setTimeout(r, 2500)); // A's bucket refills

  const perPhase = Math.ceil((SECONDS * 1000) / COLD_MS) + 2;
  const memory = sampleMemory(s.pid);
  const rows: Array<{ phase: string; m: Measured; f: Flood | null; load: number }> = [];
  const aloneM = await measureB(s.port, b, cold.splice(0, perPhase), hot);
  rows.push({ phase: 'alone', m: aloneM, f: null, load: os.loadavg()[0]! });
  for (const [phase, flood] of [['HTTP flood (8 conn)', httpFlood], ['MCP flood (4 x batches of 100)', mcpFlood]] as const) {
    let stop = false;
    const f = newFlood();
    const running = flood(s.port, a, () => stop, f);
    await new Promise((r) => setTimeout(r, 500)); // the flood under way
    const m = await measureB(s.port, b, cold.splice(0, perPhase), hot);
    stop = true;
    await running;
    rows.push({ phase, m, f, load: os.loadavg()[0]! });
    await new Promise((r) => setTimeout(r, 2500));
  }
  const alone = rows[0]!.m;
  const metrics = await fetch(`http://127.0.0.1:${s.opsPort}/metrics`).then((r) => r.text());
  const rss = highWaterKb(s.pid);
  const top = memory.stop();
  console.log('');
  console.log(`${'phase'.padEnd(32)}${'cold p50'.padStart(10)}${'cold p99'.padStart(10)}${'x alone'.padStart(9)}${'hit p50'.padStart(9)}${'hit p99'.padStart(9)}${'x alone'.padStart(9)}${'B errs'.padStart(8)}${'load'.padStart(7)}   A got`);
  for (const { phase, m, f, load } of rows) {
    const coldRatio = pct(m.cold, 99) / pct(alone.cold, 99);
    const hitRatio = pct(m.cached, 99) / pct(alone.cached, 99);
    const got = f === null ? '-' : `200 ${f.ok}, stale ${f.stale}, 429 ${f.limited}, other ${f.other}` +
      (f.mcpPosts > 0 ? `; ${f.mcpPosts} posts, ${fmt(f.mcpBytes / f.mcpPosts / 1024 / 1024, 1)} MiB each, ${f.mcpToolErrors} tool errors` : '');
    console.log(`${phase.padEnd(32)}${fmt(pct(m.cold, 50), 1).padStart(10)}${fmt(pct(m.cold, 99), 1).padStart(10)}${fmt(coldRatio, 2).padStart(9)}`
      + `${fmt(pct(m.cached, 50), 1).padStart(9)}${fmt(pct(m.cached, 99), 1).padStart(9)}${fmt(hitRatio, 2).padStart(9)}${String(m.errors).padStart(8)}${fmt(load, 1).padStart(7)}   ${got}`);
  }
  console.log(`(B: ${alone.cold.length} cold and ${alone.cached.length} cached requests a phase; ms; B errs: B's answers other than 200; load: the host's 1-minute load average after the phase)`);
  console.log(`server peak RSS (VmHWM): ${rss === null ? '?' : fmt(rss / 1024, 0)} MB`);
  if (top !== null) {
    const mb = (k: string): string => fmt((top![k] ?? 0) / 1024, 0);
    console.log(`at the largest RSS sampled: ${mb('Rss')} MB, anonymous ${mb('Anonymous')} MB, file-backed ${fmt(((top.Rss ?? 0) - (top.Anonymous ?? 0)) / 1024, 0)} MB`);
  }
  const throttled = new RegExp(`^visibility_account_throttled\\{account="[^"]+"\\} (\\d+)$`, 'gm');
  console.log(`429s per account on /metrics: ${[...metrics.matchAll(throttled)].map((m) => m[1]).join(', ') || 'none'}`);
  const perAccount = (name: string): number[] => [...metrics.matchAll(new RegExp(`^${name}\\{account="[^"]+"\\} (\\S+)$`, 'gm'))].map((m) => Number(m[1]));
  const seconds = perAccount('visibility_account_build_seconds');
  const builds = perAccount('visibility_account_builds');
  console.log(`builds per account on /metrics: ${builds.map((n, i) => `${n} builds, ${fmt((1000 * seconds[i]!) / Math.max(1, n), 0)} ms each`).join('; ')}`);
}

async function cleanup(): Promise<void> {
  agent.destroy();
  if (server && server.exitCode === null) {
    const exited = new Promise<void>((r) => server!.once('exit', () => r()));
    server.kill('SIGTERM');
    await exited;
  }
}

runBench(main, cleanup);
