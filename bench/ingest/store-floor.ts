// The floor under any replay of a log on this host: what SQLite alone costs to store its runs, with
// nothing decoded or aggregated while timed. Part of `npm run bench:ingest` (bench/ingest/ingest.ts).
// Each run event is decoded and precomputed first (not timed); then, 1,000 runs a transaction, with the
// settings replay uses (WAL, synchronous = OFF, 16 KiB pages), into a fresh file on disk:
//   - its row as replay stores it (RunStore.apply: runs with its two indexes and its keys; run ids
//     held in memory, as replay holds them until its flush);
//   - a minimal row keeping the event: (INTEGER PRIMARY KEY, event TEXT), no index.
// The timed part is the transaction call: BEGIN, the inserts, COMMIT.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readLines } from '../../src/ingest';
import { openDb, precomputeEvent, type Db } from '../../src/store';
import { RunStore, type PrecomputedRun } from '../../src/store/run-store';
import type { Version } from '../../src/store/versions';

export const PER_TRANSACTION = 1000;

export interface StoreFloor {
  runs: number;
  /** us per run: its row as replay stores it. */
  row: number;
  /** us per run: the minimal row (an integer key and the event). */
  minimal: number;
}

interface Pending { run: PrecomputedRun; v: Version; line: string }

function freshDb(dir: string, name: string): Db {
  const db = openDb(path.join(dir, name), { fast: true });
  db.pragma('synchronous = OFF');
  return db;
}

export async function storeFloor(file: string): Promise<StoreFloor> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-floor-'));
  const dbs = [freshDb(dir, 'rows.db'), freshDb(dir, 'minimal.db')] as const;
  try {
    const [rowsDb, minimalDb] = dbs;
    const store = new RunStore(rowsDb);
    minimalDb.exec('CREATE TABLE minimal_runs (id INTEGER PRIMARY KEY, event TEXT NOT NULL)');
    const insertMinimal = minimalDb.prepare('INSERT INTO minimal_runs (event) VALUES (?)');
    const writeRows = rowsDb.transaction((batch: Pending[]) => {
      for (const p of batch) store.apply(p.run, p.v);
    });
    const writeMinimal = minimalDb.transaction((batch: Pending[]) => {
      for (const p of batch) insertMinimal.run(p.line);
    });
    let rowMs = 0;
    let minimalMs = 0;
    let runs = 0;
    const timed = (write: (b: Pending[]) => void, batch: Pending[]): number => {
      const started = performance.now();
      write(batch);
      return performance.now() - started;
    };
    const flush = (batch: Pending[]): void => {
      rowMs += timed(writeRows, batch);
      minimalMs += timed(writeMinimal, batch);
      runs += batch.length;
    };
    let batch: Pending[] = [];
    for await (const line of readLines(file)) {
      const e = precomputeEvent({ raw: line, source: 'file:floor', position: 0 });
      if (!e.ok || !e.run) continue;
      batch.push({ run: e.run, v: e.version, line });
      if (batch.length === PER_TRANSACTION) {
        flush(batch);
        batch = [];
      }
    }
    if (batch.length > 0) flush(batch);
    return { runs, row: (rowMs * 1000) / runs, minimal: (minimalMs * 1000) / runs };
  } finally {
    for (const db of dbs) db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
