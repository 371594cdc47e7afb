// The writer's SQL alone: the bound SQLite puts on replay, whatever the JavaScript around it costs.
// Part of `npm run bench:ingest` (bench/ingest/ingest.ts).
//   1. Capture: the log replayed in this process as the CLI's writer replays it (replayFiles, the
//      CLI's batch size, a fresh file), every statement the writer runs recorded with its parameters.
//   2. Replay the statements alone, in order, on another fresh file opened as replay opens it (the
//      same migrations and pragmas), each SQL text prepared once; closed durably as replay closes.
//      Timed from the first statement to the durable close: BEGIN, every insert and read, COMMIT,
//      the checkpoints. Nothing is decoded, validated or summed while timed.
// The stream is replayed on the store as it is and once without the slice index (migration 016:
// the dimension filters' index), to show what that index costs the writer.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { replayFiles } from '../../src/ingest';
import { closeDurably, openDb, Projector } from '../../src/store';

type Kind = 'run' | 'get' | 'all' | 'iterate' | 'exec';
type Call = [sql: string, kind: Kind, params: unknown[]];

export interface WriterSql {
  statements: number;
  /** Seconds of the stream on the store as it is (best of `rounds`), and without the slice index. */
  seconds: number;
  withoutSlices: number;
  /** The statements that took longest in the best round: [first words of the SQL, calls, ms]. */
  top: Array<[string, number, number]>;
}

/**
 * Records every statement `run` runs, on any connection of this thread. Patches better-sqlite3's
 * Statement and Database prototypes for the duration (a bench's instrument: better-sqlite3 has no
 * hook that keeps the statement's parameters apart from its text).
 */
async function capture<T>(run: () => Promise<T>): Promise<Call[]> {
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<Kind, (...a: unknown[]) => unknown>;
  probe.close();
  const database = Database.prototype as unknown as { exec: (sql: string) => unknown };
  const calls: Call[] = [];
  const saved = { run: statement.run, get: statement.get, all: statement.all, iterate: statement.iterate, exec: database.exec };
  for (const kind of ['run', 'get', 'all', 'iterate'] as const) {
    const original = saved[kind];
    statement[kind] = function (this: { source: string }, ...params: unknown[]) {
      calls.push([this.source, kind, params]);
      return original.apply(this, params);
    };
  }
  database.exec = function (this: unknown, sql: string) {
    calls.push([sql, 'exec', []]);
    return saved.exec.call(this, sql);
  };
  try {
    await run();
  } finally {
    Object.assign(statement, { run: saved.run, get: saved.get, all: saved.all, iterate: saved.iterate });
    database.exec = saved.exec;
  }
  return calls;
}

/** The calls run on a fresh file; ms per SQL text in `per`. Returns the seconds from the first statement to the durable close. */
function replayCalls(calls: Call[], setup: string, per: Map<string, [number, number]>): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sql-'));
  try {
    const db = openDb(path.join(dir, 'sql.db'), { fast: true, noSync: true });
    if (setup !== '') db.exec(setup);
    const prepared = new Map<string, Database.Statement>();
    const started = performance.now();
    for (const [sql, kind, params] of calls) {
      const t0 = performance.now();
      if (kind === 'exec') {
        db.exec(sql);
      } else {
        let s = prepared.get(sql);
        if (s === undefined) {
          s = db.prepare(sql);
          if (s.reader) s.raw(true); // read as arrays: the writer's reads are plucked or raw
          prepared.set(sql, s);
        }
        if (kind === 'run') s.run(...params);
        else if (kind === 'get') s.get(...params);
        else if (kind === 'all') s.all(...params);
        else for (const row of s.iterate(...params)) void row;
      }
      const key = sql.replace(/\s+/g, ' ').slice(0, 60);
      const p = per.get(key) ?? [0, 0];
      p[0] += 1;
      p[1] += performance.now() - t0;
      per.set(key, p);
    }
    closeDurably(db);
    return (performance.now() - started) / 1000;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function writerSql(file: string, batchSize: number, rounds = 2): Promise<WriterSql> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-capture-'));
  let calls: Call[];
  try {
    const db = openDb(path.join(dir, 'capture.db'), { fast: true, noSync: true });
    try {
      calls = await capture(() => replayFiles(db, new Projector(db), [file], { batchSize }));
    } finally {
      closeDurably(db);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  let seconds = Infinity;
  let top: WriterSql['top'] = [];
  for (let i = 0; i < rounds; i += 1) {
    const per = new Map<string, [number, number]>();
    const s = replayCalls(calls, '', per);
    if (s < seconds) {
      seconds = s;
      top = [...per].map(([sql, [n, ms]]): [string, number, number] => [sql, n, ms]).sort((a, b) => b[2] - a[2]).slice(0, 6);
    }
  }
  const withoutSlices = replayCalls(calls, 'DROP INDEX IF EXISTS runs_slices', new Map());
  return { statements: calls.length, seconds, withoutSlices, top };
}
