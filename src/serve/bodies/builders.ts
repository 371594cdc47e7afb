import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../lib/worker';
import { PageSnapshots, type Endpoint, type ReadArgs, type ReadStore } from '../../readmodels';
import { SqliteError } from '../../store';
import type { BodySchemas } from './bodies';
import { signingKey, type SigningKey } from '../request/cursor';
import { buildReady } from './ready-body';
import type { Ready } from './encode';
import { httpError, type HttpError } from '../request/errors';
import { silentLogger, type Logger } from '../../lib/log';
import { FairQueue } from './fair-queue';

/** What a cache miss asks for: the body of one endpoint, with the data_version scopes it depends on. */
export interface BuildJob {
  endpoint: Endpoint;
  args: ReadArgs;
  scopes: readonly string[];
}

/**
 * How long each body built by this process took to build, in ms, as the thread that built it
 * measured (a thread's start and the time a job waited are not in it): what a request that waited
 * for it is charged (ratelimit.ts extraCost). Bodies from elsewhere (relabelled) are not in it.
 */
const buildTimes = new WeakMap<Ready, number>();

/** What building `r` took (0 when it was not built here). */
export function buildTimeOf(r: Ready): number {
  return buildTimes.get(r) ?? 0;
}

/**
 * When each body built by this process was handed to what built it (performance.now() of the serving
 * thread): its read snapshot began later, so every commit it lacks came after this time. How far
 * behind the data it can be is counted from here (cache.ts), rather than from when the request that
 * asked for it arrived, which under load may be long before (the job waited for a thread).
 */
const handedAt = new WeakMap<Ready, number>();

/** A time before the read snapshot of `r` began (-Infinity when it was not built here). */
export function builtAfter(r: Ready): number {
  return handedAt.get(r) ?? -Infinity;
}

/** Turns a cache miss into ready bytes. */
export interface Builder {
  /**
   * `background`: a stale-while-revalidate rebuild (its request was answered already): it waits
   * behind every cold build. Rejects with a 429 (rate_limited) when the job's account already has
   * as many builds queued or running as it may (ThreadBuilder).
   */
  build(job: BuildJob, background?: boolean): Promise<Ready>;
  /** Bodies built so far (for tests and stats). */
  readonly built: number;
  /**
   * Jobs waiting are past the bound (QUEUED_PER_THREAD per thread): a rebuild of a body that may still
   * be served stale is left for a later request, so that requests that must wait (cold keys, bodies past
   * the staleness bound) do not queue behind it.
   */
  busy(): boolean;
  /** Per account: builds waiting and running, what they took, and how many were turned away (metrics, cache-stats). */
  accounts(): ReadonlyMap<string, AccountBuilds>;
  /** Ends the build threads; resolves once they have ended. Jobs still pending get a 503. Idempotent. */
  close(): Promise<void>;
}

/** One account's builds, as operators see them (ids of accounts, never keys). */
export interface AccountBuilds {
  /** Waiting for a thread now. */
  queued: number;
  /** In a thread now. */
  running: number;
  /** Built so far, and the time their builds took (ms). */
  builds: number;
  buildMs: number;
  /** Builds refused because the account was at its cap (answered stale, or 429). */
  refused: number;
}

/** Per-account build stats kept by a builder. */
class AccountLedger {
  readonly map = new Map<string, AccountBuilds>();

  of(account: string): AccountBuilds {
    let a = this.map.get(account);
    if (!a) this.map.set(account, (a = { queued: 0, running: 0, builds: 0, buildMs: 0, refused: 0 }));
    return a;
  }
}

/** Builds on the event loop: `--build-threads 0`, and custom endpoint tables (tests), whose functions cannot cross threads. */
export class InlineBuilder implements Builder {
  built = 0;

  private readonly cursorKey: SigningKey;
  /** The kept lists of walks in progress: every build is on this thread. */
  private readonly snapshots = new PageSnapshots();

  /** `cursorKey`: what signs the Links of pages (cursor.ts); the database's by default. */
  constructor(private readonly store: ReadStore, private readonly schemas: BodySchemas, cursorKey?: SigningKey) {
    this.cursorKey = cursorKey ?? signingKey(undefined, store);
  }

  private readonly ledger = new AccountLedger();

