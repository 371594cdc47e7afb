// The replay thread (replay-thread.ts): one connection, replayFiles, progress and one outcome to the parent.
import { parentPort, workerData } from 'node:worker_threads';
import { closeDurably, openDb, Projector } from '../store';
import { replayFiles, SourceReadError } from './ndjson';
import type { ReplayJob, ReplayMessage } from './replay-thread';

const job = workerData as ReplayJob;
const port = parentPort!;
let stopAsked = false;
port.on('message', () => {
  stopAsked = true;
});

function failure(e: unknown): ReplayMessage {
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown } | null)?.code;
  return {
    type: 'failed',
    error: { message, ...(typeof code === 'string' ? { code } : {}), ...(e instanceof SourceReadError ? { sourceFile: e.file } : {}) },
  };
}

async function main(): Promise<ReplayMessage> {
  // A replay's commits need no fsync to survive the process: a kill loses nothing committed, and
  // the file is made durable at the end (closeDurably). An OS crash or a power loss during a replay
  // can leave the file damaged: replay again, into a fresh file (docs/operations.md).
  const db = openDb(job.dbFile, { fast: true, maxPageCount: job.maxPageCount, noSync: true });
  try {
    const totals = await replayFiles(db, new Projector(db), job.files, {
      batchSize: job.batchSize,
      fromStart: job.fromStart,
      shouldStop: () => stopAsked,
      onBatch: (t) => port.postMessage({ type: 'batch', lines: t.lines, skipped: t.skipped, bytes: t.bytes } satisfies ReplayMessage),
    });
    return { type: 'done', totals };
  } catch (e) {
    return failure(e);
  } finally {
    closeDurably(db);
  }
}

void main().catch(failure).then((outcome) => {
  port.postMessage(outcome);
  port.close(); // nothing more to hear: the thread ends
});
