import fs from 'node:fs';
import { writeSnapshot } from '../store';
import { boolFlag, requireString, UsageError, type Command, type FlagTable, type Parsed } from './flags';
import { Progress } from './progress';

const FLAGS = {
  db: { type: 'string', value: 'FILE', env: 'VISIBILITY_DB', shows: 'required', help: 'the database to copy (a writer may keep writing to it meanwhile)' },
  force: { type: 'boolean', help: 'overwrite OUT when it exists' },
  quiet: { type: 'boolean', help: 'no progress line on a terminal: only the summary' },
} satisfies FlagTable;

/**
 * A consistent copy of a live database (SQLite's online backup: the writer keeps going), offsets
 * included, so another replica can start from it and resume consuming where it stops.
 */
async function snapshotCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  const file = requireString(p, 'db');
  const out = p.positionals[0];
  if (!out || p.positionals.length > 1) throw new UsageError('snapshot needs exactly one output file');
  if (fs.existsSync(out) && !boolFlag(p, 'force')) throw new UsageError(`${out} exists (use --force to overwrite)`);
  const progress = new Progress({ label: 'snapshot', unit: 'pages', totalBytes: fs.existsSync(file) ? fs.statSync(file).size : 0, quiet: boolFlag(p, 'quiet') });
  try {
    await writeSnapshot(file, out, (copied, _total, pageSize) => progress.update(copied, copied * pageSize));
  } finally {
    progress.clear();
  }
  console.log(`snapshot of ${file} written to ${out} (${(fs.statSync(out).size / 1024 / 1024).toFixed(1)} MiB)`);
  return 0;
}

export const command: Command<typeof FLAGS> = { synopsis: '--db FILE [flags] OUT', flags: FLAGS, run: snapshotCommand };
