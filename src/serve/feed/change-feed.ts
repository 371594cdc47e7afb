import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Context } from 'koa';
import type { Endpoint, ReadStore } from '../../readmodels';
import { changesAfter, dataAsOf, oldestLoggedVersion, type ChangeKind, type LoggedChange } from '../../store';
import { httpError } from '../request/errors';
import type { Resolved, Responder } from '../http/responder';

/**
 * GET /projects/{project_id}/changes: the live change feed, as Server-Sent Events. One
 * `change` event per commit that changed the project's read models, its id the X-Data-Version the
 * project's responses carry from then on; `Last-Event-ID` resumes from the change log the writer
 * keeps (src/store/change-log.ts). Streams are not bodies: they bypass the body cache and the hot path.
 *
 * One timer serves every stream of the service: on each tick it asks the Access whether anything
 * was committed (a counter load, or PRAGMA data_version at most once per millisecond), and only
 * then re-checks each stream's key and project (a revoked key or share ends the stream) and sends
 * what the log gained. Heartbeats are comment lines, so proxies and clients see a live connection.
 */

export const CHANGES_PATH = '/projects/:project_id/changes';

export interface ChangeFeedOptions {
  /** A comment line after this long without writing (default 15 s). */
  heartbeatMs?: number;
  /** How often commits, revocations and draining are looked for (default 250 ms). */
  pollMs?: number;
  /** Open streams per API key (default 5); one more is a 429. */
  maxStreamsPerKey?: number;
  /** The reconnection delay the stream asks clients for (SSE `retry:`, default 2 s). */
  retryMs?: number;
  /** True once a graceful stop began: every stream ends, so the server can close. */
  isDraining?: () => boolean;
  /** Where a failure of the timer's work goes (its streams are ended); default: nowhere (createService passes its logger). */
  log?: (err: unknown) => void;
}

/**
 * The feed as the Responder sees it: a project-scoped route, so the key, the path id and the
 * project's visibility are checked exactly as for every other project route (401, 400, 404, same
 * messages). It has no body: build() is never called.
 */
export const CHANGES_ENDPOINT: Endpoint = {
  name: 'changes',
  path: CHANGES_PATH,
  summary: 'Live change feed of the project (Server-Sent Events)',
  scope: 'project',
  params: ['last_event_id'],
  schema: 'change-event',
  dependsOn: [],
  build: () => {
    throw new Error('the change feed is a stream, not a body');
  },
};

/** Past this many unsent bytes a client is not reading: its stream is cut rather than buffered. */
const MAX_BUFFERED_BYTES = 1 << 20;
/** Log rows read per query while catching a stream up. */
const CATCH_UP_ROWS = 256;

/**
 * Endpoint names by change kind, from each endpoint's dependsOn: the table the body cache keeps bodies
 * current by, so a feed never names less than what a client's cached copies may have lost.
 */
function endpointsByKind(endpoints: readonly Endpoint[]): Record<ChangeKind, readonly string[]> {
  const names = (k: ChangeKind): readonly string[] => endpoints.filter((e) => e.dependsOn.includes(k)).map((e) => e.name);
  return { engines: names('engines'), forum: names('forum'), project: names('project'), runs: names('runs'), setup: names('setup') };
}

interface Stream {
  res: ServerResponse;
  keyHash: string;
  projectId: string;
  /** The version of the last event sent (or where the stream started). */
  last: number;
  lastWriteAt: number;
  /** Stops listening to the connection (removal runs it once). */
  unlisten: () => void;
}

/** `Last-Event-ID` (or `?last_event_id=`, for clients that cannot set headers): a version, or null when absent. */
function lastEventId(ctx: Context): string | null {
  const header = ctx.get('last-event-id');
  if (header !== '') return header;
  const q = ctx.query.last_event_id;
  return typeof q === 'string' ? q : null;
}

const VERSION = /^(0|[1-9]\d{0,15})$/;

