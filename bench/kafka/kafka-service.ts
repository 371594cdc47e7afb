// The measured process of `npm run bench:kafka`: `visibility-api serve` as users run it (the launcher
// in bin/, Kafka settings from KAFKA_* variables), watched from outside: committed offsets read from its
// SQLite file through a read-only connection, event-loop delay and lag from its ops port.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { freePort } from '../lib/lib';

/** prom-client samples the event loop with a 10 ms timer; its figures include that interval. */
export const ELD_RESOLUTION_MS = 10;

export interface ServiceStart {
  root: string; dbFile: string; logFile: string; brokers: string; topic: string; groupId: string;
  /** More `serve` flags (`--shard K/N`, `--bootstrap-from URL`) and environment (`KAFKA_CATALOG_TOPIC`). */
  args?: string[]; env?: NodeJS.ProcessEnv;
}

export interface Service {
  child: ChildProcess;
  api: string;
  ops: string;
  exited: Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const alive = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null;


/** Spawns `visibility-api serve` on 127.0.0.1, consuming `topic` into a new database file. */
export async function spawnService(o: ServiceStart): Promise<Service> {
  const [port, opsPort] = [await freePort(), await freePort()];
  const args = [path.join(o.root, 'bin', 'visibility-api.js'), 'serve', '--rate-limit', '0', '--db', o.dbFile, '--host', '127.0.0.1', '--port', String(port),
    '--ops-host', '127.0.0.1', '--ops-port', String(opsPort), ...(o.args ?? [])];
  const out = fs.openSync(o.logFile, 'w');
  const child = spawn(process.execPath, args, {
    cwd: o.root,
    // No dead-letter topic: the generated log has no invalid event, and the run creates no topic it does not delete.
    env: { ...process.env, KAFKA_BROKERS: o.brokers, KAFKA_TOPICS: o.topic, KAFKA_GROUP_ID: o.groupId, KAFKA_DLQ_TOPIC: '', KAFKA_LOG_LEVEL: 'warn',
      // Ready as soon as a read model is loaded, as before MAX_READY_LAG existed: the catch-up is what is measured.
      MAX_READY_LAG: '0', ...o.env },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, api: `http://127.0.0.1:${port}/v1/public`, ops: `http://127.0.0.1:${opsPort}`, exited };
}

/** SIGTERM (the graceful stop), SIGKILL if it has not exited after `graceMs`. */
export async function stopService(s: Service, graceMs = 10_000): Promise<void> {
  if (!alive(s.child)) return;
  s.child.kill('SIGTERM');
  if (await Promise.race([s.exited.then(() => true), sleep(graceMs).then(() => false)])) return;
  s.child.kill('SIGKILL');
  await Promise.race([s.exited, sleep(5000)]);
}

export function serviceLogTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '';
  }
}

/** Waits until the API answers /readyz 200 (a read model is loaded) or the process ends. */
export async function waitReady(s: Service, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!alive(s.child)) throw new Error(`the service exited:\n${serviceLogTail(logFile)}`);
    const status = await fetch(`${s.ops}/readyz`, { signal: AbortSignal.timeout(2000) }).then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    }, () => 0);
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`the service was not ready within ${timeoutMs / 1000} s:\n${serviceLogTail(logFile)}`);
    await sleep(200);
  }
}

/**
 * The offsets the service has committed in SQLite: the sum of the next offsets it stored for the
 * topic's partitions, i.e. the records applied (the topic is fresh). A read-only connection that
 * never holds a read transaction open, so it does not hold up the writer's checkpoints.
 */
export class CommittedOffsets {
  private db: Database.Database | null = null;
  private stmt: Database.Statement | null = null;

  constructor(private readonly file: string, private readonly topic: string) {}

  /** null while the file or its tables do not exist yet. */
  read(): number | null {
    try {
      if (!this.db) {
        if (!fs.existsSync(this.file)) return null;
        this.db = new Database(this.file, { readonly: true, fileMustExist: true });
      }
      this.stmt ??= this.db.prepare('SELECT coalesce(sum(position), 0) FROM source_positions WHERE source GLOB ?').pluck();
      return this.stmt.get(`kafka:${this.topic}:*`) as number;
    } catch (e) {
      if (e instanceof Error && /no such table|database is locked|unable to open/.test(e.message)) return null;
      throw e;
    }
  }

  close(): void {
    this.db?.close();
    this.db = null;
    this.stmt = null;
  }
}

export interface OpsSample {
  eldP99Ms: number | null; eldMaxMs: number | null; deadLetters: number | null;
  /** SQLite transactions committed, and events applied, since the service started. */
  transactions: number | null; applied: number | null;
}

const metric = (text: string, name: string): number | null => {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
};

/**
 * Event-loop delay of the serving thread since the previous scrape (prom-client resets its histogram
 * at every scrape), minus the 10 ms sampling interval its figures include.
 */
export async function scrapeOps(ops: string): Promise<OpsSample> {
  const res = await fetch(`${ops}/metrics`, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  const excess = (v: number | null): number | null => (v === null ? null : Math.max(0, v * 1000 - ELD_RESOLUTION_MS));
  return { eldP99Ms: excess(metric(text, 'nodejs_eventloop_lag_p99_seconds')), eldMaxMs: excess(metric(text, 'nodejs_eventloop_lag_max_seconds')),
    deadLetters: metric(text, 'visibility_ingest_dead_letters'), transactions: metric(text, 'visibility_ingest_batches_total'),
    applied: metric(text, 'visibility_ingest_events\\{outcome="applied"\\}') };
}
