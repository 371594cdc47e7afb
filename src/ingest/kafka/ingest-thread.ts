import { INGEST_HEAP_MB, startWorker } from '../../lib/worker';
import { flushLoggerSync, type Logger } from '../../lib/log';
import { KafkaUnavailableError, type LogLevelName } from './client';
import type { KafkaIngestConfig } from './config';
import { UNDRAINED, type KafkaIngest, type KafkaIngestOptions, type KafkaIngestStatus } from './consumer';

/** What the main thread hands the ingest thread: plain data only (structured clone). */
export interface ThreadStart {
  dbFile: string;
  /** The serving thread's commit counter (commitCounter()): it sees this thread's commits at once. */
  commits: SharedArrayBuffer;
  config: KafkaIngestConfig;
  opts: Pick<KafkaIngestOptions, 'chunkSize' | 'sliceMs' | 'lagPollMs' | 'restartDelayMs'>;
}

/** Messages from the ingest thread. */
export type ThreadMessage =
  | { type: 'started'; status: KafkaIngestStatus }
  | { type: 'failed'; message: string; setup: boolean }
  | { type: 'status'; status: KafkaIngestStatus; batchSeconds: number[] }
  | { type: 'log'; level: LogLevelName; message: string }
  | { type: 'stopped' };

/** How often the thread reports its status: the staleness of /readyz and the lag gauges. */
export const STATUS_EVERY_MS = 100;
// Short enough that a whole graceful stop (drain, this, checkpoint) stays within the 10 s an orchestrator waits.
const STOP_TIMEOUT_MS = 7_000;

/**
 * startKafkaIngest in a worker thread with its own SQLite connection: transactions, kafkajs and
 * the DLQ never run on the event loop that serves requests, so a slow transaction (cold pages of a
 * large database) cannot delay an answer. The serving connection sees each commit through SQLite's
 * data_version. Same contract as startKafkaIngest: rejects (KafkaUnavailableError for setup
 * problems) when consuming cannot start; status() is the thread's latest report.
 */
export function startKafkaIngestThread(start: ThreadStart, logger: Logger): Promise<KafkaIngest> {
  const worker = startWorker(__filename, start, { maxYoungGenerationSizeMb: 64, maxOldGenerationSizeMb: INGEST_HEAP_MB });
  let status: KafkaIngestStatus | null = null;
  let seconds: number[] = [];
  let stopped: Promise<void> | null = null;
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`Kafka ingest thread exited with code ${code} before it started`)));
    worker.on('message', (m: ThreadMessage) => {
      if (m.type === 'failed') {
        void worker.terminate();
        return reject(m.setup ? new KafkaUnavailableError(m.message) : new Error(m.message));
      }
      if (m.type === 'stopped') return void worker.terminate();
      if (m.type === 'log') return void logger[m.level]({ component: 'kafka' }, m.message);
      status = m.status;
      if (m.type === 'status') seconds.push(...m.batchSeconds.slice(0, UNDRAINED - seconds.length));
      if (m.type !== 'started') return;
      worker.removeAllListeners('error');
      worker.removeAllListeners('exit');
      // After start, a crash of the thread is a bug to see, not to hide: the process exits with it
      // (a replica that silently stopped ingesting would serve ever older data).
      worker.on('error', (e) => {
        logger.fatal({ err: e, component: 'kafka' }, 'Kafka ingest thread failed');
        flushLoggerSync(logger);
        process.exit(1);
      });
      worker.on('exit', (code) => {
        if (stopped) return;
        logger.fatal({ component: 'kafka', exit_code: code }, `Kafka ingest thread exited with code ${code}`);
        flushLoggerSync(logger);
        process.exit(1);
      });
      resolve({
        status: () => status!,
        drainBatchSeconds: () => {
          const out = seconds;
          seconds = [];
          return out;
        },
        stop: () => (stopped ??= new Promise<void>((done) => {
          worker.once('exit', () => done());
          worker.postMessage({ type: 'stop' });
          // A consumer that does not stop in time is ended with its thread: offsets are in SQLite.
          setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS).unref();
        })),
      });
    });
  });
}
