// npm run bench:ingest [-- --accounts N --days N --batch-size N]
// The write path against the cost of reading its input, on one generated log (>= 100k events by
// default) and in one run:
//   1. JSON.parse only: readLines + JSON.parse, in this process (the floor of any replay);
//   2. parse + validate: readLines + decodeEvent (envelope and per-type schema), in this process;
//   3. replay as a user runs it: `node bin/visibility-api.js replay --db <fresh file> <log>` as a
//      child process; wall time from spawn to exit (start-up included) -> events/s, and its peak RSS;
//   4. the same replay of a log twice as long (twice the days), to show RSS does not grow with the log;
//   5. the raw-event floor (bench/raw-floor/raw-floor.ts): a 2-thread process that reads, parses and validates
//      every line (decodeEvent) on one thread and stores each valid event as read, keyed by its event
//      id, 1,000 a transaction with replay's pragmas, on the other; spawned and measured as the replay
//      (the least any durable replay does; replay is reported as a ratio of it, target 0.50);
//   6. the store's floor (bench/ingest/store-floor.ts): SQLite alone storing the log's runs, and the bound it
//      and parse + validate put on any replay on this host's cores;
//   7. the writer's SQL alone (bench/ingest/writer-sql.ts): every statement replay's writer runs, captured and
//      replayed on a fresh file with nothing else: the most replay can do with no JavaScript at all,
//      as a ratio of the raw-event floor (and without the slice index, which costs the most).
// Where each thread of the 1x replay and of the floor spent the wall time (bench/lib/thread-probe.ts,
// loaded into the child's threads): CPU, ready with no core free, and waiting for the other thread.
// Peak RSS is the child's VmHWM (the kernel's high-water mark of its resident set, all threads),
// read from /proc/<pid>/status every 50 ms while it runs; the largest reading is reported. Being a
// high-water mark it misses nothing between polls, only the last < 50 ms before exit.
// Prints a markdown table with the write path's targets and the digest of each replayed database.
// Exits non-zero only on errors (a child failing, a count mismatch), never on a missed target.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEMO_OPTIONS, type WorldOptions } from '../../fixtures/world';
import { decodeEvent } from '../../src/events';
import { readLines } from '../../src/ingest';
import { packageRoot } from '../../src/lib/root';
import { fmt, machineLine } from '../lib/machine';
import { PER_TRANSACTION, storeFloor, type StoreFloor } from './store-floor';
import { numberFlag, parseFlags } from '../lib/bench-flags';
import { writerSql, type WriterSql } from './writer-sql';
import { CLI, runCliMeasured, runNodeMeasured, writeLog } from '../lib/lib';
import type { FloorCounts } from '../raw-floor/raw-floor';
import { probeEnv, readThreadTimes, type ThreadTimes } from '../lib/thread-times';

const { values } = parseFlags({ options: { accounts: { type: 'string' }, days: { type: 'string' }, 'batch-size': { type: 'string' } } });
const positiveInt = (name: string, raw: string | undefined, dflt: number): number => numberFlag(name, raw, dflt, 'positive integer');

// 25 accounts (50 projects, 4 engines x 20 prompts each) x 28 days: ~115k events, ~110 MB.
const world: WorldOptions = {
  ...DEMO_OPTIONS, seed: 7, accounts: positiveInt('accounts', values.accounts, 25), projectsPerAccount: 2, sharedProjects: 3,
  days: positiveInt('days', values.days, 28),
};
// Unset: the CLI's own default, so the bench measures what a user gets.
const batchSize = values['batch-size'] === undefined ? null : positiveInt('batch-size', values['batch-size'], 1);
/** The CLI's default (`replay --help`), for the in-process capture of the writer's statements. */
const CLI_BATCH_SIZE = 1000;

const ROOT = packageRoot();
const OUT = path.join(ROOT, 'bench', 'out');

const TARGET = { rate: 50_000, ratio: 0.4, rssMb: 250, growth: 1.1, ofFloor: 0.5 };

interface Pass { events: number; seconds: number }
interface Measured extends Pass { peakMb: number; threads: ThreadTimes }
interface Replay extends Measured { cliLine: string; digest: string }
interface Floor extends Measured { counts: FloorCounts }

