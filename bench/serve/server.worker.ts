// Applies an event file on a connection of its own in a worker thread, the way `serve` runs the
// Kafka consumer (src/ingest/kafka/ingest-thread.ts): same Projector, same time-sliced transactions.
import { parentPort, workerData } from 'node:worker_threads';
import { readLines, SlicedApplier } from '../../src/ingest';
import { adoptCommitCounter, openDb, Projector, type SourceEvent } from '../../src/store';

const { dbFile, file, commits } = workerData as { dbFile: string; file: string; commits: SharedArrayBuffer };

async function main(): Promise<void> {
  adoptCommitCounter(commits);
  const db = openDb(dbFile, { fast: true });
  const events: SourceEvent[] = [];
  let n = 0;
  for await (const raw of readLines(file)) events.push({ raw, source: `bench:${file}`, position: ++n });
  const slices: number[] = [];
  const applier = new SlicedApplier(new Projector(db), { budgetMs: 8, onBatch: (_r, s) => slices.push(s * 1000) });
  parentPort!.postMessage({ type: 'loaded' });
  const started = performance.now();
  await applier.apply(events);
  const seconds = (performance.now() - started) / 1000;
  db.close();
  parentPort!.postMessage({ type: 'done', events: events.length, seconds, slices: slices.length, slowest_slice_ms: Math.max(0, ...slices) });
}

void main();
