import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { packageRoot } from '../lib/root';

export type Db = Database.Database;

export interface OpenOptions {
  readonly?: boolean;
  /**
   * A writer whose source can be read again (replay's files; Kafka, from the offsets stored with the
   * facts): no fsync per commit. WAL + synchronous=NORMAL survives a kill at any moment; a power
   * loss can take back the last commits (never corrupt), and those are applied again from the source.
   */
  fast?: boolean;
  /**
   * The file must already be a database: a missing or 0-byte file is refused (DbOpenError) instead
   * of being made into an empty one. Implied by `readonly`.
   */
  mustExist?: boolean;
  /**
   * Caps the file at this many pages (PRAGMA max_page_count, per connection): a write that would
   * grow it further fails with SQLITE_FULL, exactly like a full disk. Tests use it to simulate one;
   * operators can use it as a size guard (replay reads VISIBILITY_MAX_PAGE_COUNT).
   */
  maxPageCount?: number;
  /**
   * No fsync at all (synchronous = OFF), for a bulk writer that makes the file durable when it ends
   * (closeDurably): a kill loses nothing committed; an OS crash or a power loss can damage the file.
   */
  noSync?: boolean;
}

/**
 * A database file that cannot be used: missing, empty, unreadable, not SQLite, corrupt, or from a
 * newer build. The message is one line naming the file and the problem, fit for an operator.
 */
export class DbOpenError extends Error {
  constructor(readonly file: string, readonly problem: string) {
    super(oneLine(`database ${file} ${problem}`));
    this.name = 'DbOpenError';
  }
}

/** Error text from SQLite or the OS can hold newlines; an operator's line must not. */
function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > 500 ? `${flat.slice(0, 497)}...` : flat;
}

function sqliteCode(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Database.SqliteError && typeof code === 'string' ? code : null;
}

/** SQLITE_CORRUPT and SQLITE_NOTADB (and their extended codes): the file itself is damaged. */
export function isCorruption(e: unknown): boolean {
  const code = sqliteCode(e);
  return code !== null && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/**
 * The database or what is under it failed (disk full, I/O, corruption, locks, read-only, memory),
 * not the statement: never an event's fault, so never a reason to dead-letter one. After some of
 * these (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM, SQLITE_BUSY) SQLite may have rolled back the whole
 * transaction, so whatever runs next would run outside it.
 */
export function isStorageError(e: unknown): boolean {
  const code = sqliteCode(e);
  return code !== null && /^SQLITE_(FULL|IOERR|NOMEM|BUSY|LOCKED|CORRUPT|NOTADB|READONLY|CANTOPEN|PROTOCOL|INTERRUPT|PERM)/.test(code);
}

/** What a failed open or first read says about the file, in an operator's words. */
function problemOf(e: unknown): string {
  const code = sqliteCode(e);
  const msg = e instanceof Error ? e.message : String(e);
  if (code === null) {
    const errno = (e as NodeJS.ErrnoException | null)?.code;
    if (errno === 'EACCES' || errno === 'EPERM') return 'cannot be read: permission denied';
    return `cannot be opened: ${msg}`;
  }
  if (code === 'SQLITE_NOTADB') return 'is not an SQLite database';
  if (code.startsWith('SQLITE_CORRUPT')) return `is corrupt: ${msg}`;
  if (code.startsWith('SQLITE_CANTOPEN')) return `cannot be opened: ${msg}`;
  if (code.startsWith('SQLITE_READONLY')) return `cannot be written: ${msg} (check the file's and its directory's permissions)`;
  if (code === 'SQLITE_PERM' || code === 'SQLITE_AUTH') return 'cannot be read: permission denied';
  if (code.startsWith('SQLITE_FULL')) return 'cannot be written: database or disk is full';
  if (code.startsWith('SQLITE_BUSY')) return `is locked by another process: ${msg}`;
  return `cannot be opened: ${msg} (${code})`;
}

/**
 * Page cache per writing connection. Aggregates move by deltas, so a batch touches the pages of its
 * own days, not whole buckets: replaying the 117k- and 230k-event bench logs ran at the same rate with
 * 8, 16, 32 and 128 MiB, and 16 MiB keeps replay's peak RSS ~15 MB lower than 32 (under its 250 MB
 * budget: docs/benchmarks.md), flat whatever the log's length.
 */
const CACHE_KIB = 16384;

/** Numbered SQL files in src/store/migrations, applied in order; PRAGMA user_version is the number applied last. */
function migrations(): Array<{ version: number; file: string }> {
  const dir = path.join(packageRoot(), 'src/store/migrations');
  return fs.readdirSync(dir).filter((f) => /^\d+_.*\.sql$/.test(f)).sort()
    .map((f) => ({ version: Number.parseInt(f, 10), file: path.join(dir, f) }));
}

/** The schema version this build knows up to: the number of its last migration. */
export function knownSchemaVersion(): number {
  return migrations().at(-1)?.version ?? 0;
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

/**
 * Opens (and, for writing, creates and migrates) a database. Every way the file can be unusable
 * ends in a DbOpenError naming it, never a raw SqliteError: the CLI turns that into one line.
 */
export function openDb(file: string, opts: OpenOptions = {}): Db {
  checkFile(file, opts.readonly === true || opts.mustExist === true, opts.readonly !== true);
  let db: Db | null = null;
  try {
    db = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
    db.pragma('busy_timeout = 5000');
    // The first read of the header: a file that is not SQLite fails here (SQLITE_NOTADB), not later.
    checkSchema(db, file, opts.readonly === true);
    if (opts.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.max(1, Math.floor(opts.maxPageCount))}`);
    if (!opts.readonly) {
      // For a new file only (an existing one keeps its size): with rows of 0.5-2 KB and mostly-appending
      // keys, 16 KiB pages cut the cost of applying an event by about a fifth against 4 KiB (85 -> 66 us
      // measured), in 4x fewer WAL frames.
      db.pragma('page_size = 16384');
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${opts.fast ? 'NORMAL' : 'FULL'}`);
      db.pragma(`cache_size = ${-CACHE_KIB}`);
      // A bulk writer checkpoints every 64 MiB of WAL instead of every 4 MiB: pages rewritten by
      // consecutive batches (aggregate rows of the same days) are copied into the file once, not each time.
      if (opts.fast) db.pragma(`wal_autocheckpoint = ${Math.round((64 << 20) / (db.pragma('page_size', { simple: true }) as number))}`);
      migrate(db);
      if (opts.noSync) db.pragma('synchronous = OFF');
    }
    db.pragma('temp_store = MEMORY');
    return db;
  } catch (e) {
    if (db?.open) db.close();
    if (e instanceof DbOpenError) throw e;
    throw new DbOpenError(file, problemOf(e));
  }
}