const rate = (p: Pass): number => p.events / p.seconds;

/** The log is generated once and kept in bench/out (gitignored): same options, same bytes. */
async function ensureLog(opts: WorldOptions): Promise<string> {
  const file = path.join(OUT, `ingest-s${opts.seed}-${opts.accounts}x${opts.days}.ndjson`);
  fs.mkdirSync(OUT, { recursive: true });
  await writeLog(file, opts);
  return file;
}

/** Times `perLine` over every line of the file; the best of `rounds` passes (the machine is shared). */
async function timeLines(file: string, rounds: number, perLine: (line: string) => boolean): Promise<Pass> {
  let best: Pass | null = null;
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    let events = 0;
    for await (const line of readLines(file)) if (perLine(line)) events += 1;
    const pass = { events, seconds: (performance.now() - started) / 1000 };
    if (!best || pass.seconds < best.seconds) best = pass;
  }
  return best!;
}

function jsonOnly(line: string): boolean {
  return JSON.parse(line) !== undefined;
}

function parseAndValidate(line: string): boolean {
  return decodeEvent(line).ok;
}

/** Replays the log into a fresh database file (on disk, not tmpfs) and removes it afterwards. */
async function replay(file: string, lines: number): Promise<Replay> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ingest-'));
  const dbFile = path.join(dir, 'replay.db');
  const probed = path.join(dir, 'threads');
  fs.mkdirSync(probed);
  try {
    const args = ['replay', '--db', dbFile, ...(batchSize === null ? [] : ['--batch-size', String(batchSize)]), file];
    const run = await runCliMeasured(args, probeEnv(probed));
    const cliLine = run.stdout.trim().split('\n').pop() ?? '';
    checkCounts(cliLine, lines);
    const digest = execFileSync(process.execPath, [CLI, 'digest', '--db', dbFile], { encoding: 'utf8' }).trim();
    return { events: lines, seconds: run.seconds, peakMb: (run.peakKb * 1024) / 1e6, threads: readThreadTimes(probed), cliLine, digest };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The raw-event floor (bench/raw-floor/raw-floor.ts) over the log, spawned and measured as the replay, into a
 * fresh file removed afterwards. Every line must be read and every valid event stored once: a floor
 * that skipped work would flatter the ratio.
 */
async function rawFloor(file: string, lines: number, valid: number): Promise<Floor> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-floor-'));
  const probed = path.join(dir, 'threads');
  fs.mkdirSync(probed);
  try {
    const run = await runNodeMeasured(path.join(ROOT, 'dist', 'bench', 'raw-floor', 'raw-floor.js'), ['--db', path.join(dir, 'floor.db'), file], probeEnv(probed));
    const counts = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as FloorCounts;
    if (counts.lines !== lines || counts.valid !== valid || counts.rows !== counts.inserted || counts.inserted > counts.valid) {
      throw new Error(`the floor read ${counts.lines} lines (the log has ${lines}), validated ${counts.valid} (decodeEvent: ${valid}), inserted ${counts.inserted}, holds ${counts.rows} rows`);
    }
    return { events: lines, seconds: run.seconds, peakMb: (run.peakKb * 1024) / 1e6, threads: readThreadTimes(probed), counts };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Every line must be accounted for; a replay that skipped lines would flatter its rate. */
function checkCounts(cliLine: string, lines: number): void {
  const n = (word: string): number | null => {
    const m = new RegExp(`(\\d+) ${word}`).exec(cliLine);
    return m ? Number(m[1]) : null;
  };
  const parts = [n('applied'), n('duplicate'), n('stale'), n('dead-lettered')];
  if (parts.some((p) => p === null)) {
    console.warn(`(could not read counts from the replay's output; not checked: ${cliLine})`);
    return;
  }
  const total = parts.reduce<number>((a, b) => a + (b ?? 0), 0);
  if (total !== lines) throw new Error(`replay accounted for ${total} events, the log has ${lines}: ${cliLine}`);
}

function met(ok: boolean): string {
  return ok ? 'met' : '**not met**';
}

/** Per thread, as a share of the process's wall time (spawn to exit). */
function threadRows(name: string, m: Measured, roles: Array<[string, string]>): string[] {
  const ms = m.seconds * 1000;
  const share = (x: number): string => `${fmt(x / 1000, 2)} (${fmt((100 * x) / ms)} %)`;
  const rows = roles.filter(([role]) => m.threads.roles.has(role)).map(([role, label]) => {
    const t = m.threads.roles.get(role)!;
    return `| ${name} | ${label} | ${share(t.cpuMs)} | ${share(t.loopIdleMs)} | ${share(t.runQueueMs)} |`;
  });
  const o = m.threads.other;
  rows.push(`| ${name} | ${o.threads} other threads (V8's platform: GC, compiling; libuv) | ${share(o.cpuMs)} | | ${share(o.runQueueMs)} |`);
  const cpu = [...m.threads.roles.values(), o].reduce((a, t) => a + t.cpuMs, 0);
  rows.push(`| ${name} | all: ${fmt(cpu / ms, 2)} cores busy of ${os.cpus().length}, ${fmt((1000 * cpu) / m.events, 1)} us of CPU an event | ${share(cpu)} | | |`);
  return rows;
}

function report(parse: Pass, validate: Pass, one: Replay, two: Replay, raw: Floor, floor: StoreFloor, sql: WriterSql): string {
  const row = (name: string, p: Pass, rss: string): string =>
    `| ${name} | ${fmt(p.events)} | ${fmt(p.seconds, 2)} | ${fmt(rate(p))} | ${fmt(rate(p) / rate(parse), 2)} | ${fmt(rate(p) / rate(validate), 2)} | ${fmt(rate(p) / rate(raw), 2)} | ${rss} |`;
  const growth = two.peakMb / one.peakMb;
  const sqlRow = (name: string, seconds: number): string =>
    `| ${name} | ${fmt(seconds, 2)} | ${fmt((1e6 * seconds) / one.events, 1)} | ${fmt(one.events / seconds)} | ${fmt(one.events / seconds / rate(raw), 2)} |`;
  // CPU per event that validating and storing alone take (runs are most events), and what that allows
  // on this host's cores with perfect overlap and nothing else done.
  const usOf = (p: Pass): number => 1e6 / rate(p);
  const perEvent = (rowUs: number): number => usOf(validate) + (rowUs * floor.runs) / validate.events;
  const cores = os.cpus().length;
  const bound = (rowUs: number): string => `${fmt(perEvent(rowUs), 1)} us -> ${fmt((cores * 1e6) / perEvent(rowUs))} events/s`;
  return [
    '| measure | events | seconds | events/s | / JSON.parse-only | / parse+validate | / raw-event floor | peak RSS MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row('JSON.parse only (readLines + JSON.parse, best of 2)', parse, ''),
    row('parse + validate (readLines + decodeEvent, best of 2)', validate, ''),
    row('raw-event floor, whole process (2 threads: parse + validate | store the event by id)', raw, fmt(raw.peakMb)),
    row('replay CLI, whole process (1x log)', one, fmt(one.peakMb)),
    row(`replay CLI, whole process (2x log: ${world.days * 2} days)`, two, fmt(two.peakMb)),
    '',
    '| target | measured | |',
    '|---|---:|---|',
    `| replay >= ${fmt(TARGET.rate)} events/s | ${fmt(rate(one))} | ${met(rate(one) >= TARGET.rate)} |`,
    `| replay >= ${TARGET.ratio} x JSON.parse-only | ${fmt(rate(one) / rate(parse), 2)} | ${met(rate(one) / rate(parse) >= TARGET.ratio)} |`,
    `| peak RSS <= ${TARGET.rssMb} MB (1x, 2x) | ${fmt(one.peakMb)}, ${fmt(two.peakMb)} | ${met(Math.max(one.peakMb, two.peakMb) <= TARGET.rssMb)} |`,
    `| no RSS growth at 2x (2x / 1x <= ${TARGET.growth}) | ${fmt(growth, 2)} | ${met(growth <= TARGET.growth)} |`,
    `| replay >= ${fmt(TARGET.ofFloor, 2)} x the raw-event floor | ${fmt(rate(one) / rate(raw), 2)} | ${met(rate(one) / rate(raw) >= TARGET.ofFloor)} |`,
    '',
    'Where each thread spent the wall time (spawn to exit): on a core; waiting for the other thread (its event loop idle:',
    'no batch to write, or no credit to send one; or a file read); ready but no core free (the run queue: the host is shared):',
    '',
    '| process | thread | CPU s (of wall) | waiting s (of wall) | run queue s (of wall) |',
    '|---|---|---:|---:|---:|',
    ...threadRows('replay 1x', one, [['writer', 'writer (replay thread)'], ['preparer', 'preparer (file thread)'], ['main', 'main (progress)']]),
    ...threadRows('raw floor', raw, [['main', 'writer (main thread)'], ['preparer', 'preparer']]),
    '',
    `The store's floor (${fmt(floor.runs)} runs, ${fmt(PER_TRANSACTION)} a transaction, replay's settings, nothing else while timed), and the bound it puts`,
    `on any replay that validates every event and stores its runs, with ${cores} cores perfectly overlapped:`,
    '',
    '| floor | us per run | validate + store, CPU per event -> bound on this host |',
    '|---|---:|---:|',
    `| a run's row as replay stores it (runs, its 3 indexes, keys) | ${fmt(floor.row, 1)} | ${bound(floor.row)} |`,
    `| a minimal row keeping the event (integer key, event text, no index) | ${fmt(floor.minimal, 1)} | ${bound(floor.minimal)} |`,
    '',
    `The writer's SQL alone (${fmt(sql.statements)} statements captured from replay's writer, ${fmt(batchSize ?? CLI_BATCH_SIZE)} events a transaction, replayed`,
    'on a fresh file with nothing else, to the durable close): the most a replay with no JavaScript at all could do on this store:',
    '',
    '| statements | seconds | us an event | events/s at most | / raw-event floor |',
    '|---|---:|---:|---:|---:|',
    sqlRow('every statement, the store as it is (best of 2)', sql.seconds),
    sqlRow('the same without the slice index (runs_slices, migration 016)', sql.withoutSlices),
    '',
    `Longest: ${sql.top.map(([text, n, ms]) => `${text.split(' ').slice(0, 3).join(' ')} (${fmt(n)}x) ${fmt(ms)} ms`).join('; ')}.`,
  ].join('\n');
}

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'src', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  console.log(`machine: ${machineLine()}`);
  const file = await ensureLog(world);
  const file2 = await ensureLog({ ...world, days: world.days * 2 });
  const parse = await timeLines(file, 2, jsonOnly);
  const validate = await timeLines(file, 2, parseAndValidate);
  if (validate.events !== parse.events) console.warn(`note: ${parse.events - validate.events} lines of the log fail validation`);
  const lines2 = (await timeLines(file2, 1, () => true)).events;
  const one = await replay(file, parse.events);
  const raw = await rawFloor(file, parse.events, validate.events);
  const two = await replay(file2, lines2);
  const floor = await storeFloor(file);
  const sql = await writerSql(file, batchSize ?? CLI_BATCH_SIZE);
  const mib = (f: string): string => `${fmt(fs.statSync(f).size / 1e6)} MB`;
  console.log(`logs: ${path.relative(ROOT, file)} (${fmt(parse.events)} events, ${mib(file)}), ${path.relative(ROOT, file2)} (${fmt(lines2)} events, ${mib(file2)})`);
  console.log(`replay batch size: ${batchSize ?? 'CLI default'}; peak RSS = child's VmHWM (/proc/<pid>/status, polled every 50 ms)`);
  console.log(`replay 1x: ${one.cliLine}\nreplay 2x: ${two.cliLine}`);
  console.log(`raw-event floor: ${fmt(raw.counts.lines)} lines, ${fmt(raw.counts.valid)} valid, ${fmt(raw.counts.rows)} rows stored (${fmt(PER_TRANSACTION)} a transaction)`);
  console.log('');
  console.log(report(parse, validate, one, two, raw, floor, sql));
  console.log('');
  console.log(`digest 1x ${one.digest}\ndigest 2x ${two.digest}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
