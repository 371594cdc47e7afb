// npm run bench:export [-- --days N --rounds N]
// `visibility-api export` on the build benches' world (2 projects x 5 engines x 15 prompts, a run per
// prompt and engine a day; 365 days by default), as an operator runs it, in one run:
//   1. full: the world but its last day replayed into a database, exported into a new directory, as a
//      child process: wall time (start-up included), the time the command reports for the export
//      itself, rows/s, peak RSS (VmHWM polled every 50 ms) and the files' size on disk;
//   2. incremental: the last day's events replayed into a copy of that database, then exported into a
//      copy of the full export's directory: only the months they touched are written. Its time as a
//      fraction of the full export's, both measured in this run.
// Each figure is the median of --rounds rounds (3 by default). Exits non-zero only on errors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/lib/root';
import type { Manifest } from '../../src/export';
import { fmt, machineLine } from '../lib/machine';
import { numberFlag, parseFlags } from '../lib/bench-flags';
import { buildsWorldOptions, median, runCliMeasured, writeLog } from '../lib/lib';

const { values } = parseFlags({ options: { days: { type: 'string' }, rounds: { type: 'string' } } });
const DAYS = numberFlag('days', values.days, 365, 'positive integer');
const ROUNDS = numberFlag('rounds', values.rounds, 3, 'positive integer');
const OUT = path.join(packageRoot(), 'bench', 'out');

/** The log split at its last day (by occurred_at): the history, and the day that arrives after an export. */
function splitLog(log: string): { history: string; lastDay: string; day: string } {
  const history = `${log}.history`;
  const day = `${log}.last-day`;
  const lines = fs.readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
  const dayOf = (l: string): string => (JSON.parse(l) as { occurred_at: string }).occurred_at.slice(0, 10);
  const lastDay = lines.reduce((m, l) => (dayOf(l) > m ? dayOf(l) : m), '');
  if (!fs.existsSync(history) || !fs.existsSync(day)) {
    fs.writeFileSync(history, lines.filter((l) => dayOf(l) < lastDay).join('\n') + '\n');
    fs.writeFileSync(day, lines.filter((l) => dayOf(l) >= lastDay).join('\n') + '\n');
  }
  return { history, lastDay, day };
}

/** Bytes of every file under a directory. */
function sizeOf(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? sizeOf(p) : fs.statSync(p).size;
  }
  return n;
}

/** The seconds the export reports for itself (its summary line: "... in 1.2 s"), without the process's start-up. */
const ownSeconds = (stdout: string): number => Number(/ in ([\d.]+) s;/.exec(stdout)?.[1] ?? NaN);

interface Pass { wall: number; own: number; peakMb: number; rows: number; partitions: number; bytes: number; datasets: string }

async function exportOnce(db: string, out: string): Promise<Pass> {
  const r = await runCliMeasured(['export', '--db', db, '--out', out, '--quiet']);
  const m = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as Manifest;
  return {
    wall: r.seconds, own: ownSeconds(r.stdout), peakMb: r.peakKb / 1024, rows: m.last_run.rows_written,
    partitions: m.last_run.partitions_written, bytes: sizeOf(out),
    datasets: m.datasets.map((d) => `${d.name} ${fmt(d.rows)}`).join(', '),
  };
}

async function main(): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  const log = path.join(OUT, `builds-2x${DAYS}x15x5.ndjson`);
  await writeLog(log, buildsWorldOptions(DAYS));
  const { history, lastDay, day } = splitLog(log);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-export-'));
  try {
    const base = path.join(work, 'history.db');
    console.log(`replaying ${path.basename(history)} (all but ${lastDay}) ...`);
    await runCliMeasured(['replay', '--db', base, '--quiet', history]);
    const full: Pass[] = [];
    const incremental: Pass[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const out = path.join(work, `full-${round}`);
      full.push(await exportOnce(base, out));
      // The next day arrives: a copy of the database takes it, a copy of the export follows it.
      const db = path.join(work, `next-${round}.db`);
      fs.copyFileSync(base, db);
      await runCliMeasured(['replay', '--db', db, '--quiet', day]);
      const next = path.join(work, `next-${round}`);
      fs.cpSync(out, next, { recursive: true });
      incremental.push(await exportOnce(db, next));
      fs.rmSync(db, { force: true });
      for (const d of [out, next]) fs.rmSync(d, { recursive: true, force: true });
      console.log(`round ${round + 1}/${ROUNDS}: full ${full.at(-1)!.own.toFixed(2)} s, incremental ${incremental.at(-1)!.own.toFixed(2)} s`);
    }
    const m = (xs: Pass[], f: (p: Pass) => number): number => median(xs.map(f));
    const fullOwn = m(full, (p) => p.own);
    const incOwn = m(incremental, (p) => p.own);
    const text = [
      `### export of the ${DAYS}-day bench world (${ROUNDS} rounds, medians)`,
      '',
      machineLine(),
      '',
      '| export | wall s (start-up incl.) | export s | rows | rows/s | partitions written | peak RSS MB | size on disk MB |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      `| full (${DAYS - 1} days) | ${fmt(m(full, (p) => p.wall), 2)} | ${fmt(fullOwn, 2)} | ${fmt(full[0]!.rows)} | ${fmt(full[0]!.rows / fullOwn)} | ${full[0]!.partitions} | ${fmt(m(full, (p) => p.peakMb))} | ${fmt(full[0]!.bytes / 1024 / 1024, 1)} |`,
      `| incremental (+1 day: ${lastDay}) | ${fmt(m(incremental, (p) => p.wall), 2)} | ${fmt(incOwn, 2)} | ${fmt(incremental[0]!.rows)} | ${fmt(incremental[0]!.rows / incOwn)} | ${incremental[0]!.partitions} | ${fmt(m(incremental, (p) => p.peakMb))} | ${fmt(incremental[0]!.bytes / 1024 / 1024, 1)} |`,
      '',
      `Rows in the export: ${full[0]!.datasets}; the day added ${fmt(fs.readFileSync(day, 'utf8').split('\n').filter((l) => l !== '').length)} events.`,
      '',
      `Incremental / full: ${fmt(incOwn / fullOwn, 3)} of the export's own time, ${fmt(m(incremental, (p) => p.wall) / m(full, (p) => p.wall), 3)} of the wall time (start-up included).`,
    ].join('\n');
    console.log(`\n${text}`);
    fs.writeFileSync(path.join(OUT, 'export.md'), text + '\n');
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