export class ChangeFeed {
  private readonly streams = new Set<Stream>();
  private readonly perKey = new Map<string, number>();
  private readonly byKind: Record<ChangeKind, readonly string[]>;
  /** Every endpoint with a body: what a reset or a kind this build does not know names. */
  private readonly all: readonly string[];
  private readonly heartbeatMs: number;
  private readonly pollMs: number;
  private readonly maxPerKey: number;
  private readonly retryMs: number;
  private readonly isDraining: () => boolean;
  private readonly log: (err: unknown) => void;
  private timer: NodeJS.Timeout | null = null;
  private generation = -1;

  constructor(private readonly responder: Responder, private readonly store: ReadStore, endpoints: readonly Endpoint[], o: ChangeFeedOptions = {}) {
    this.byKind = endpointsByKind(endpoints);
    this.all = endpoints.filter((e) => e.dependsOn.length > 0).map((e) => e.name);
    this.heartbeatMs = o.heartbeatMs ?? 15_000;
    this.pollMs = o.pollMs ?? 250;
    this.maxPerKey = o.maxStreamsPerKey ?? 5;
    this.retryMs = o.retryMs ?? 2000;
    this.isDraining = o.isDraining ?? (() => false);
    this.log = o.log ?? (() => undefined);
  }

  /** Streams open now (for tests and the log). */
  get open(): number {
    return this.streams.size;
  }

  /**
   * Answers GET/HEAD /projects/{id}/changes for a request admitted as every other (http/admission.ts:
   * ready, key, parameters, scope, rate). Throws HttpError (429: too many streams) before anything is written.
   */
  serve(ctx: Context, r: Resolved): void {
    const head = ctx.method === 'HEAD';
    if (!head && (this.perKey.get(r.keyHash) ?? 0) >= this.maxPerKey) {
      throw httpError('too_many_streams', `Too many open change streams for this API key (at most ${this.maxPerKey}); close one first`);
    }
    // Koa lets go of the response: the stream writes to it until it ends.
    ctx.status = 200;
    ctx.respond = false;
    const res = ctx.res;
    res.writeHead(200, streamHeaders());
    if (head) return void res.end();
    res.socket?.setNoDelay(true);
    const s: Stream = { res, keyHash: r.keyHash, projectId: r.args.projectId, last: r.version.version, lastWriteAt: performance.now(), unlisten: () => undefined };
    this.add(s);
    this.endWithConnection(s, ctx.req.socket);
    this.write(s, `retry: ${this.retryMs}\n\n`);
    // While stopping, a new stream ends at once: its client reconnects, to another instance.
    if (this.isDraining()) return this.end(s);
    this.start(s, r, lastEventId(ctx));
  }

  /**
   * The slot is given back however the stream ends. A response's 'close' is not enough: a request
   * pipelined behind another response has no socket yet, and its response never emits 'close' when
   * the connection goes (node drops it), so the slot would leak for good. The connection's own
   * 'close' (a close, a reset) and 'end' (the client half-closed: it asks nothing more, and node ends
   * our side) end every stream it carries.
   */
  private endWithConnection(s: Stream, socket: Socket): void {
    const gone = (): void => this.remove(s);
    s.res.once('close', gone);
    if (socket.destroyed || !socket.readable) return gone();
    socket.once('close', gone);
    socket.once('end', gone);
    s.unlisten = () => {
      s.res.off('close', gone);
      socket.off('close', gone);
      socket.off('end', gone);
    };
  }

  /** Where the stream starts: the events after Last-Event-ID, or `ready` (none sent), or `reset` (cannot resume). */
  private start(s: Stream, r: Resolved, last: string | null): void {
    const current = r.version.version;
    if (last === null) {
      this.event(s, 'ready', current, { project_id: s.projectId, data_version: current, data_as_of: dataAsOf(this.store, s.projectId) });
    } else if (this.canResume(s.projectId, last, current)) {
      s.last = Number(last);
    } else {
      this.event(s, 'reset', current, {
        project_id: s.projectId, data_version: current, endpoints: this.all, data_as_of: dataAsOf(this.store, s.projectId),
      });
    }
    this.catchUp(s);
  }

