// For the crash tests of replay: a generated log, clean replays to compare with, `replay` in a
// child process, and where a database stands (the next line a re-run starts from).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { DEMO_OPTIONS, generateWorld } from '../../fixtures/world';
import { fileSource, replayFiles } from '../../src/ingest';
import { digest, Projector } from '../../src/store';
import { openDb } from '../../src/store/db';
import { tmpDir } from './db';
import { ROOT } from './paths';
import { sleep } from './wait';
import { cleanEnv, cliArgv, CLI_STACK, type Exit } from './processes';


export const dir = tmpDir('crash-replay-');
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * A world of its own (not the demo's seed), two weeks of runs: ~4,700 lines, ~7 MB. Some runs are sent
 * again later with changed facts (the generator's corrections), so an interrupted replay also resumes
 * between a run and its correction.
 */
export const EVENTS = path.join(dir, 'events.ndjson');
fs.writeFileSync(EVENTS, [...generateWorld({ ...DEMO_OPTIONS, seed: 4242, days: 14, corrections: 0.03 })].join('\n') + '\n');
export const LINES = fs.readFileSync(EVENTS, 'utf8').split('\n').filter((l) => l !== '');
export const SOURCE = fileSource(EVENTS);

export interface Clean { digest: string; deadLetters: number; pages: number }

/** A clean, uninterrupted replay of `lines` in this process: what every interrupted replay must end with. */
export async function cleanReplay(name: string, lines: string[]): Promise<Clean> {
  const events = path.join(dir, `${name}.ndjson`);
  fs.writeFileSync(events, lines.join('\n') + '\n');
  const db = openDb(path.join(dir, `${name}.db`), { fast: true });
  try {
    await replayFiles(db, new Projector(db), [events], { batchSize: 1000 });
    return {
      digest: digest(db),
      deadLetters: db.prepare('SELECT count(*) FROM dead_letters').pluck().get() as number,
      pages: db.pragma('page_count', { simple: true }) as number,
    };
  } finally {
    db.close();
  }
}

let cleanAll: Promise<Clean> | null = null;
export const clean = (): Promise<Clean> => (cleanAll ??= cleanReplay('clean', LINES));

export interface Child { child: ChildProcess; done: Promise<Exit>; exited: () => boolean }

/** `visibility-api replay --db DB --batch-size N EVENTS` in a child process; SIGKILLed if still running after 2 minutes. */
export function replay(db: string, batchSize: number, env: NodeJS.ProcessEnv = {}): Child {
  const child = spawn(process.execPath, cliArgv(['replay', '--db', db, '--batch-size', String(batchSize), EVENTS], CLI_STACK),
    { cwd: ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Exit>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      exited = true;
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done, exited: () => exited };
}

/** The next line a re-run starts from, as committed in `db` (1 when nothing is). */
export function committed(db: string): number {
  if (!fs.existsSync(db)) return 1;
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (conn.prepare('SELECT position FROM source_positions WHERE source = ?').pluck().get(SOURCE) as number | undefined) ?? 1;
  } catch {
    return 1; // no schema yet
  } finally {
    conn.close();
  }
}

/** Polls until `db` has committed line `line` or beyond, or the child has exited (then false). Bounded. */
export async function waitForCommit(db: string, line: number, c: Child): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (c.exited()) return false;
    if (committed(db) > line) return true;
    await sleep(10);
  }
  throw new Error(`line ${line} not committed in 120 s`);
}

/**
 * Where a finished database stands: sound, with the clean replay's data and dead letters. A replay
 * that ended settled its week and month roll-ups. One that failed (`failed`) may have left some
 * pending (store/rollups.ts): they are settled first, as the next writer would, since settling only
 * sums the committed day rows again and the digest is of the data.
 */
export async function sameAsClean(tt: Test, db: string, want: Clean, what: string, failed = false): Promise<void> {
  const writer = openDb(db, { fast: true });
  try {
    const pending = writer.prepare('SELECT count(*) FROM rollup_pending').pluck().get() as number;
    if (failed) new Projector(writer).settle();
    else tt.equal(pending, 0, `${what}: no roll-up left pending`);
  } finally {
    writer.close();
  }
  const conn = openDb(db, { readonly: true });
  try {
    tt.same(conn.pragma('quick_check'), [{ quick_check: 'ok' }], `${what}: quick_check ok`);
    tt.equal(conn.prepare('SELECT count(*) FROM dead_letters').pluck().get(), want.deadLetters, `${what}: the clean replay's dead letters, no others`);
    tt.equal(digest(conn), want.digest, `${what}: the digest of a clean replay`);
  } finally {
    conn.close();
  }
}

export const SUMMARY = /^replayed 1 file\(s\) in [\d.]+ s: (\d+) applied, (\d+) duplicate, (\d+) stale \(superseded\), (\d+) dead-lettered, (\d+) lines skipped \(already applied\)\n$/;

/** A re-run to the end: exit 0, and it skipped exactly the lines committed before it. */
export async function finish(tt: Test, db: string, batchSize = 500): Promise<void> {
  const from = committed(db);
  const r = await replay(db, batchSize).done;
  tt.equal(r.code, 0, `the re-run completes: ${r.stderr}`);
  const m = SUMMARY.exec(r.stdout);
  tt.ok(m, `summary: ${r.stdout}`);
  if (m) tt.equal(Number(m[5]), from - 1, `it continues at line ${from}: the lines before are skipped`);
}

