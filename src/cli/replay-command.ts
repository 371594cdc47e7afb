import fs from 'node:fs';
import { DEAD_LETTERS_NAMED, fileSource, replayInThread, ReplayThreadError, type ReplayTotals } from '../ingest';
import { openDb, SourcePositions, type Db } from '../store';
import { boolFlag, intFlag, requireString, UsageError, type Command, type FlagTable, type Parsed } from './flags';
import { Progress, totalSize } from './progress';
import { onStopSignal, type StopSignal } from './stop-signals';

const FLAGS = {
  db: { type: 'string', value: 'FILE', env: 'VISIBILITY_DB', shows: 'required', help: 'the database to write (created when missing, an older schema migrated first)' },
  'batch-size': { type: 'int', value: 'N', env: 'BATCH_SIZE', default: 1000, min: 1, max: 100_000, help: 'events per transaction: a stop keeps every whole batch, a re-run resumes after it' },
  'from-start': { type: 'boolean', help: 'read every line again instead of resuming after the last one applied from the same file' },
  quiet: { type: 'boolean', help: 'no progress line on a terminal: only the summary' },
  strict: { type: 'boolean', help: 'exit 1 when a line was dead-lettered or a file changed in its part already applied (both are reported on stderr either way)' },
} satisfies FlagTable;

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

/**
 * On stderr, for the person who has to fix them: each line set aside (the first DEAD_LETTERS_NAMED,
 * then a count), and each file whose part already applied has changed since (a plain re-run skips it).
 */
function problems(t: ReplayTotals, dbFile: string): string[] {
  const lines = t.deadLetters.map((d) =>
    `visibility-api replay: ${d.file}:${d.line}: dead-lettered${d.eventId !== null ? ` (event ${d.eventId})` : ''}: ${d.reason}: ${d.detail}`);
  const more = t.deadLettered - t.deadLetters.length;
  if (more > 0) lines.push(`visibility-api replay: ${more} more line(s) dead-lettered (the first ${DEAD_LETTERS_NAMED} are named above)`);
  if (t.deadLettered > 0) {
    lines.push(`visibility-api replay: ${t.deadLettered} line(s) set aside, not applied: \`visibility-api dead-letters --db ${dbFile}\` lists them; ` +
      'once fixed in the file, run replay again with --from-start to apply them');
  }
  for (const c of t.changed) {
    lines.push(`visibility-api replay: ${c.file} changed in its first ${c.lines} line(s) since they were applied; ` +
      'they were skipped as already applied: run replay again with --from-start to apply the file as it is now');
  }
  return lines;
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

async function replayCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  const dbFile = requireString(p, 'db');
  const batchSize = intFlag(p, 'batch-size');
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
    const progress = new Progress({ label: 'replay', unit: 'events', totalBytes: totalSize(p.positionals), quiet: boolFlag(p, 'quiet') });
    try {
      // The writing happens in a thread with a capped heap (src/ingest/replay-thread.ts): RSS stays flat.
      const replay = replayInThread(
        { dbFile, files: p.positionals, batchSize, fromStart: boolFlag(p, 'from-start'), maxPageCount: pages },
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
      const found = problems(totals, dbFile);
      for (const line of found) console.error(line);
      return found.length > 0 && boolFlag(p, 'strict') ? 1 : 0;
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

export const command: Command<typeof FLAGS> = {
  synopsis: '--db FILE [flags] EVENTS.ndjson[.gz]...',
  flags: FLAGS,
  env: [{ env: 'VISIBILITY_MAX_PAGE_COUNT', default: '(none)', help: "a cap on the database's size in pages: past it a write fails as on a full disk" }],
  run: replayCommand,
};