  /**
   * Whether every change after `last` is still in the log: the log is complete from its oldest row
   * up (pruning takes the oldest first), and versions are integers, so `oldest <= last + 1` says
   * nothing between `last` and the oldest row is missing. An id greater than the current version is
   * not of this data (another database, a made-up id).
   */
  private canResume(projectId: string, last: string, current: number): boolean {
    if (!VERSION.test(last)) return false;
    const v = Number(last);
    if (v > current) return false;
    if (v === current) return true;
    const oldest = oldestLoggedVersion(this.store, projectId);
    return oldest !== null && oldest <= v + 1;
  }

  /** Sends what the log holds after the stream's last event. */
  private catchUp(s: Stream): void {
    for (;;) {
      const rows = changesAfter(this.store, s.projectId, s.last, CATCH_UP_ROWS);
      for (const c of rows) if (this.streams.has(s)) this.change(s, c);
      if (rows.length < CATCH_UP_ROWS || !this.streams.has(s)) return;
    }
  }

  private change(s: Stream, c: LoggedChange): void {
    const names = new Set<string>();
    for (const k of c.kinds) for (const n of this.endpointsOf(k)) names.add(n);
    this.event(s, 'change', c.version, { project_id: s.projectId, data_version: c.version, endpoints: [...names], data_as_of: c.data_as_of });
    s.last = c.version;
  }

  /** A kind this build does not know (a newer writer's) could change anything. */
  private endpointsOf(kind: string): readonly string[] {
    return Object.hasOwn(this.byKind, kind) ? this.byKind[kind as ChangeKind] : this.all;
  }

  private event(s: Stream, type: string, id: number, data: unknown): void {
    this.write(s, `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private write(s: Stream, text: string): void {
    if (s.res.destroyed || s.res.writableEnded) return;
    if (s.res.writableLength > MAX_BUFFERED_BYTES) {
      this.remove(s);
      return void s.res.destroy();
    }
    s.res.write(text);
    s.lastWriteAt = performance.now();
  }

  private add(s: Stream): void {
    this.streams.add(s);
    this.perKey.set(s.keyHash, (this.perKey.get(s.keyHash) ?? 0) + 1);
    if (!this.timer) {
      this.generation = this.responder.refresh();
      this.timer = setInterval(() => this.tick(), this.pollMs);
      this.timer.unref();
    }
  }

  private remove(s: Stream): void {
    if (!this.streams.delete(s)) return;
    s.unlisten();
    const n = (this.perKey.get(s.keyHash) ?? 1) - 1;
    if (n > 0) this.perKey.set(s.keyHash, n);
    else this.perKey.delete(s.keyHash);
    if (this.streams.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private end(s: Stream): void {
    this.remove(s);
    s.res.end();
  }

  /** Allowed still: the key is known and not revoked, and its account sees the project (same check as a request). */
  private allowed(s: Stream): boolean {
    try {
      this.responder.resolve(CHANGES_ENDPOINT, { params: { project_id: s.projectId }, query: {}, keyHash: s.keyHash });
      return true;
    } catch {
      return false;
    }
  }

  private tick(): void {
    try {
      this.poll();
    } catch (err) {
      // A failed read (a storage error): the streams end and their clients reconnect, rather than
      // an exception escaping the timer and ending the process.
      this.log(err);
      this.close();
    }
  }

  private poll(): void {
    if (this.isDraining()) return this.close();
    const generation = this.responder.refresh();
    if (generation !== this.generation) {
      this.generation = generation;
      for (const s of [...this.streams]) {
        if (!this.allowed(s)) this.end(s);
        else this.catchUp(s);
      }
    }
    const now = performance.now();
    for (const s of this.streams) if (now - s.lastWriteAt >= this.heartbeatMs) this.write(s, ': heartbeat\n\n');
  }

  /** Ends every stream (graceful stop, service close): clients reconnect, to another instance. */
  close(): void {
    for (const s of [...this.streams]) this.end(s);
  }
}

function streamHeaders(): Record<string, string> {
  return {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // Proxies that buffer responses (nginx) would hold the events back.
    'x-accel-buffering': 'no',
  };
}
