// The live stream of the soak (bench/soak/soak.ts), in a worker thread so the load generator's event loop
// cannot delay it: new run groups dated now, one project after another, each the project's latest
// generated group under new ids (run_group.started, its prompt runs, run_group.completed), produced
// at `rate` events/s with the project id as key, as upstream would.
// Messages out: {type:'ready'} once connected (it then waits for 'go'), {type:'progress', produced, groups,
// lastGroup} every tick, and {type:'done', ...} after 'stop'.
import { parentPort, workerData } from 'node:worker_threads';
import { createKafkaClient, kafkaConnectionFromEnv, produceLines } from '../../src/ingest/kafka';
import type { GroupTemplate } from './soak-world';

interface Start { brokers: string; topic: string; rate: number; templates: GroupTemplate[]; tag: string }
export interface LastGroup { id: string; project_id: string; runs: number }
export interface ProducerReport { type: 'ready' | 'progress' | 'done' | 'error'; produced: number; groups: number; lastGroup: LastGroup | null; message?: string }

const { brokers, topic, rate, templates, tag } = workerData as Start;
const TICK_MS = 100;

let seq = 0;
/** A valid uuid unique to this run: the run's tag, a kind nibble, a counter. */
const uuid = (kind: number): string => `${tag}-000${kind}-4000-8000-${(++seq).toString(16).padStart(12, '0')}`;

/** The events of the next group, dated now, and what the soak checks once they are applied. */
function* groups(): Generator<{ lines: string[]; group: LastGroup }> {
  for (let i = 0; ; i++) {
    const t = templates[i % templates.length]!;
    const id = uuid(1);
    const now = new Date().toISOString();
    const line = (type: string, data: Record<string, unknown>): string =>
      JSON.stringify({ event_id: uuid(3), type, schema_version: 1, occurred_at: now, data });
    const lines = [line('run_group.started', { ...t.started, id, started_at: now })];
    for (const r of t.runs) lines.push(line('prompt_run.completed', { ...r, id: uuid(2), run_group_id: id, completed_at: now }));
    lines.push(line('run_group.completed', { ...t.completed, id, completed_at: now }));
    yield { lines, group: { id, project_id: t.project_id, runs: t.runs.length } };
  }
}

async function main(): Promise<void> {
  const client = createKafkaClient(kafkaConnectionFromEnv({ KAFKA_BROKERS: brokers, KAFKA_LOG_LEVEL: 'error' }), () => {});
  const producer = client.producer();
  await producer.connect();
  let stopping = false;
  let go: () => void = () => {};
  const going = new Promise<void>((r) => (go = r));
  parentPort!.on('message', (m: { type: string }) => {
    if (m.type === 'go') go();
    if (m.type === 'stop') {
      stopping = true;
      go();
    }
  });
  // Connected and loaded: the stream starts with the load, not a start-up later.
  parentPort!.postMessage({ type: 'ready', produced: 0, groups: 0, lastGroup: null } satisfies ProducerReport);
  await going;
  const source = groups();
  let pending: string[] = [];
  let pendingGroup: LastGroup | null = null;
  let produced = 0;
  let groupsDone = 0;
  let lastGroup: LastGroup | null = null;
  const started = performance.now();
  while (!stopping) {
    const tickStart = performance.now();
    // Due by now at `rate`: a slow send is caught up on the next tick, so the average rate holds.
    const due = Math.floor(((tickStart - started) / 1000) * rate) - produced;
    const batch: string[] = [];
    while (batch.length < due) {
      if (pending.length === 0) {
        const g = source.next().value!;
        pending = g.lines;
        pendingGroup = g.group;
      }
      batch.push(...pending.splice(0, due - batch.length));
      if (pending.length === 0) {
        groupsDone += 1;
        lastGroup = pendingGroup;
      }
    }
    if (batch.length > 0) await produceLines(producer, topic, batch, { batchSize: 2000 });
    produced += batch.length;
    parentPort!.postMessage({ type: 'progress', produced, groups: groupsDone, lastGroup } satisfies ProducerReport);
    const wait = TICK_MS - (performance.now() - tickStart);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  // The group being produced is finished, so every group on the topic is whole.
  if (pending.length > 0) {
    await produceLines(producer, topic, pending, { batchSize: 2000 });
    produced += pending.length;
    groupsDone += 1;
    lastGroup = pendingGroup;
  }
  await producer.disconnect();
  parentPort!.postMessage({ type: 'done', produced, groups: groupsDone, lastGroup } satisfies ProducerReport);
}

main().catch((e: unknown) => {
  parentPort!.postMessage({ type: 'error', produced: 0, groups: 0, lastGroup: null, message: e instanceof Error ? e.message : String(e) } satisfies ProducerReport);
});
