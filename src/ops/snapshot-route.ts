// GET /snapshot: a consistent copy of the served database (store/snapshot.ts: Kafka offsets and data
// versions inside), written to a temporary file beside it, then streamed with its length, SHA-256 and
// schema version in headers, so a new replica can check what it downloaded (serve --bootstrap-from).
//
// Several replicas may bootstrap at once, and one of them may be slow: readers that arrive while a
// copy is fresh share it (one copy per burst, not one per reader), each reader has deadlines of its
// own (idle, and an overall one from a minimum rate) so a stalled one is cut and frees its share,
// and the number of readers is capped. A copy is removed when its last reader is done.
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import type { Logger } from '../lib/log';
import { knownSchemaVersion, SNAPSHOT_SCHEMA_HEADER, SNAPSHOT_SHA256_HEADER, SNAPSHOT_SHARD_HEADER, writeSnapshot, type SnapshotInfo } from '../store';
import { httpError, type HttpError } from '../serve/request/errors';

export interface SnapshotLimits {
  /** Readers served at once (waiting for a copy or reading one); one more gets 503 with Retry-After. */
  maxReaders: number;
  /** A copy at most this old (ms since it was started) is shared with a reader that arrives. */
  freshMs: number;
  /** Copies on disk at once (each as large as the database): past it, a reader shares the newest, however old. */
  maxCopies: number;
  /** A reader that takes no bytes for this long (ms) is cut. */
  idleMs: number;
  /** A reader must take the whole copy within graceMs + bytes / minBytesPerSecond, or it is cut. */
  minBytesPerSecond: number;
  graceMs: number;
}

export const DEFAULT_SNAPSHOT_LIMITS: SnapshotLimits = {
  maxReaders: 4, freshMs: 60_000, maxCopies: 2, idleMs: 30_000, minBytesPerSecond: 256 * 1024, graceMs: 60_000,
};

/**
 * Where a snapshot is copied before it is streamed: `.<db file name>.snapshot-<pid>-<random>`, beside
 * the database. The name says which database and which process the copy belongs to.
 */
const snapshotDirPrefix = (dbFile: string): string => `.${path.basename(dbFile)}.snapshot-`;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

/**
 * Copies of `dbFile` left by a process that died while sending one (kill -9, a crash): each is as
 * large as the database. Removed when an ops port starts; a copy whose process still runs is left alone.
 */
