// Temporary folders and databases, removed when the test (or the test process) ends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, Projector, type Db } from '../../src/store';
import { asSource, type Ev } from './events';

const made: string[] = [];

/**
 * A fresh folder in the temporary directory, removed when this test process exits: the suite writes
 * gigabytes of databases per run, and a machine that runs it often must not fill its disk.
 */
export function tmpDir(prefix = 'vis-'): string {
  if (made.length === 0) process.once('exit', () => {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function tmpDb(): { db: Db; projector: Projector; file: string } {
  const file = path.join(tmpDir(), 'test.db');
  const db = openDb(file, { fast: true });
  return { db, projector: new Projector(db), file };
}

/** A fresh database for one test, closed and removed when the test ends. */
export function freshDb(tt: { teardown(fn: () => void): void }): { db: Db; projector: Projector; file: string } {
  const { db, projector, file } = tmpDb();
  tt.teardown(() => {
    db.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
  return { db, projector, file };
}

/** A database at `file` with `batches` applied, one batch a transaction, and settled: the writer's rows as a replay in those batches leaves them. */
export function projectBatches(file: string, batches: Ev[][]): Db {
  const db = openDb(file);
  const projector = new Projector(db);
  let at = 1;
  for (const b of batches) {
    projector.applyBatch(asSource(b, 'test', at));
    at += b.length;
  }
  projector.settle();
  return db;
}
