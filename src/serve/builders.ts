import type { Worker } from 'node:worker_threads';
import { startWorker } from '../lib/worker';
import type { Endpoint, ReadArgs, ReadStore } from '../readmodels';
import type { BodySchemas } from './bodies';
import { buildReady } from './build';
import type { Ready } from './cache';

/** What a cache miss asks for: the body of one endpoint, with the data_version scopes it depends on. */
export interface BuildJob {
  endpoint: Endpoint;
  args: ReadArgs;
  scopes: readonly string[];
}

/** Turns a cache miss into ready bytes. */
export interface Builder {
  build(job: BuildJob): Promise<Ready>;
  /** Bodies built so far (for tests and stats). */
  readonly built: number;
  close(): void;
}

/** Builds on the event loop: `--build-threads 0`, and custom endpoint tables (tests), whose functions cannot cross threads. */
export class InlineBuilder implements Builder {
  built = 0;

  constructor(private readonly store: ReadStore, private readonly schemas: BodySchemas) {}

  build(job: BuildJob): Promise<Ready> {
    try {
      const ready = buildReady(this.store, this.schemas, job.endpoint, job.args, job.scopes);
      this.built += 1;
      return Promise.resolve(ready);
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  close(): void {}
}

/** The message a build thread answers with. Buffers arrive as Uint8Arrays (structured clone). */
export type WorkerReply =
  | { id: number; ready: Omit<Ready, 'json' | 'gzip' | 'br'> & { json: Uint8Array; gzip: Uint8Array | null; br: Uint8Array | null } }
  | { id: number; error: string };

export interface WorkerJob { id: number; endpoint: string; args: ReadArgs; scopes: readonly string[] }

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

interface Pending { resolve: (r: Ready) => void; reject: (e: Error) => void }

/** One build thread: its own read-only connection, read models, schemas and compression. */
class BuildThread {
  private readonly pending = new Map<number, Pending>();
  /** null after a crash until the next job: a thread that dies at once is not restarted in a loop. */
  private worker: Worker | null;
  private closed = false;

  constructor(private readonly dbFile: string) {
    this.worker = this.spawn();
  }

  get load(): number {
    return this.pending.size;
  }

  private spawn(): Worker {
    const worker = startWorker(__dirname, 'build-worker', { dbFile: this.dbFile });
    worker.unref(); // never what keeps the process alive
    worker.on('message', (m: WorkerReply) => this.settle(m));
    // A crashed thread fails what it was building (500s); the next job starts a new one.
    worker.on('error', (e) => this.failAll(e));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(new Error(`build thread exited with code ${code}`));
    });
    return worker;
  }

  private settle(m: WorkerReply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if ('error' in m) return p.reject(new Error(m.error));
    const r = m.ready;
    p.resolve({ ...r, json: asBuffer(r.json), gzip: r.gzip && asBuffer(r.gzip), br: r.br && asBuffer(r.br) });
  }

  private failAll(e: Error): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  run(job: WorkerJob): Promise<Ready> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('service closed'));
      this.pending.set(job.id, { resolve, reject });
      (this.worker ??= this.spawn()).postMessage(job);
    });
  }

  close(): void {
    this.closed = true;
    this.failAll(new Error('service closed'));
    void this.worker?.terminate();
  }
}

/**
 * Builds in worker threads, so a slow body (a cold page, a 90-day series) never holds the event
 * loop: the loop only sends ready bytes and answers hits while a thread builds. Jobs go to the
 * thread with the fewest in flight.
 */
export class ThreadBuilder implements Builder {
  built = 0;
  private readonly threads: BuildThread[];
  private nextId = 1;

  constructor(dbFile: string, count: number) {
    this.threads = Array.from({ length: Math.max(1, count) }, () => new BuildThread(dbFile));
  }

  async build(job: BuildJob): Promise<Ready> {
    const thread = this.threads.reduce((a, b) => (b.load < a.load ? b : a));
    const ready = await thread.run({ id: this.nextId++, endpoint: job.endpoint.name, args: job.args, scopes: job.scopes });
    this.built += 1;
    return ready;
  }

  close(): void {
    for (const t of this.threads) t.close();
  }
}
