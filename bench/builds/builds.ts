// npm run bench:builds [-- --iterations N (100) --days N,N (365,40) --no-fresh --only-ranges | --only-slices]
// npm run bench:builds -- --tier small|medium|large|large-4x [--days N --iterations N (20) --case-seconds S (3)]
// (`npm run bench` ends with `--days 365 --no-fresh`: every endpoint's default request over a year of history
// (a cold build must fit one request's budget), then the ranged builds a dashboard's date ranges make.)
// Cold builds as history grows (a cache miss must stay cheap over a year of data): for every endpoint, a body built on a cache miss
// the way a build thread builds it (src/serve/bodies/ready-body.ts buildReady: one read transaction around the
// read model and the data_version, ajv validation, JSON + gzip + brotli + ETag; a body over 64 KiB
// gets brotli only), timed per stage.
//
// Tiers (--tier): one project the size of a customer's: small 25 prompts x 4 engines, medium 300 x 6,
// large 1,000 x 8, each a year of one run group a day, and large-4x, the large project over 90 days at
// 4 run groups a day (--days N: another length, e.g. the large year cut short). Every endpoint's
// default request, ranges up to 365 days, each filter, group_by with one and two keys, compare and
// signals (bench/builds/build-cases.ts), body bytes beside each time; the world's replay time, peak RSS and
// bytes per run. A case is built until --iterations or --case-seconds is reached (at least 3 times),
// after one warm-up round: a large project's builds take seconds today. No fresh-store column.
//
// Worlds: 2 accounts, one project each, 5 engines all tracked, 15 prompts, one run per prompt,
// engine and day; 365 days (the target) and 40 days (a younger project, for comparison). Each world is
// generated with fixtures/world.ts, replayed with `visibility-api replay` into a fresh file, and
// kept in bench/out (gitignored): later runs reuse the log and the database.
//
// "Cold" here means no cached body: every iteration runs the read model from SQL to bytes. The
// ReadStore is the one a build thread keeps (statements already prepared and the read models'
// code optimised, as after its first requests: every case is built WARM_UP_ROUNDS times before any
// is measured) and SQLite's page cache is warm: what a cache miss costs in a running service. A
// "fresh" column also times build + JSON with a new connection and a new ReadStore per iteration
// (open + encodeBody every statement + cold page cache of that connection).
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { ReadStore, type Endpoint, type ReadArgs } from '../../src/readmodels';
import { packageRoot } from '../../src/lib/root';
import { BodySchemas } from '../../src/serve/bodies/bodies';
import { readVersion, sumVersions } from '../../src/serve/bodies/ready-body';
import { encodeBody, encodeBodyText } from '../../src/serve/bodies/encode';
import { knownSchemaVersion, openReader, openReadStore } from '../../src/store';
import { buildCases } from './build-cases';
import { fmt, machineLine } from '../lib/machine';
import { numberFlag, numberListFlag, parseFlags } from '../lib/bench-flags';
import { buildsWorldOptions, runCliMeasured, writeLog } from '../lib/lib';
import { DEMO_OPTIONS, type WorldOptions } from '../../fixtures/world';
import { orExit } from '../lib/bench-flags';

const { values } = parseFlags({
  options: {
    iterations: { type: 'string' }, days: { type: 'string' }, 'no-fresh': { type: 'boolean' }, 'only-ranges': { type: 'boolean' }, 'only-slices': { type: 'boolean' },
    tier: { type: 'string' }, 'case-seconds': { type: 'string' },
  },
});

/** A tier: one project of `prompts` x `engines`, `groups` run groups a day over `days`; targets from the read-model goals (buildReady p99, signals apart). */
interface Tier { prompts: number; engines: number; days: number; groups: number; targetMs: number; signalsMs: number }
const TIERS: Record<string, Tier> = {
  small: { prompts: 25, engines: 4, days: 365, groups: 1, targetMs: 10, signalsMs: 30 },
  medium: { prompts: 300, engines: 6, days: 365, groups: 1, targetMs: 10, signalsMs: 30 },
  large: { prompts: 1000, engines: 8, days: 365, groups: 1, targetMs: 30, signalsMs: 100 },
  'large-4x': { prompts: 1000, engines: 8, days: 90, groups: 4, targetMs: 30, signalsMs: 100 },
};
const TIER_NAME = values.tier;
const TIER: Tier | null = TIER_NAME === undefined ? null : orExit(() => {
  const t = TIERS[TIER_NAME];
  if (!t) throw new Error(`--tier: "${TIER_NAME}" is not one of ${Object.keys(TIERS).join(', ')}`);
  return values.days === undefined ? t : { ...t, days: numberFlag('days', values.days, t.days, 'positive integer') };
});
const CASE_SECONDS = numberFlag('case-seconds', values['case-seconds'], 3, 'positive number');

