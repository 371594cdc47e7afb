import fs from 'node:fs';
import { writeSnapshot } from '../store';
import { parse, requireString, UsageError } from './args';
import { Progress } from './progress';

/**
 * A consistent copy of a live database (SQLite's online backup: the writer keeps going), offsets
 * included, so another replica can start from it and resume consuming where it stops.
 */
export async function snapshotCommand(argv: string[]): Promise<number> {
  const p = parse(argv, { db: { type: 'string' }, force: { type: 'boolean' }, quiet: { type: 'boolean' } }, { db: 'VISIBILITY_DB' });
  const file = requireString(p, 'db');
  const out = p.positionals[0];
  if (!out || p.positionals.length > 1) throw new UsageError('snapshot needs exactly one output file');
  if (fs.existsSync(out) && p.values.force !== true) throw new UsageError(`${out} exists (use --force to overwrite)`);
  const progress = new Progress({ label: 'snapshot', unit: 'pages', totalBytes: fs.existsSync(file) ? fs.statSync(file).size : 0, quiet: p.values.quiet === true });
  try {
    await writeSnapshot(file, out, (copied, _total, pageSize) => progress.update(copied, copied * pageSize));
  } finally {
    progress.clear();
  }
  console.log(`snapshot of ${file} written to ${out} (${(fs.statSync(out).size / 1024 / 1024).toFixed(1)} MiB)`);
  return 0;
}
