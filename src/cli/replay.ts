import fs from 'node:fs';
import { fileSource, replayInThread, ReplayThreadError, type ReplayTotals } from '../ingest';
import { openDb, SourcePositions, type Db } from '../store';
import { intFlag, parse, requireString, UsageError } from './args';
import { Progress, totalSize } from './progress';
import { onStopSignal, type StopSignal } from './signals';

function counts(t: ReplayTotals): string {
  return `${t.applied} applied, ${t.duplicate} duplicate, ${t.stale} stale (superseded), ${t.deadLettered} dead-lettered, ${t.skipped} lines skipped (already applied)`;
}

/**
 * VISIBILITY_MAX_PAGE_COUNT: an optional cap on the database's size in pages (SQLite's
 * max_page_count). Past it a write fails as on a full disk: how the tests fill the disk, and a
 * size guard for operators. Deliberately not a flag: it is rarely wanted.
 */
function maxPageCount(): number | undefined {
  const v = process.env.VISIBILITY_MAX_PAGE_COUNT;
  if (v === undefined || v === '') return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`VISIBILITY_MAX_PAGE_COUNT must be a positive integer, got "${v}"`);
  return n;
}

/** Where a re-run will continue: the last of `files` with a committed line, and its next line. */
function resumePoint(db: Db, files: string[]): string {
  const positions = new SourcePositions(db);
  for (let i = files.length - 1; i >= 0; i -= 1) {
    const next = positions.nextOf(fileSource(files[i]!));
    if (next !== undefined) return `line ${next} of ${files[i]} is next`;
  }
  return 'nothing was committed';
}

export async function replayCommand(argv: string[]): Promise<number> {
  const p = parse(argv, {
    db: { type: 'string' }, 'batch-size': { type: 'string' }, 'from-start': { type: 'boolean' }, quiet: { type: 'boolean' },
  }, { db: 'VISIBILITY_DB', 'batch-size': 'BATCH_SIZE' });
  const dbFile = requireString(p, 'db');
  const batchSize = intFlag(p, 'batch-size', 1000, 1, 100_000);
  if (p.positionals.length === 0) throw new UsageError('replay needs at least one events file');
  for (const f of p.positionals) if (!fs.existsSync(f) || !fs.statSync(f).isFile()) throw new UsageError(`events file not found: ${f}`);
  const pages = maxPageCount();

  // SIGTERM/SIGINT: the replay thread is told to stop; it commits what is in hand at its next batch,
  // closes, and this exits 0; a re-run resumes there. A second signal exits at once: nothing is lost
  // either way, the last commit stands (a batch's transaction is all or nothing).
  let stopSignal: StopSignal | null = null;
  let stopReplay = (): void => undefined;
  const removeHandlers = onStopSignal('replay', 'stopping at once; lines not yet committed are read again by the next run', (signal) => {
    stopSignal = signal;
    stopReplay();
  });
  try {
    // Opened here first: a file that is not a database, or an old schema, fails before any thread starts.
    const db = openDb(dbFile, { fast: true, maxPageCount: pages });
    const started = Date.now();
    const progress = new Progress({ label: 'replay', unit: 'events', totalBytes: totalSize(p.positionals), quiet: p.values.quiet === true });
    try {
      // The writing happens in a thread with a capped heap (src/ingest/replay-thread.ts): RSS stays flat.
      const replay = replayInThread(
        { dbFile, files: p.positionals, batchSize, fromStart: p.values['from-start'] === true, maxPageCount: pages },
        (lines, skipped, bytes) => progress.update(lines - skipped, bytes),
      );
      stopReplay = () => replay.stop();
      if (stopSignal) replay.stop();
      const totals = await replay.done;
      progress.clear();
      const secs = ((Date.now() - started) / 1000).toFixed(2);
      if (totals.stopped) {
        console.log(`replay interrupted by ${stopSignal ?? 'a signal'} after ${secs} s: ${counts(totals)}; ` +
          `line ${totals.stopped.nextLine} of ${totals.stopped.file} is next: run the same command again to continue`);
      } else {
        console.log(`replayed ${p.positionals.length} file(s) in ${secs} s: ${counts(totals)}`);
      }
      return 0;
    } catch (e) {
      progress.clear();
      if (e instanceof ReplayThreadError && e.sourceFile !== undefined) {
        console.error(`visibility-api replay: ${e.message}; ${resumePoint(db, p.positionals)}: re-run to continue once resolved`);
        return 1;
      }
      const code = (e as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_')) throw e;
      // The failed batch was rolled back whole: the file holds every batch before it, consistent.
      const what = code.startsWith('SQLITE_FULL') ? `database or disk is full: ${dbFile}` : `database error on ${dbFile}: ${(e as Error).message} (${code})`;
      console.error(`visibility-api replay: ${what}; ${resumePoint(db, p.positionals)}: re-run to continue once resolved`);
      return 1;
    } finally {
      db.close();
    }
  } finally {
    removeHandlers();
  }
}