export function removeOrphanedSnapshots(dbFile: string): void {
  const dir = path.dirname(dbFile);
  const prefix = snapshotDirPrefix(dbFile);
  for (const name of fs.readdirSync(dir)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

interface Copy {
  dir: string;
  file: string;
  /** Date.now() when the copy was started. */
  started: number;
  ready: Promise<SnapshotInfo>;
  info: SnapshotInfo | null;
  /** Readers holding it (waiting for it or reading it): removed from disk when this drops to 0. */
  users: number;
}

export type SnapshotHandler = (req: http.IncomingMessage, res: http.ServerResponse, fail: (res: http.ServerResponse, err: HttpError) => void) => void;

export function snapshotHandler(dbFile: string, limits: Partial<SnapshotLimits> = {}, logger?: Logger): SnapshotHandler {
  const l: SnapshotLimits = { ...DEFAULT_SNAPSHOT_LIMITS, ...limits };
  const copies: Copy[] = []; // oldest first
  let readers = 0;
  removeOrphanedSnapshots(dbFile);

  const makeCopy = (): Copy => {
    // Beside the database, not in /tmp: the copy is as large as the file, and that disk is sized for it.
    const dir = fs.mkdtempSync(path.join(path.dirname(dbFile), `${snapshotDirPrefix(dbFile)}${process.pid}-`));
    const file = path.join(dir, 'snapshot.db');
    const copy: Copy = { dir, file, started: Date.now(), ready: writeSnapshot(dbFile, file), info: null, users: 0 };
    copy.ready = copy.ready.then((info) => (copy.info = info), (err: unknown) => {
      forget(copy); // a failed copy is shared with no one else
      throw err;
    });
    copies.push(copy);
    return copy;
  };
  const forget = (copy: Copy): void => {
    const i = copies.indexOf(copy);
    if (i >= 0) copies.splice(i, 1);
  };
  const release = (copy: Copy): void => {
    readers -= 1;
    copy.users -= 1;
    if (copy.users > 0) return;
    forget(copy);
    // A reader's open descriptor keeps the bytes until it closes: removing the path is safe at any time.
    fs.rmSync(copy.dir, { recursive: true, force: true });
  };
  /** The newest copy while it is fresh, or when no more copies may be made; otherwise a new one. */
  const pick = (): Copy => {
    const newest = copies.at(-1);
    if (newest && (Date.now() - newest.started <= l.freshMs || copies.length >= l.maxCopies)) return newest;
    return makeCopy();
  };

  const head = (res: http.ServerResponse): void => {
    // Never a copy for HEAD: the headers of the newest finished copy if there is one, else the schema version only.
    const info = [...copies].reverse().find((c) => c.info)?.info;
    res.writeHead(200, {
      'content-type': 'application/vnd.sqlite3', 'cache-control': 'no-store',
      [SNAPSHOT_SCHEMA_HEADER]: String(info?.schemaVersion ?? knownSchemaVersion()),
      ...(info ? { 'content-length': String(info.bytes), [SNAPSHOT_SHA256_HEADER]: info.sha256 } : {}),
      ...(info?.shard ? { [SNAPSHOT_SHARD_HEADER]: info.shard } : {}),
    });
    res.end();
  };

  return (req, res, fail) => {
    if (req.method === 'HEAD') return head(res);
    if (readers >= l.maxReaders) {
      return fail(res, httpError('not_ready', `${readers} snapshot readers are being served, the most at once: retry shortly`));
    }
    readers += 1;
    const copy = pick();
    copy.users += 1;
    let released = false;
    const done = (): void => {
      if (released) return;
      released = true;
      release(copy);
    };
    res.once('close', done); // the client went away, or the answer ended: either way this reader is done
    copy.ready.then((info) => {
      if (res.destroyed) return done();
      const stream = fs.createReadStream(copy.file);
      res.writeHead(200, {
        'content-type': 'application/vnd.sqlite3', 'content-length': String(info.bytes), 'cache-control': 'no-store',
        [SNAPSHOT_SHA256_HEADER]: info.sha256, [SNAPSHOT_SCHEMA_HEADER]: String(info.schemaVersion),
        ...(info.shard ? { [SNAPSHOT_SHARD_HEADER]: info.shard } : {}),
      });
      let sent = 0;
      const cut = (why: string): void => {
        logger?.warn({ peer: req.socket.remoteAddress, sent, bytes: info.bytes }, `snapshot reader cut: ${why} (${sent} of ${info.bytes} bytes sent)`);
        res.destroy();
      };
      const idle = setTimeout(() => cut(`took nothing for ${l.idleMs / 1000} s`), l.idleMs).unref();
      const overallMs = l.graceMs + (info.bytes * 1000) / l.minBytesPerSecond;
      const overall = setTimeout(() => cut(`not done within ${(overallMs / 1000).toFixed(1)} s (below ${l.minBytesPerSecond} bytes/s)`), overallMs).unref();
      // A chunk is read only once the socket has taken the previous one (pipe's backpressure): a
      // reader that stops reading stops the chunks, and the idle deadline fires.
      stream.on('data', (c: string | Buffer) => {
        sent += c.length;
        idle.refresh();
      });
      res.once('close', () => {
        clearTimeout(idle);
        clearTimeout(overall);
        stream.destroy();
      });
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    }, (err: unknown) => {
      if (!res.destroyed) fail(res, httpError('internal', `snapshot failed: ${err instanceof Error ? err.message : String(err)}`));
      done();
    });
  };
}