  build(job: BuildJob): Promise<Ready> {
    try {
      const t0 = performance.now();
      const ready = buildReady(this.store, this.schemas, job.endpoint, job.args, job.scopes, this.cursorKey, this.snapshots);
      handedAt.set(ready, t0);
      this.built += 1;
      const a = this.ledger.of(job.args.accountId);
      const ms = performance.now() - t0;
      a.builds += 1;
      a.buildMs += ms;
      buildTimes.set(ready, ms);
      return Promise.resolve(ready);
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** Builds as it is asked: nothing ever waits. */
  busy(): boolean {
    return false;
  }

  accounts(): ReadonlyMap<string, AccountBuilds> {
    return this.ledger.map;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** What a build thread starts with. The key arrives as a Uint8Array (structured clone). */
export interface BuildThreadData {
  dbFile: string;
  cursorKey?: Uint8Array;
}

/** The message a build thread answers with. Buffers arrive as Uint8Arrays (structured clone). */
export type WorkerReply =
  | { id: number; ready: Omit<Ready, 'json' | 'gzip' | 'br'> & { json: Uint8Array; gzip: Uint8Array | null; br: Uint8Array | null }; ms: number }
  | { id: number; error: string; code?: string };

/** Starts one build thread: builders.worker.ts by default; a test starts one it can make die. */
export type StartBuildThread = (data: BuildThreadData) => Worker;

/**
 * Old-generation cap of a build thread. Its live data is its statements, a few bodies in flight and
 * at most 32 MiB of walk snapshots (paging.ts), yet under a live stream, building ~190 bodies a
 * second, V8 let its heap grow to 240 MiB before collecting (the 10-minute soak, per-thread heaps
 * on /metrics). With the cap V8 collects sooner. A year-long body is a few MB: far below it.
 */
export const BUILD_HEAP_MB = 128;

/**
 * Young-generation cap of a build thread. V8 picks 48 MB here (three 16 MB semi-spaces) and a thread
 * building big bodies back to back fills it: a build's garbage (rows, the body's objects and text)
 * is dead when the build ends, so a smaller young generation holds less of it at once.
 */
export const BUILD_YOUNG_MB = 16;

const startBuildThread: StartBuildThread = (data) => startWorker(__filename, data, { maxYoungGenerationSizeMb: BUILD_YOUNG_MB, maxOldGenerationSizeMb: BUILD_HEAP_MB });

export interface WorkerJob {
  id: number;
  endpoint: string;
  args: ReadArgs;
  scopes: readonly string[];
}

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/**
 * Jobs a build thread may have in hand before background rebuilds wait (Builder.busy): builds take
 * ~1-10 ms, so a request that must wait for a build queues behind at most a few tens of ms of them.
 */
export const QUEUED_PER_THREAD = 4;

/** A job is tried on at most this many threads: the one that died with it in hand, then a fresh one. */
const MAX_ATTEMPTS = 2;

/** What a request gets when build threads keep dying, or the service is stopping: a clean, retryable 503 (errors.ts). */
function unavailable(code: 'build_failed' | 'shutting_down'): HttpError {
  return httpError(code);
}

interface Pending { job: WorkerJob; attempts: number; resolve: (r: Ready) => void; reject: (e: Error) => void }

/** One build thread: its own read-only connection, read models, schemas and compression. */
class BuildThread {
  private readonly pending = new Map<number, Pending>();
  /** null after a crash with nothing to retry, until the next job: a thread that dies at once is not restarted in a loop. */
  private worker: Worker | null;
  private closing: Promise<void> | null = null;
  /** Threads that died (not ended by close). */
  deaths = 0;

  constructor(private readonly dbFile: string, private readonly start: StartBuildThread, private readonly logger: Logger, private readonly cursorKey: SigningKey | undefined) {
    this.worker = this.spawn();
  }

  get load(): number {
    return this.pending.size;
  }

  private spawn(): Worker {
    const data: BuildThreadData = { dbFile: this.dbFile, cursorKey: this.cursorKey };
    const worker = this.start(data);
    let failure: Error | null = null;
    worker.on('message', (m: WorkerReply) => this.settle(m));
    worker.on('error', (e) => (failure = e));
    worker.on('exit', (code) => this.exited(worker, code, failure));
    // After the listeners (adding a 'message' listener refs the worker again): idle, it never keeps the process alive.
    worker.unref();
    return worker;
  }

  /** A thread keeps the process alive while it has jobs in hand, and only then. */
  private holdWhileBusy(): void {
    if (this.pending.size > 0) this.worker?.ref();
    else this.worker?.unref();
  }

  private settle(m: WorkerReply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    this.holdWhileBusy();
    if ('error' in m) return p.reject(m.code ? new SqliteError(m.error, m.code) : new Error(m.error));
    const r = m.ready;
    const ready: Ready = { ...r, json: asBuffer(r.json), gzip: r.gzip && asBuffer(r.gzip), br: r.br && asBuffer(r.br) };
    buildTimes.set(ready, m.ms);
    p.resolve(ready);
  }

  /**
   * A thread ended. Unless close() ended it, it died (a crash in native code, out of memory, an
   * uncaught error): the jobs it had in hand are tried once more on a fresh thread; a job that has
   * already had its second chance fails with a 503, never a 500 and never a hang.
   */
  private exited(worker: Worker, code: number, failure: Error | null): void {
    if (this.worker !== worker || this.closing) return;
    this.worker = null;
    this.deaths += 1;
    const why = failure ? `: ${failure.message}` : '';
    this.logger.error({ exit_code: code }, `build thread died (exit code ${code}${why}); ${this.pending.size} job(s) in hand are retried on a new thread`);
    for (const p of [...this.pending.values()]) {
      if (p.attempts < MAX_ATTEMPTS) continue;
      this.pending.delete(p.job.id);
      p.reject(unavailable('build_failed'));
    }
    if (this.pending.size === 0) return;
    const fresh = (this.worker = this.spawn());
    for (const p of this.pending.values()) this.post(fresh, p);
    this.holdWhileBusy();
  }

  private post(worker: Worker, p: Pending): void {
    p.attempts += 1;
    worker.postMessage(p.job);
  }

  run(job: WorkerJob): Promise<Ready> {
    return new Promise((resolve, reject) => {
      if (this.closing) return reject(unavailable('shutting_down'));
      const p: Pending = { job, attempts: 0, resolve, reject };
      this.pending.set(job.id, p);
      this.post((this.worker ??= this.spawn()), p);
      this.holdWhileBusy();
    });
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    for (const p of this.pending.values()) p.reject(unavailable('shutting_down'));
    this.pending.clear();
    const worker = this.worker;
    this.worker = null;
    this.closing = worker ? worker.terminate().then(() => undefined) : Promise.resolve();
    return this.closing;
  }
}

/** A stable thread index for a project id (FNV-1a of its characters). */
function threadOf(projectId: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < projectId.length; i++) h = Math.imul(h ^ projectId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % count;
}

/** What a build waits as, until a thread is free for it. */
interface Waiting {
  job: WorkerJob;
  account: string;
  /** The thread it must run on (a ranked list's pages), or -1 for any. */
  pin: number;
  resolve: (r: Ready) => void;
  reject: (e: Error) => void;
}

/**
 * Builds or rebuilds one account may have queued or running at once (ThreadBuilder): past it, a
 * request that needs a build gets the body the cache has, stale, or else a 429 with Retry-After.
 * Eight connections each waiting for one build stay under it; a JSON-RPC batch of many calls, or a
 * client firing without waiting, meets it.
 */
export const MAX_BUILDS_PER_ACCOUNT = 16;

export interface ThreadBuilderOptions {
  /** MAX_BUILDS_PER_ACCOUNT by default; 0: no cap. */
  maxPerAccount?: number;
}

/**
 * Threads one account may build on at once: all but one when there are two or more (runningCap).
 * A build in a thread is never preempted, so a thread no account can hold whole is what lets
 * another account's build start at once, however long the flooder's builds take.
 */
export function runningCap(threads: number): number {
  return Math.max(1, threads - 1);
}

/**
 * Builds in worker threads, so a slow body (a cold page, a 90-day series) never holds the event
 * loop: the loop only sends ready bytes and answers hits while a thread builds. A thread that dies
 * is replaced and its jobs retried once.
 *
 * A thread is handed one job at a time; the rest wait here, in a FairQueue: one queue per account
 * and per project within it, the account that has used the least build time served next (quick
 * builds take turns), so one account's backlog (many expensive reports on many connections) delays
 * another account's build by at most the builds already in a thread. With two threads or more an
 * account builds on all of them but one (runningCap): another account's build then finds a thread
 * idle, rather than waiting for the flooder's build in hand. Stale-while-revalidate
 * rebuilds wait behind every cold build. Handing one job at a time costs a
 * message round trip per build (well under a millisecond) and keeps the order decided here.
 */
export class ThreadBuilder implements Builder {
  built = 0;
  private readonly threads: BuildThread[];
  private readonly queue = new FairQueue<Waiting>();
  private readonly ledger = new AccountLedger();
  private readonly maxPerAccount: number;
  /** Threads one account may hold at once (runningCap): one is kept for the other accounts. */
  private readonly maxRunning: number;
  private nextId = 1;
  private closing: Promise<void> | null = null;

  /**
   * `cursorKey`: what signs the Links of pages (cursor.ts); absent, each thread reads the database's.
   * `start`: what starts a thread (builder-thread.ts in a worker).
   */
  constructor(dbFile: string, count: number, logger: Logger = silentLogger, cursorKey?: SigningKey, start: StartBuildThread = startBuildThread, o: ThreadBuilderOptions = {}) {
    this.threads = Array.from({ length: Math.max(1, count) }, () => new BuildThread(dbFile, start, logger, cursorKey));
    this.maxPerAccount = o.maxPerAccount ?? MAX_BUILDS_PER_ACCOUNT;
    this.maxRunning = runningCap(this.threads.length);
  }

  /** Jobs waiting for a thread are past the bound (QUEUED_PER_THREAD per thread): background rebuilds wait for a later request. */
  busy(): boolean {
    return this.queue.size >= QUEUED_PER_THREAD * this.threads.length;
  }

  /** Build threads that died so far (replaced on demand). */
  get threadDeaths(): number {
    return this.threads.reduce((n, t) => n + t.deaths, 0);
  }

  /** Jobs waiting for a thread, all accounts. */
  get queued(): number {
    return this.queue.size;
  }

  accounts(): ReadonlyMap<string, AccountBuilds> {
    return this.ledger.map;
  }

  build(job: BuildJob, background = false): Promise<Ready> {
    return new Promise((resolve, reject) => {
      if (this.closing) return reject(unavailable('shutting_down'));
      const account = job.args.accountId;
      const a = this.ledger.of(account);
      if (this.maxPerAccount > 0 && a.queued + a.running >= this.maxPerAccount) {
        a.refused += 1;
        return reject(overCap(this.maxPerAccount));
      }
      // A ranked list's walk pages through the list its first page pinned, kept by the thread that built it
      // (readmodels/paging.ts): a project's paged lists are built by one thread, so later pages find it.
      const pin = job.endpoint.page ? threadOf(job.args.projectId, this.threads.length) : -1;
      const w: Waiting = { job: { id: this.nextId++, endpoint: job.endpoint.name, args: job.args, scopes: job.scopes }, account, pin, resolve, reject };
      a.queued += 1;
      this.queue.push(account, job.args.projectId, w, background);
      this.dispatch();
    });
  }

  /**
   * Hands each idle thread the next job it may run, in the queue's fair order: a job pinned to
   * another thread waits for it, and so does a job of an account already building on all the
   * threads it may hold (runningCap), even with this one idle: it is kept for another account.
   */
  private dispatch(): void {
    if (this.queue.size === 0) return;
    for (let i = 0; i < this.threads.length && this.queue.size > 0; i++) {
      const thread = this.threads[i]!;
      if (thread.load > 0) continue;
      const taken = this.queue.take((x) => (x.pin < 0 || x.pin === i) && this.ledger.of(x.account).running < this.maxRunning);
      if (taken) this.run(thread, taken.item);
    }
    if (this.queue.size === 0) this.queue.forgetIdle();
  }

  private run(thread: BuildThread, w: Waiting): void {
    const a = this.ledger.of(w.account);
    a.queued -= 1;
    a.running += 1;
    const done = (): void => {
      a.running -= 1;
      this.dispatch();
    };
    const handed = performance.now();
    thread.run(w.job).then((ready) => {
      handedAt.set(ready, handed);
      const ms = buildTimeOf(ready);
      this.built += 1;
      a.builds += 1;
      a.buildMs += ms;
      this.queue.charge(w.account, ms);
      done();
      w.resolve(ready);
    }, (e: unknown) => {
      done();
      w.reject(e instanceof Error ? e : new Error(String(e)));
    });
  }

  close(): Promise<void> {
    if (!this.closing) {
      for (const w of this.queue.drain()) {
        this.ledger.of(w.account).queued -= 1;
        w.reject(unavailable('shutting_down'));
      }
      this.closing = Promise.all(this.threads.map((t) => t.close())).then(() => undefined);
    }
    return this.closing;
  }
}

/** The 429 of an account at its cap of builds (the cache answers with a stale body instead when it has one). */
function overCap(max: number): HttpError {
  return httpError('rate_limited', `Too many reports being built for this account (at most ${max} at once); retry after Retry-After`, { 'Retry-After': '1' });
}
