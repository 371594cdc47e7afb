// Which Parquet writer `visibility-api export` uses, measured (the choice is recorded in docs/decisions.md): each candidate
// library and codec writes the bench world's runs and citations as the export lays them out (one
// file per project and month), in a child process of its own so its peak RSS is its own. Reports
// rows/s (median of the rounds, writing only: the rows are read from SQLite once, beforehand), the
// peak RSS (the child's VmHWM) and what it adds over a child that only reads the rows, the bytes on
// disk, whether two rounds wrote the same bytes, and checks every file with pyarrow (an independent
// reader): same row count, same null count and sum per column, and the Parquet type of timestamps.
//
//   node dist/bench/export/export-libs.js --db FILE [--rounds 3] [--modules DIR] [--python "CMD ..."] [--only NAME]
//
// --modules: the folder whose node_modules holds the other candidates (default: the project's;
// hyparquet-writer, the winner, is the project's dependency and runs through src/export/parquet.ts); a
// candidate missing there is reported as not installed, with the command that adds it.
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DatasetSpec } from '../../src/export/columns';
import { CITATIONS, RUNS, monthTables } from '../../src/export/datasets';
import { openDb, ReadStore } from '../../src/store';
import { countedPromptIds, knownEngineIds, liveProjectIds, trackedCompetitorIds, runMonths } from '../../src/store/reads';
import { packageRoot } from '../../src/lib/root';
import { numberFlag, parseFlags } from '../lib/bench-flags';
import { candidates } from './export-candidates';
import { median } from '../lib/lib';
import { fmt, machineLine } from '../lib/machine';

/** A dataset as the export makes it: its partitions (Hive path, columns), read once before anything is timed. */
interface Dataset { spec: DatasetSpec; parts: Array<[string, unknown[][]]>; rows: number }

/**
 * The two biggest datasets (runs and citations: every column type but int64), as `visibility-api
 * export` reads them (src/export/datasets.ts monthTables, one project's month at a time, inside one
 * read snapshot), so the candidates write exactly the export's files.
 */
function readDatasets(file: string): Dataset[] {
  const store = new ReadStore(openDb(file, { readonly: true }));
  const release = store.hold();
  try {
    const out = [RUNS, CITATIONS].map((spec): Dataset => ({ spec, parts: [], rows: 0 }));
    const engines = new Set(knownEngineIds(store));
    for (const id of liveProjectIds(store)) {
      const counting = { prompts: new Set(countedPromptIds(store, id)), engines, competitors: new Set(trackedCompetitorIds(store, id)) };
      for (const month of runMonths(store, id, '0000', '9999')) {
        const tables = monthTables(store, id, month, { start: null, end: null }, counting);
        for (const d of out) {
          const t = tables.find((x) => x.spec === d.spec)!;
          d.parts.push([path.join(`project_id=${id}`, `month=${month}`), t.columns]);
          d.rows += t.rows;
        }
      }
    }
    return out;
  } finally {
    release();
    store.close();
  }
}

/** Per column: nulls and the sum the Python reader computes (scripts/parquet-inspect.py). */
function expected(d: Dataset): Record<string, { nulls: number; sum: number | string }> {
  return Object.fromEntries(d.spec.columns.map((c, i) => {
    const values = d.parts.flatMap(([, columns]) => columns[i]!);
    const present = values.filter((v) => v !== null);
    const nulls = values.length - present.length;
    const sum = c.type === 'string' ? present.reduce((s: number, v) => s + Buffer.byteLength(v as string), 0)
      : c.type === 'boolean' ? present.filter((v) => v === true).length
      : c.type === 'date' ? present.reduce((s: number, v) => s + Date.parse(v as string) / 86_400_000, 0)
      : c.type === 'timestamp' ? String(present.reduce((s: bigint, v) => s + BigInt(Date.parse(v as string)), 0n))
      : present.reduce((s: number, v) => s + (v as number), 0);
    return [c.name, { nulls, sum }];
  }));
}

const hwmKB = (): number => Number(/^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);

interface DatasetResult { rows: number; files: number; seconds: number[]; bytes: number; deterministic: boolean; paths: string[]; expected: ReturnType<typeof expected> }
interface ChildResult { name: string; codec: string; notInstalled?: string; readSeconds: number; readHwmKB: number; hwmKB: number; datasets: Record<string, DatasetResult> }

/** One candidate and codec (or, with name 'read only', no writer): what the child prints. */
async function child(job: { name: string; codec: string; db: string; rounds: number; out: string; modules: string }): Promise<ChildResult> {
  const t0 = performance.now();
  const data = readDatasets(job.db);
  const result: ChildResult = { name: job.name, codec: job.codec, readSeconds: (performance.now() - t0) / 1000, readHwmKB: hwmKB(), hwmKB: 0, datasets: {} };
  const candidate = candidates.find((c) => c.name === job.name);
  if (candidate) {
    let write;
    try {
      write = await candidate.load(job.modules, job.codec);
    } catch (e) {
      if (!['MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
      return { ...result, notInstalled: `npm install ${candidate.packages.join(' ')}` };
    }
    for (const d of data) {
      const parts = d.parts;
      const r: DatasetResult = { rows: d.rows, files: parts.length, seconds: [], bytes: 0, deterministic: true, paths: [], expected: expected(d) };
      const digests: string[] = [];
      for (let round = 0; round < job.rounds; round++) {
        const dir = path.join(job.out, `r${round}`, d.spec.name);
        const hash = crypto.createHash('sha256');
        let bytes = 0;
        const start = performance.now();
        for (const [key, columns] of parts) {
          const file = path.join(dir, key, 'part-0.parquet');
          fs.mkdirSync(path.dirname(file), { recursive: true });
          bytes += await write(`${file}.tmp`, d.spec, columns);
          fs.renameSync(`${file}.tmp`, file);
          if (round === 0) r.paths.push(file);
        }
        r.seconds.push((performance.now() - start) / 1000);
        for (const [key] of parts) hash.update(fs.readFileSync(path.join(dir, key, 'part-0.parquet')));
        digests.push(hash.digest('hex'));
        r.bytes = bytes;
        if (round > 0) fs.rmSync(dir, { recursive: true });
      }
      r.deterministic = digests.every((h) => h === digests[0]);
      result.datasets[d.spec.name] = r;
    }
  }
  return { ...result, hwmKB: hwmKB() };
}

function runChild(job: Parameters<typeof child>[0]): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [__filename, '--child', JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildResult) : reject(new Error(`${job.name} ${job.codec}: exit ${code}`))));
  });
}

