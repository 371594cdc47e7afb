// The export thread (export-thread.ts): exportData, progress and one outcome to the parent.
import { parentPort, workerData } from 'node:worker_threads';
import { DbOpenError } from '../store';
import { exportData } from './export';
import type { ExportJob, ExportMessage } from './export-thread';
import { ExportError } from './manifest';

const job = workerData as ExportJob;
const port = parentPort!;
const abort = new AbortController();
port.on('message', () => abort.abort());

function failure(e: unknown): ExportMessage {
  if (e instanceof ExportError) return { type: 'failed', error: { message: e.message, kind: 'export' } };
  if (e instanceof DbOpenError) return { type: 'failed', error: { message: e.message, kind: 'db-open', file: e.file, problem: e.problem } };
  const code = (e as { code?: unknown } | null)?.code;
  return { type: 'failed', error: { message: e instanceof Error ? e.message : String(e), kind: 'other', ...(typeof code === 'string' ? { code } : {}) } };
}

void exportData({ ...job, signal: abort.signal, onProgress: (progress) => port.postMessage({ type: 'progress', progress } satisfies ExportMessage) })
  .then((result): ExportMessage => ({ type: 'done', result }), failure)
  .then((outcome) => {
    port.postMessage(outcome);
    port.close(); // nothing more to hear: the thread ends
  });
