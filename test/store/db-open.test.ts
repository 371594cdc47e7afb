// A database file that cannot be used: missing, empty, unreadable, not SQLite, from a newer build,
// of another application, or corrupt. openDb throws DbOpenError (one line naming the file and the
// problem, never a raw SqliteError), verifyDb finds damage openDb cannot see, and the CLI turns
// each into a non-zero exit with exactly one line on stderr and no stack trace.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { digest, Projector } from '../../src/store';
import { DbOpenError, isCorruption, knownSchemaVersion, openDb, verifyDb } from '../../src/store/db';
import { asSource, run, world } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';
import { cliArgv, CLI_STACK } from '../helpers/processes';


function workDir(tt: Test): string {
  const dir = tmpDir('db-open-');
  fs.chmodSync(dir, 0o755); // the permission case runs a child as another user: it must reach the files
  tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A real database with the helpers' world and a few runs. */
function goodDb(dir: string, name = 'good.db'): string {
  const file = path.join(dir, name);
  const db = openDb(file);
  new Projector(db).applyBatch(asSource([...world(), ...Array.from({ length: 30 }, (_, i) => run({ n: i + 1, brand: 1 + (i % 3), citations: [`https://c${i}.com/`] }))]));
  db.pragma('wal_checkpoint(TRUNCATE)'); // every page in the main file, so damage written there is what SQLite reads
  db.close();
  return file;
}

/** Overwrites [from, to) of `file` with 0x5a bytes. */
function damage(file: string, from: number, to: number): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, Buffer.alloc(to - from, 0x5a), 0, to - from, from);
  } finally {
    fs.closeSync(fd);
  }
}

/** The DbOpenError openDb throws, checked for what every one must be: one line naming the file. */
function openError(tt: Test, file: string, opts: Parameters<typeof openDb>[1], problem: RegExp): void {
  let err: unknown = null;
  try {
    openDb(file, opts).close();
  } catch (e) {
    err = e;
  }
  tt.ok(err instanceof DbOpenError, `a DbOpenError (got ${String(err)})`);
  if (!(err instanceof DbOpenError)) return;
  tt.equal(err.file, file);
  tt.ok(err.message.startsWith(`database ${file} `), `names the file first: ${err.message}`);
  tt.match(err.message, problem);
  tt.notMatch(err.message, /\n/, 'one line');
  tt.notMatch(err.message, /SqliteError|SQLITE_/, 'no raw SQLite error');
}