interface Inspected { rows: number; created_by: string; columns: Record<string, { logical: string; nulls: number; sum: number | string }> }

/** The differences between what pyarrow reads back and what was written (empty when none). */
function check(python: string[], r: DatasetResult): { problems: string[]; timestamp: string } {
  const got = JSON.parse(execFileSync(python[0]!, [...python.slice(1), path.join(packageRoot(), 'scripts', 'parquet-inspect.py'), ...r.paths],
    { encoding: 'utf8', maxBuffer: 64 << 20 })) as Inspected;
  const problems: string[] = [];
  if (got.rows !== r.rows) problems.push(`rows ${got.rows} != ${r.rows}`);
  for (const [name, want] of Object.entries(r.expected)) {
    const c = got.columns[name];
    if (!c) { problems.push(`${name} missing`); continue; }
    if (c.nulls !== want.nulls) problems.push(`${name} nulls ${c.nulls} != ${want.nulls}`);
    const same = typeof want.sum === 'number' ? Math.abs(Number(c.sum) - want.sum) <= 1e-9 * Math.max(1, Math.abs(want.sum)) : String(c.sum) === want.sum;
    if (!same) problems.push(`${name} sum ${c.sum} != ${want.sum}`);
  }
  const time = Object.values(got.columns).find((c) => c.logical.startsWith('Timestamp'));
  const ts = /isAdjustedToUTC=(\w+), timeUnit=(\w+)/.exec(time?.logical ?? '');
  return { problems, timestamp: ts ? `${ts[2]}${ts[1] === 'true' ? ', UTC' : ''}` : '?' };
}

async function main(): Promise<void> {
  const { values } = parseFlags({
    options: {
      db: { type: 'string' }, rounds: { type: 'string' }, modules: { type: 'string' }, python: { type: 'string' },
      only: { type: 'string' }, child: { type: 'string' },
    },
  });
  if (values.child) {
    process.stdout.write(JSON.stringify(await child(JSON.parse(values.child) as Parameters<typeof child>[0])));
    return;
  }
  const db = path.resolve(values.db ?? path.join(packageRoot(), 'bench', 'out', 'builds-2x365x15x5.db'));
  if (!fs.existsSync(db)) { console.error(`bench export-libs: --db ${db}: no such file (make it with npm run bench:builds)`); process.exit(2); }
  const rounds = numberFlag('rounds', values.rounds, 3, 'positive integer');
  const modules = path.resolve(values.modules ?? packageRoot());
  const python = (values.python ?? `${path.join(packageRoot(), 'scripts', 'python-env.sh')} python`).split(/\s+/);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'export-libs-'));
  console.log(machineLine());
  console.log(`db ${db}; ${rounds} rounds; candidates from ${modules}/node_modules; files under ${out}`);

  const base = await runChild({ name: 'read only', codec: '-', db, rounds, out, modules });
  console.log(`read only: rows read from SQLite in ${base.readSeconds.toFixed(2)} s, peak RSS ${fmt(base.hwmKB / 1024)} MB\n`);
  console.log('| library | codec | dataset | rows | files | rows/s (median) | seconds per round | peak RSS MB | over read-only MB | MB on disk | same bytes | pyarrow | timestamps as |');
  console.log('|---|---|---|---:|---:|---:|---|---:|---:|---:|---|---|---|');
  for (const c of candidates.filter((x) => !values.only || x.name === values.only)) {
    for (const codec of c.codecs) {
      const jobOut = path.join(out, `${c.name.replace(/[^a-z0-9]+/gi, '-')}-${codec}`);
      const r = await runChild({ name: c.name, codec, db, rounds, out: jobOut, modules });
      if (r.notInstalled) { console.log(`| ${c.name} | ${codec} | not installed: \`${r.notInstalled}\` |`); break; }
      for (const [name, d] of Object.entries(r.datasets)) {
        const { problems, timestamp } = check(python, d);
        console.log(`| ${c.name} | ${codec} | ${name} | ${fmt(d.rows)} | ${d.files} | ${fmt(d.rows / median(d.seconds))} | ${d.seconds.map((s) => s.toFixed(2)).join(', ')} | `
          + `${fmt(r.hwmKB / 1024)} | ${fmt((r.hwmKB - base.hwmKB) / 1024)} | ${fmt(d.bytes / 1024 ** 2, 1)} | ${d.deterministic ? 'yes' : 'no'} | `
          + `${problems.length ? problems.join('; ') : 'same rows, nulls, sums'} | ${timestamp} |`);
      }
      fs.rmSync(jobOut, { recursive: true, force: true });
    }
  }
  fs.rmSync(out, { recursive: true, force: true });
}

void main().catch((e: unknown) => { console.error(e); process.exit(1); });