/** What the file system says, before SQLite gets a chance to create or misread anything. */
function checkFile(file: string, mustExist: boolean, write: boolean): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    const errno = (e as NodeJS.ErrnoException).code;
    if (errno !== 'ENOENT') throw new DbOpenError(file, problemOf(e));
    if (mustExist) throw new DbOpenError(file, 'does not exist');
    const dir = path.dirname(path.resolve(file));
    if (!fs.existsSync(dir)) throw new DbOpenError(file, `cannot be created: directory ${dir} does not exist`);
    return;
  }
  if (st.isDirectory()) throw new DbOpenError(file, 'is a directory, not a database file');
  if (!st.isFile()) throw new DbOpenError(file, 'is not a regular file');
  if (st.size === 0 && mustExist) throw new DbOpenError(file, 'is empty (0 bytes), not a database');
  try {
    fs.accessSync(file, write ? fs.constants.R_OK | fs.constants.W_OK : fs.constants.R_OK);
  } catch {
    throw new DbOpenError(file, write ? 'cannot be opened for writing: permission denied' : 'cannot be read: permission denied');
  }
}

/** Refuses a file from a newer build (its tables may mean something else) or of another application. */
function checkSchema(db: Db, file: string, readonly: boolean): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  const known = knownSchemaVersion();
  if (version > known) throw new DbOpenError(file, `was written by a newer version: schema ${version}, this build knows up to ${known}`);
  // Reading sqlite_master parses the schema: a damaged first page shows here, at open, as corruption.
  const tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get() as number;
  if (version === 0 && tables > 0) throw new DbOpenError(file, `is not a visibility-api database (an SQLite file with ${tables} table(s) and no schema version)`);
  if (version === 0 && readonly) throw new DbOpenError(file, 'has no tables yet (replay events into it first)');
}

/**
 * PRAGMA quick_check (every page and record well formed; indexes are not cross-checked, so it is
 * a fraction of integrity_check's cost): a DbOpenError unless the file is sound. Run at serve
 * start-up, where a corrupt file would otherwise answer 500 to every request.
 */
export function verifyDb(db: Db, file: string = db.name): void {
  let rows: Array<{ quick_check: string }>;
  try {
    rows = db.pragma('quick_check(3)') as Array<{ quick_check: string }>;
  } catch (e) {
    throw new DbOpenError(file, problemOf(e));
  }
  if (rows.length === 1 && rows[0]!.quick_check === 'ok') return;
  const said = oneLine(rows.map((r) => r.quick_check).join(' ') || 'no answer');
  throw new DbOpenError(file, `is corrupt: PRAGMA quick_check says: ${said.length > 200 ? `${said.slice(0, 197)}...` : said}`);
}