t.test('openDb: every unusable file is a DbOpenError naming it', async (tt) => {
  const dir = workDir(tt);
  const known = knownSchemaVersion();
  tt.ok(known >= 1, 'this build has migrations');

  tt.test('a missing file, where it must exist, is refused and not created', async (t2) => {
    const file = path.join(dir, 'missing.db');
    openError(t2, file, { mustExist: true }, /does not exist$/);
    openError(t2, file, { readonly: true }, /does not exist$/);
    t2.notOk(fs.existsSync(file), 'not created');
  });

  tt.test('a 0-byte file, where a database must exist, is refused and left as it is', async (t2) => {
    const file = path.join(dir, 'empty.db');
    fs.writeFileSync(file, '');
    openError(t2, file, { mustExist: true }, /is empty \(0 bytes\), not a database$/);
    openError(t2, file, { readonly: true }, /is empty \(0 bytes\), not a database$/);
    t2.equal(fs.statSync(file).size, 0, 'still 0 bytes');
    // Without mustExist (replay, a Kafka consumer) a new or empty file is where a database starts.
    const db = openDb(file);
    t2.equal(db.pragma('user_version', { simple: true }), known, 'replay may make it a database');
    db.close();
  });

  tt.test('a directory, and a path through a file', async (t2) => {
    openError(t2, dir, {}, /is a directory, not a database file$/);
    openError(t2, dir, { readonly: true }, /is a directory/);
    const file = path.join(dir, 'plain.txt');
    fs.writeFileSync(file, 'x');
    openError(t2, path.join(file, 'x.db'), { mustExist: true }, /cannot be opened: .*ENOTDIR|cannot be opened/);
    openError(t2, path.join(dir, 'no-such-dir', 'x.db'), {}, /cannot be created: directory .*no-such-dir does not exist$/);
  });

  tt.test('a file that is not SQLite', async (t2) => {
    const file = path.join(dir, 'text.db');
    fs.writeFileSync(file, 'this is a text file, not a database\n'.repeat(200));
    const before = fs.readFileSync(file);
    openError(t2, file, {}, /is not an SQLite database$/);
    openError(t2, file, { readonly: true }, /is not an SQLite database$/);
    t2.same(fs.readFileSync(file), before, 'left untouched');
  });

  tt.test('a database from a newer build: refused, for reading too, and left untouched', async (t2) => {
    const file = goodDb(dir, 'newer.db');
    const raw = new Database(file);
    raw.pragma(`user_version = ${known + 7}`);
    raw.close();
    const problem = new RegExp(`was written by a newer version: schema ${known + 7}, this build knows up to ${known}$`);
    openError(t2, file, {}, problem);
    openError(t2, file, { readonly: true }, problem);
    openError(t2, file, { mustExist: true, fast: true }, problem);
    const check = new Database(file, { readonly: true });
    t2.equal(check.pragma('user_version', { simple: true }), known + 7, 'not migrated back or forth');
    check.close();
  });

  tt.test("another application's SQLite file is not adopted", async (t2) => {
    const file = path.join(dir, 'foreign.db');
    const raw = new Database(file);
    raw.exec('CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)');
    raw.close();
    openError(t2, file, {}, /is not a visibility-api database/);
    const check = new Database(file, { readonly: true });
    t2.same(check.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all(), ['invoices'], 'no tables added');
    check.close();
  });

  tt.test('damage where the schema lives fails at open; damage in the data fails verifyDb', async (t2) => {
    const sound = goodDb(dir, 'sound.db');
    const db = openDb(sound, { readonly: true });
    verifyDb(db, sound); // a sound file passes
    db.close();

    const header = goodDb(dir, 'schema-damaged.db');
    damage(header, 100, 4096); // page 1 after the 100-byte file header: the schema table's root
    openError(t2, header, {}, /is corrupt/);
    openError(t2, header, { readonly: true }, /is corrupt/);

    const data = goodDb(dir, 'data-damaged.db');
    // The pages of one table (dbstat knows which), none of the schema's: open cannot tell.
    const stat = new Database(data, { readonly: true });
    const pageSize = stat.pragma('page_size', { simple: true }) as number;
    const runPages = stat.prepare("SELECT pageno FROM dbstat WHERE name = 'runs'").pluck().all() as number[];
    stat.close();
    t2.ok(runPages.length > 0, 'runs has pages');
    for (const page of runPages) damage(data, (page - 1) * pageSize, page * pageSize);
    const opened = openDb(data, { readonly: true }); // header and schema are fine: open cannot tell
    t2.teardown(() => opened.close());
    let raw: unknown = null;
    try {
      digest(opened);
    } catch (e) {
      raw = e;
    }
    t2.ok(isCorruption(raw), `reading the damaged pages is a corruption error (${String(raw)})`);
    let verr: unknown = null;
    try {
      verifyDb(opened, data);
    } catch (e) {
      verr = e;
    }
    t2.ok(verr instanceof DbOpenError, 'verifyDb throws DbOpenError');
    t2.match((verr as Error).message, new RegExp(`^database ${data.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is corrupt: PRAGMA quick_check says: `));
    t2.notMatch((verr as Error).message, /\n/, 'one line');
  });
});

