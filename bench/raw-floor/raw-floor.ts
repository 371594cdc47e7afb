// node dist/bench/raw-floor/raw-floor.js --db FILE LOG: the least any durable replay of LOG does, as a process
// of its own (bench/ingest/ingest.ts spawns it as it spawns replay, and measures both the same way).
// Two threads overlap: the preparing thread (raw-floor.worker.ts) reads the lines, parses and validates
// each with decodeEvent; this thread stores each valid event as read, keyed by its event id (a
// duplicate id is stored once), PER_TRANSACTION rows a transaction, into a fresh file opened as
// replay's writer opens it (openDb fast + noSync: WAL, synchronous = OFF, 16 KiB pages, its cache and
// checkpoint size) and closed as it closes it (closeDurably). No read model, no aggregate.
// Prints one JSON line: lines read, valid events, invalid ones, rows inserted and rows counted after.
import { startWorker } from '../../src/lib/worker';
import { closeDurably, openDb } from '../../src/store';
import { orExit, parseFlags } from '../lib/bench-flags';
import { PER_TRANSACTION } from '../ingest/store-floor';

/** Batches in flight between the threads (prepared, not yet written): replay's file thread allows as many. */
export const CREDITS = 2;

export interface FloorJob { file: string; perTransaction: number; credits: number }

/** One transaction's events: their bytes end to end (`ends[i]`: where event i ends), their ids joined by \n. */
export interface RawBatch { ids: string; bytes: ArrayBuffer; ends: Uint32Array; lines: number; invalid: number; done: boolean }

/** What the floor reports (its one line of stdout). */
export interface FloorCounts { lines: number; valid: number; invalid: number; inserted: number; rows: number }

function main(): void {
  const { values, positionals } = parseFlags({ options: { db: { type: 'string' } }, allowPositionals: true });
  const dbFile = orExit(() => {
    if (values.db === undefined || positionals.length !== 1) throw new Error('usage: raw-floor --db FILE LOG (one log)');
    return values.db;
  });
  const db = openDb(dbFile, { fast: true, noSync: true });
  db.exec('CREATE TABLE raw_events (event_id TEXT PRIMARY KEY, event TEXT NOT NULL)');
  const insert = db.prepare('INSERT OR IGNORE INTO raw_events (event_id, event) VALUES (?, ?)');
  const counts: FloorCounts = { lines: 0, valid: 0, invalid: 0, inserted: 0, rows: 0 };
  const write = db.transaction((b: RawBatch) => {
    const ids = b.ids === '' ? [] : b.ids.split('\n');
    const bytes = Buffer.from(b.bytes);
    let start = 0;
    ids.forEach((id, i) => {
      counts.inserted += insert.run(id, bytes.subarray(start, b.ends[i])).changes;
      start = b.ends[i]!;
    });
    counts.valid += ids.length;
  });
  const worker = startWorker(__filename, { file: positionals[0]!, perTransaction: PER_TRANSACTION, credits: CREDITS } satisfies FloorJob);
  worker.on('message', (b: RawBatch) => {
    write(b);
    if (!b.done) return void worker.postMessage('more');
    counts.lines = b.lines;
    counts.invalid = b.invalid;
    counts.rows = db.prepare('SELECT count(*) FROM raw_events').pluck().get() as number;
    closeDurably(db);
    process.stdout.write(`${JSON.stringify(counts)}\n`);
    void worker.terminate();
  });
  worker.on('error', (e) => {
    console.error(e);
    process.exit(1);
  });
}

if (require.main === module) main();
