import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { packageRoot } from '../lib/root';

export type Db = Database.Database;

export interface OpenOptions {
  readonly?: boolean;
  /** Bulk replay: fewer fsyncs. WAL + synchronous=NORMAL is still crash-safe, only the last commits may be lost. */
  fast?: boolean;
}

/** Numbered SQL files in src/store/migrations, applied in order; PRAGMA user_version is the number applied last. */
function migrations(): Array<{ version: number; file: string }> {
  const dir = path.join(packageRoot(), 'src/store/migrations');
  return fs.readdirSync(dir).filter((f) => /^\d+_.*\.sql$/.test(f)).sort()
    .map((f) => ({ version: Number.parseInt(f, 10), file: path.join(dir, f) }));
}

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const m of migrations()) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(fs.readFileSync(m.file, 'utf8'));
      db.pragma(`user_version = ${m.version}`);
    })();
  }
}

export function openDb(file: string, opts: OpenOptions = {}): Db {
  if (opts.readonly && !fs.existsSync(file)) throw new Error(`database not found: ${file}`);
  const db = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
  db.pragma('busy_timeout = 5000');
  if (!opts.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${opts.fast ? 'NORMAL' : 'FULL'}`);
    // Random uuid keys touch index pages all over: a large page cache keeps ingestion off the disk.
    db.pragma(`cache_size = ${opts.fast ? -524288 : -131072}`);
    migrate(db);
  }
  db.pragma('temp_store = MEMORY');
  return db;
}