interface Run { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** The CLI in a child process (from source, through tsx); `uid` runs it as another user. */
/**
 * `withoutPermissionBypass`: root reads any file whatever its mode, so as root the command runs
 * without the capabilities that let it (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH).
 * It stays the same user, so the checkout is reachable wherever it was cloned (another user, such
 * as nobody, cannot enter a checkout under a mode-700 temporary directory).
 */
function cli(args: string[], withoutPermissionBypass = false): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.VISIBILITY_DB;
  const argv = [process.execPath, ...cliArgv(args, CLI_STACK)];
  if (withoutPermissionBypass) argv.unshift('setpriv', '--bounding-set', '-dac_override,-dac_read_search');
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000); // a hang fails the test, it never stalls the suite
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

/** What a person sees: a non-zero exit, nothing on stdout, exactly one line on stderr naming the file, no stack. */
function oneLine(tt: Test, r: Run, file: string, problem: RegExp): void {
  tt.equal(r.signal, null, 'not killed');
  tt.ok(r.status !== 0 && r.status !== null, `non-zero exit (got ${r.status})`);
  tt.equal(r.stdout, '', 'nothing on stdout');
  tt.match(r.stderr, /^[^\n]+\n$/, `exactly one line on stderr: ${JSON.stringify(r.stderr)}`);
  tt.ok(r.stderr.includes(file), 'names the file');
  tt.match(r.stderr, problem);
  tt.notMatch(r.stderr, /^\s+at |SqliteError|SQLITE_/m, 'no stack trace, no raw SQLite error');
}

t.test('the CLI: one line and a non-zero exit for each unusable file', async (tt) => {
  const dir = workDir(tt);
  const events = path.join(dir, 'events.ndjson');
  fs.writeFileSync(events, world().map((e) => JSON.stringify(e)).join('\n') + '\n');
  const empty = path.join(dir, 'empty.db');
  fs.writeFileSync(empty, '');
  const text = path.join(dir, 'text.db');
  fs.writeFileSync(text, 'not a database\n'.repeat(300));
  const newer = goodDb(dir, 'newer.db');
  const raw = new Database(newer);
  raw.pragma(`user_version = ${knownSchemaVersion() + 1}`);
  raw.close();
  const corrupt = goodDb(dir, 'corrupt.db');
  damage(corrupt, 100, 4096);
  const missing = path.join(dir, 'missing.db');

  const cases: Array<[string, string[], string, RegExp]> = [
    ['digest: missing', ['digest', '--db', missing], missing, /does not exist/],
    ['digest: 0 bytes', ['digest', '--db', empty], empty, /is empty \(0 bytes\), not a database/],
    ['digest: not SQLite', ['digest', '--db', text], text, /is not an SQLite database/],
    ['digest: newer schema', ['digest', '--db', newer], newer, /was written by a newer version: schema \d+, this build knows up to \d+/],
    ['digest: corrupt', ['digest', '--db', corrupt], corrupt, /is corrupt/],
    ['snapshot: missing', ['snapshot', '--db', missing, path.join(dir, 'out.db')], missing, /does not exist/],
    ['replay: not SQLite', ['replay', '--db', text, events], text, /is not an SQLite database/],
    ['replay: newer schema', ['replay', '--db', newer, events], newer, /was written by a newer version/],
    ['replay: a directory', ['replay', '--db', dir, events], dir, /is a directory/],
  ];
  // Two at a time: each child pays for starting node and tsx.
  const results: Run[] = [];
  for (let i = 0; i < cases.length; i += 2) results.push(...await Promise.all(cases.slice(i, i + 2).map((c) => cli(c[1]))));
  cases.forEach(([name, , file, problem], i) => tt.test(name, async (t2) => oneLine(t2, results[i]!, file, problem)));
  tt.notOk(fs.existsSync(missing), 'nothing created the missing file');
  tt.equal(fs.statSync(empty).size, 0, 'the empty file is still empty');
  tt.notOk(fs.existsSync(path.join(dir, 'out.db')), 'no snapshot written');
});

t.test('the CLI: a file the user may not read', async (tt) => {
  const dir = workDir(tt);
  const file = goodDb(dir, 'secret.db');
  fs.chmodSync(file, 0o000);
  const r = await cli(['digest', '--db', file], process.getuid?.() === 0);
  oneLine(tt, r, file, /cannot be read: permission denied/);
});
