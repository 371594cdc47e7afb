// A build thread (see ThreadBuilder): answers WorkerJobs with ready bytes built on its own
// read-only connection. Everything slow about a cache miss happens here, off the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { ENDPOINTS, PageSnapshots } from '../../readmodels';
import { openReadStore, SqliteError } from '../../store';
import { BodySchemas } from './bodies';
import { signingKey } from '../request/cursor';
import { buildReady } from './ready-body';
import type { BuildThreadData, WorkerJob, WorkerReply } from './builders';
import { BUILD_NICE } from '../../lib/worker';
import { lowerThreadPriority } from '../../lib/thread-priority';

// Below the serving thread (BUILD_NICE): a rebuild never delays the answers the cache can give.
lowerThreadPriority(BUILD_NICE);

const data = workerData as BuildThreadData;
const store = openReadStore(data.dbFile);
// The service's key when it passed one (a configured secret), else the database's: the same either way.
const cursorKey = data.cursorKey ? Buffer.from(data.cursorKey) : signingKey(undefined, store);
const schemas = new BodySchemas();
const endpoints = new Map(ENDPOINTS.map((e) => [e.name, e]));
// This thread's kept lists of walks in progress: the builders send a project's paged jobs here.
const snapshots = new PageSnapshots();

function answer(job: WorkerJob): WorkerReply {
  try {
    const endpoint = endpoints.get(job.endpoint);
    if (!endpoint) throw new Error(`no endpoint named ${job.endpoint}`);
    const t0 = performance.now();
    const ready = buildReady(store, schemas, endpoint, job.args, job.scopes, cursorKey, snapshots);
    return { id: job.id, ready, ms: performance.now() - t0 };
  } catch (e) {
    // SQLite's code travels too: the serving thread tells a corrupt file from a bug by it.
    const code = e instanceof SqliteError ? e.code : undefined;
    return { id: job.id, error: e instanceof Error ? (e.stack ?? e.message) : String(e), ...(code ? { code } : {}) };
  }
}

parentPort!.on('message', (job: WorkerJob) => parentPort!.postMessage(answer(job)));
