// The Kafka ingest thread (see startKafkaIngestThread): consumer, projector and DLQ on a
// connection of their own. Reports status every STATUS_EVERY_MS; stops on {type:'stop'}.
import { parentPort, workerData } from 'node:worker_threads';
import { INGEST_NICE } from '../../lib/worker';
import { lowerThreadPriority } from '../../lib/thread-priority';
import { adoptCommitCounter, openDb, Projector } from '../../store';
import { dedupedKafkaLog, isKafkaSetupError } from './client';
import { startKafkaIngest, type KafkaIngest } from './consumer';
import { STATUS_EVERY_MS, type ThreadMessage, type ThreadStart } from './ingest-thread';

const start = workerData as ThreadStart;
const send = (m: ThreadMessage): void => parentPort!.postMessage(m);

async function main(): Promise<void> {
  // Below the serving thread (INGEST_NICE); the precompute thread this one starts inherits it.
  lowerThreadPriority(INGEST_NICE);
  adoptCommitCounter(start.commits);
  // fast (synchronous=NORMAL, no fsync per commit): offsets commit with the facts, so what a power
  // loss takes back is consumed again from Kafka. FULL would cost an fsync per transaction.
  const db = openDb(start.dbFile, { fast: true });
  let ingest: KafkaIngest;
  try {
    // The serving thread writes the lines (one logger per process: src/lib/log.ts).
    const log = dedupedKafkaLog((level, message) => send({ type: 'log', level, message }), start.config.logLevel);
    ingest = await startKafkaIngest(db, new Projector(db), start.config, { ...start.opts, log });
  } catch (e) {
    db.close();
    send({ type: 'failed', message: e instanceof Error ? e.message : String(e), setup: isKafkaSetupError(e) });
    return;
  }
  send({ type: 'started', status: ingest.status() });
  const report = setInterval(() => send({ type: 'status', status: ingest.status(), batchSeconds: ingest.drainBatchSeconds() }), STATUS_EVERY_MS);
  parentPort!.on('message', (m: { type: string }) => {
    if (m.type !== 'stop') return;
    clearInterval(report);
    void ingest.stop().finally(() => {
      db.close();
      send({ type: 'stopped' }); // the main thread then ends this thread
    });
  });
}

void main();
