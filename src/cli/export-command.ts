import { exportInThread, ExportError } from '../export';
import { onStopSignal } from './stop-signals';
import { boolFlag, requireString, stringFlag, UsageError, type Command, type FlagTable, type Parsed } from './flags';
import { Progress } from './progress';

const FLAGS = {
  db: { type: 'string', value: 'FILE', env: 'VISIBILITY_DB', shows: 'required', help: 'the database to export (read-only; `serve` may keep writing to it meanwhile)' },
  out: { type: 'string', value: 'DIR', env: 'EXPORT_OUT', shows: 'required', help: 'the export directory: new, empty, or one this command wrote before (then only what changed is written)' },
  project: { type: 'string', value: 'IDS', env: 'EXPORT_PROJECTS', shows: 'every project', help: 'only these projects (their ids, comma-separated)' },
  'start-date': { type: 'string', value: 'DAY', shows: 'the first day', help: 'only data of this UTC day (YYYY-MM-DD) and later' },
  'end-date': { type: 'string', value: 'DAY', shows: 'the last day', help: 'only data of this UTC day (YYYY-MM-DD) and earlier' },
  full: { type: 'boolean', help: 'write everything again (and the only way to change what a directory holds: projects, dates)' },
  quiet: { type: 'boolean', help: 'no progress line on a terminal: only the summary' },
} satisfies FlagTable;

/** A flag's day, checked: 'YYYY-MM-DD' naming a real day. */
function dayFlag(p: Parsed<typeof FLAGS>, name: 'start-date' | 'end-date'): string | null {
  const v = stringFlag(p, name);
  if (v === undefined) return null;
  // A day past the month's end rolls over (2026-02-30 is 2026-03-02); one past the year's is no date at all.
  const at = new Date(`${v}T00:00:00.000Z`);
  if (!/^\d{4}-\d\d-\d\d$/.test(v) || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== v) {
    throw new UsageError(`--${name} must be a day as YYYY-MM-DD, not "${v}"`);
  }
  return v;
}

/**
 * Parquet files of a database for warehouses and notebooks (docs/export.md). An operator's tool: it
 * reads every account's data the file holds, so what it writes goes to whoever the operator gives it.
 */
async function exportCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  const db = requireString(p, 'db');
  const out = requireString(p, 'out');
  if (p.positionals.length > 0) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const projectList = stringFlag(p, 'project');
  const projects = projectList === undefined ? null : projectList.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (projects !== null && projects.length === 0) throw new UsageError('--project needs at least one project id');
  const range = { start: dayFlag(p, 'start-date'), end: dayFlag(p, 'end-date') };
  if (range.start !== null && range.end !== null && range.start > range.end) throw new UsageError(`--start-date ${range.start} is after --end-date ${range.end}`);

  const progress = new Progress({ label: 'export', unit: 'rows', totalBytes: 0, quiet: boolFlag(p, 'quiet') });
  let signal: string | null = null;
  // The export runs in a thread with a capped heap (src/export/export-thread.ts): RSS stays bounded.
  let run: ReturnType<typeof exportInThread> | null = null;
  // SIGTERM/SIGINT: the month in hand is finished, the previous manifest stays; a second signal exits at once.
  const removeHandlers = onStopSignal('export', 'stopping at once; the previous manifest still describes the directory', (s) => {
    signal = s;
    run?.stop();
  });
  try {
    run = exportInThread({ db, out, projects, range, full: boolFlag(p, 'full') }, (x) => {
      // The share done is by partitions: the rows of those to come are known only as they are read.
      progress.setTotal(x.partitionsPlanned);
      progress.update(x.rows, x.partitionsDone);
    });
    const r = await run.done;
    progress.clear();
    const summary = `${r.partitionsWritten} partition(s) written (${r.rowsWritten.toLocaleString('en-US')} rows, ${(r.bytesWritten / 1024 / 1024).toFixed(1)} MiB), ${r.partitionsRemoved} removed, in ${r.seconds.toFixed(2)} s`;
    if (r.stopped) {
      console.log(`export interrupted by ${signal ?? 'a signal'}: ${summary}; the manifest is the previous one: run the same command again to finish`);
      return 0;
    }
    console.log(`export (${r.mode}) of ${db} to ${out}: ${summary}; manifest.json names ${r.manifest!.datasets.reduce((n, d) => n + d.partitions.length, 0)} partition(s)`);
    return 0;
  } catch (e) {
    progress.clear();
    if (e instanceof ExportError) throw new UsageError(e.message);
    throw e;
  } finally {
    removeHandlers();
  }
}

export const command: Command<typeof FLAGS> = {
  synopsis: '--db FILE --out DIR [flags]',
  flags: FLAGS,
  notes: [
    "An operator's tool: it reads every account's data in the file. Give a customer only an export made with",
    '--project naming their projects. Layout, columns and the incremental rules: docs/export.md.',
  ],
  run: exportCommand,
};