/** A tier's world: one account, one project tracking every engine of the world. */
function tierWorld(t: Tier): { name: string; opts: WorldOptions } {
  return {
    name: `tier-${t.prompts}x${t.engines}x${t.days}d-${t.groups}g`,
    opts: { ...DEMO_OPTIONS, seed: 53, accounts: 1, projectsPerAccount: 1, sharedProjects: 0, engines: t.engines, enginesPerProject: t.engines, promptsPerProject: t.prompts, runsPerPromptPerDay: t.groups, days: t.days },
  };
}
const ROOT = packageRoot();
const OUT = path.join(ROOT, 'bench', 'out');
const ITERATIONS = numberFlag('iterations', values.iterations, TIER ? 20 : 100, 'positive integer');
/** Builds of every case before any is measured (prepared statements, JIT, page cache). */
const WARM_UP_ROUNDS = TIER ? 1 : 20;
const DAYS = TIER ? [TIER.days] : numberListFlag('days', values.days, '365,40', 'positive integer');
const TARGET_MS = 10;


/** PRAGMA user_version of a file, read without migrating it. */
function schemaOf(file: string): number {
  const db = openReader(file);
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

/** The world's log and database, made once through the CLI a user runs; a half-made file is never kept. */
async function ensureWorld(days: number): Promise<string> {
  const world = TIER ? tierWorld(TIER) : { name: `builds-2x${days}x15x5`, opts: buildsWorldOptions(days) };
  fs.mkdirSync(OUT, { recursive: true });
  const name = world.name;
  const dbFile = path.join(OUT, `${name}.db`);
  if (fs.existsSync(dbFile)) {
    const schema = schemaOf(dbFile);
    if (schema === knownSchemaVersion()) return dbFile;
    // Made by an older build: made again, so the write side and its replay time are this build's.
    console.log(`${name}.db has schema ${schema}, this build writes ${knownSchemaVersion()}: made again`);
    for (const s of ['', '-wal', '-shm', '.replay.json']) fs.rmSync(dbFile + s, { force: true });
  }
  const log = path.join(OUT, `${name}.ndjson`);
  console.log(`generating ${name} ...`);
  await writeLog(log, world.opts);
  const tmp = `${dbFile}.tmp`;
  for (const s of ['', '-wal', '-shm']) fs.rmSync(tmp + s, { force: true });
  console.log(`replaying ${name} ...`);
  // The CLI a user runs, its peak RSS polled (VmHWM).
  const r = await runCliMeasured(['replay', '--db', tmp, '--quiet', log]);
  const seconds = r.seconds;
  console.log(`  replayed in ${fmt(seconds, 1)} s (visibility-api replay), peak RSS ${fmt(r.peakKb / 1024)} MB`);
  const events = await countLines(log);
  fs.writeFileSync(`${dbFile}.replay.json`, JSON.stringify({ events, seconds, peakMb: r.peakKb / 1024 }));
  for (const s of ['-wal', '-shm']) fs.rmSync(tmp + s, { force: true }); // a clean close checkpoints
  fs.renameSync(tmp, dbFile);
  return dbFile;
}

/** Lines of a file, read a chunk at a time (a tier's log is gigabytes). */
async function countLines(file: string): Promise<number> {
  let n = 0;
  for await (const chunk of fs.createReadStream(file)) {
    const b = chunk as Buffer;
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n += 1;
  }
  return n;
}

interface Timing { build: number; validate: number; json: number; ready: number; bytes: number }

/**
 * buildReady, stage by stage: the same calls in the same order, with a clock between them. A body the
 * store keeps as text (Endpoint.text: the day-by-day trend) is read, not built, validated or serialized.
 */
function timedBuild(store: ReadStore, schemas: BodySchemas, e: Endpoint, args: ReadArgs, scopes: string[]): Timing {
  const t0 = performance.now();
  const { version, text, body } = store.snapshot(() => {
    const version = sumVersions(scopes.map((s) => readVersion(store, s)));
    const text = e.text?.(store, args) ?? null;
    return { version, text, body: text === null ? e.build(store, args) : null };
  });
  const t1 = performance.now();
  if (text === null) {
    const problem = schemas.check(e.schema, body);
    if (problem) throw new Error(`${e.name}: ${problem}`);
  }
  const t2 = performance.now();
  const bytes = Buffer.byteLength(text ?? JSON.stringify(body));
  const t3 = performance.now();
  if (text === null) encodeBody(body, version.version, version.updated_at);
  else encodeBodyText(text, version.version, version.updated_at);
  const t4 = performance.now();
  const json = text === null ? t3 - t2 : 0;
  return { build: t1 - t0, validate: t2 - t1, json, ready: t1 - t0 + (t2 - t1) + (t4 - t3), bytes };
}

/** Nearest-rank percentile. */
function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** build + JSON.stringify on a new connection and ReadStore: every statement prepared again. */
function freshBuild(dbFile: string, e: Endpoint, args: ReadArgs): number {
  const db = openReader(dbFile);
  try {
    const t0 = performance.now();
    db.transaction(() => {
      const store = new ReadStore(db);
      return e.text?.(store, args) ?? JSON.stringify(e.build(store, args));
    })();
    return performance.now() - t0;
  } finally {
    db.close();
  }
}

interface Row { name: string; bytes: number; buildJson: number[]; ready: number[]; build: number[]; fresh: number[] }

/** Every endpoint with its defaults, then the ranged cases (or only those, with --only-ranges). */
function measure(dbFile: string): Row[] {
  const db = openReader(dbFile); // the cases' lookups
  const store = openReadStore(dbFile); // as a build thread opens it (its page cache included)
  const schemas = new BodySchemas();
  const cases = buildCases(db, { onlyRanges: values['only-ranges'] === true, onlySlices: values['only-slices'] === true, tier: TIER !== null });
  // Every case is warmed before any is measured: the read models share their decoding code, and V8
  // optimises it over its first few dozen calls, so the first case measured would otherwise pay for
  // all of them (a year's visibility range, first with --only-ranges: p99 10-16 ms after 3 warm-up
  // builds, 5-6 ms after this). A build thread in a running service has made those calls long before.
  for (let round = 0; round < WARM_UP_ROUNDS; round++) for (const c of cases) timedBuild(store, schemas, c.endpoint, c.args, c.scopes);
  const rows = cases.map((c) => measureOne(dbFile, store, schemas, c.name, c.endpoint, c));
  store.close();
  db.close();
  return rows;
}

function measureOne(dbFile: string, store: ReadStore, schemas: BodySchemas, name: string, e: Endpoint, { args, scopes }: { args: ReadArgs; scopes: string[] }): Row {
  const row: Row = { name, bytes: 0, buildJson: [], ready: [], build: [], fresh: [] };
  const until = performance.now() + CASE_SECONDS * 1000;
  for (let i = 0; i < ITERATIONS && (TIER === null || i < 3 || performance.now() < until); i++) {
    const t = timedBuild(store, schemas, e, args, scopes);
    row.bytes = t.bytes;
    row.build.push(t.build);
    row.buildJson.push(t.build + t.json);
    row.ready.push(t.ready);
  }
  if (!values['no-fresh'] && TIER === null) for (let i = 0; i < Math.min(ITERATIONS, 10); i++) row.fresh.push(freshBuild(dbFile, e, args));
  return row;
}

/** What the write side keeps for this world (the other half of the trade-off), and what it cost to write. */
function writeSide(dbFile: string): string {
  const db = openReader(dbFile);
  const count = (t: string): string => fmt(db.prepare(`SELECT count(*) FROM ${t}`).pluck().get() as number);
  // Tables another layout of the read models may not keep are left out, not an error.
  const exists = (t: string): boolean => db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(t) !== undefined;
  const rows = ['prompt_runs', 'agg_engine_day', 'agg_prompt_week', 'agg_prompt_month', 'agg_competitor_week', 'agg_competitor_month', 'agg_cited_week', 'agg_cited_month'].filter(exists).map((t) => `${t} ${count(t)}`).join(', ');
  const runs = db.prepare('SELECT count(*) FROM prompt_runs').pluck().get() as number;
  db.close();
  const bytes = fs.statSync(dbFile).size;
  let replay = '';
  try {
    const r = JSON.parse(fs.readFileSync(`${dbFile}.replay.json`, 'utf8')) as { events: number; seconds: number; peakMb?: number };
    replay = `; replayed ${fmt(r.events)} events in ${fmt(r.seconds, 1)} s (${fmt(r.events / r.seconds)} ev/s${r.peakMb === undefined ? '' : `, peak RSS ${fmt(r.peakMb)} MB`}, when the file was made)`;
  } catch {
    // made before the sidecar existed
  }
  return `Write side: ${fmt(bytes / 1024 ** 2, 1)} MiB, ${fmt(bytes / runs)} bytes per run; rows: ${rows}${replay}.`;
}

/** The buildReady p99 a case is held to: the tier's target (signals have their own), or TARGET_MS. */
const targetOf = (name: string): number => (TIER === null ? TARGET_MS : name.startsWith('signals') ? TIER.signalsMs : TIER.targetMs);

function table(days: number, dbFile: string, rows: Row[]): string {
  const title = TIER
    ? `### tier ${TIER_NAME}: ${fmt(TIER.prompts)} prompts x ${TIER.engines} engines, ${days} days, ${TIER.groups} run group${TIER.groups > 1 ? 's' : ''} a day; up to ${ITERATIONS} builds or ${CASE_SECONDS} s per case (at least 3)`
    : `### ${days} days of daily runs (15 prompts x 5 engines), ${ITERATIONS} builds per endpoint`;
  const lines = [
    title,
    '',
    writeSide(dbFile),
    '',
    `| endpoint | body bytes | builds | build p50 | build+JSON p50 | build+JSON p99 | buildReady p50 | buildReady p99 | fresh store p50 | p99 <= target |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const p99 = pct(r.ready, 99);
    lines.push(`| ${r.name} | ${fmt(r.bytes)} | ${r.ready.length} | ${fmt(pct(r.build, 50), 2)} | ${fmt(pct(r.buildJson, 50), 2)} | ${fmt(pct(r.buildJson, 99), 2)} | ${fmt(pct(r.ready, 50), 2)} | ${fmt(p99, 2)} | ${r.fresh.length ? fmt(pct(r.fresh, 50), 2) : '-'} | ${p99 <= targetOf(r.name) ? 'met' : `NOT met (${targetOf(r.name)} ms)`} |`);
  }
  const missed = rows.filter((r) => pct(r.ready, 99) > targetOf(r.name)).map((r) => r.name);
  const target = TIER ? `${TIER.targetMs} ms (signals ${TIER.signalsMs} ms)` : `${TARGET_MS} ms`;
  lines.push('', missed.length ? `Over ${target} (buildReady p99): ${missed.length} of ${rows.length}: ${missed.join(', ')}` : `Every endpoint's buildReady p99 <= ${target}.`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const out = [`machine: ${machineLine()}`, '',
    'ms per body. build = read transaction (data_version + read model, or the text the store keeps: the day-by-day trend); build+JSON adds JSON.stringify;',
    'buildReady = what a build thread does on a cache miss: build + ajv validation + JSON + gzip + brotli + ETag (over 64 KiB: brotli only, gzip waits for a gzip-only client).',
    `Same ReadStore throughout (prepared statements, as in a build thread after its first requests: every case built ${WARM_UP_ROUNDS === 1 ? 'once' : `${WARM_UP_ROUNDS} times`} before any is measured), page cache warm;`,
    '"fresh store" = new connection + new ReadStore per build (build + JSON only).', ''];
  for (const days of DAYS) {
    const dbFile = await ensureWorld(days);
    out.push(table(days, dbFile, measure(dbFile)), '');
  }
  const text = out.join('\n');
  console.log(text);
  fs.writeFileSync(path.join(OUT, TIER ? `builds-tier-${TIER_NAME}-${TIER.days}d.md` : values['only-slices'] ? 'builds-slices.md' : values['only-ranges'] ? 'builds-ranges.md' : 'builds.md'), text + '\n');
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
