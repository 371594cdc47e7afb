import fs from 'node:fs';
import { replayFiles, type ReplayTotals } from '../ingest';
import { openDb, Projector } from '../store';
import { intFlag, parse, requireString, UsageError } from './args';


function progressLine(t: ReplayTotals, started: number): string {
  const secs = (Date.now() - started) / 1000;
  return `${t.lines} lines, ${t.applied} applied, ${t.duplicate + t.stale} unchanged, ${t.deadLettered} dead letters, ${Math.round(t.lines / Math.max(secs, 0.001))} lines/s`;
}

export async function replayCommand(argv: string[]): Promise<number> {
  const p = parse(argv, {
    db: { type: 'string' }, 'batch-size': { type: 'string' }, 'from-start': { type: 'boolean' },
  }, { db: 'VISIBILITY_DB', 'batch-size': 'BATCH_SIZE' });
  const dbFile = requireString(p, 'db');
  const batchSize = intFlag(p, 'batch-size', 1000, 1, 100_000);
  if (p.positionals.length === 0) throw new UsageError('replay needs at least one events file');
  for (const f of p.positionals) if (!fs.existsSync(f) || !fs.statSync(f).isFile()) throw new UsageError(`events file not found: ${f}`);
  const db = openDb(dbFile, { fast: true });
  const started = Date.now();
  const tty = process.stderr.isTTY;
  let lastPrint = 0;
  try {
    const totals = await replayFiles(db, new Projector(db), p.positionals, {
      batchSize,
      fromStart: p.values['from-start'] === true,
      onBatch: (t) => {
        if (!tty || Date.now() - lastPrint < 250) return;
        lastPrint = Date.now();
        process.stderr.write(`\r${progressLine(t, started)}   `);
      },
    });
    if (tty) process.stderr.write('\r\x1b[K');
    const secs = (Date.now() - started) / 1000;
    console.log(`replayed ${p.positionals.length} file(s) in ${secs.toFixed(2)} s: ${totals.applied} applied, ${totals.duplicate} duplicate, ` +
      `${totals.stale} stale (superseded), ${totals.deadLettered} dead-lettered, ${totals.skipped} lines skipped (already applied)`);
    return 0;
  } finally {
    db.close();
  }
}
