import fs from 'node:fs';
import { openDb } from '../store';
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
  // Read-only: a missing, empty, foreign, newer or damaged file is a DbOpenError naming it (one line, exit 2).
  const db = openDb(file, { readonly: true });
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const progress = new Progress({ label: 'snapshot', unit: 'pages', totalBytes: fs.statSync(file).size, quiet: p.values.quiet === true });
  try {
    fs.rmSync(out, { force: true });
    await db.backup(out, {
      progress: ({ totalPages, remainingPages }) => {
        progress.update(totalPages - remainingPages, (totalPages - remainingPages) * pageSize);
        return 100; // pages per step (better-sqlite3's default), so the line moves on large files
      },
    });
  } finally {
    progress.clear();
    db.close();
  }
  console.log(`snapshot of ${file} written to ${out} (${(fs.statSync(out).size / 1024 / 1024).toFixed(1)} MiB)`);
  return 0;
}
