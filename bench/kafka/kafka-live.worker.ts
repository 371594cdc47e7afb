// The live stream of `npm run bench:kafka`, in a worker thread so the load and the probes on the main
// thread cannot delay it: new run groups dated now of the world's projects (each project's latest
// generated group under new ids: run_group.started, its prompt runs, run_group.completed), keyed by
// project, at `rate` events/s for `seconds`. Every tick (100 ms) it first sends a probe group of its
// own (run_group.started and one prompt_run.completed in it) and reports the moment the broker
// acknowledged it: the main thread polls the API for that group.
// Messages out: {type:'probe'} per probe, {type:'done'} at the end, {type:'error'} on failure.
import { parentPort, workerData } from 'node:worker_threads';
import type { Message, Producer } from 'kafkajs';
import { kafkaOf, Pipeline, producerOf, sendAll } from './kafka-broker';
import type { GroupTemplate } from './kafka-world';

export interface StreamStart { brokers: string; topic: string; rate: number; seconds: number; templates: GroupTemplate[]; tag: string }
export type StreamMessage =
  | { type: 'probe'; group: string; run: string; project: string; ackedAt: number }
  | { type: 'done'; produced: number; seconds: number }
  | { type: 'error'; message: string };

const { brokers, topic, rate, seconds, templates, tag } = workerData as StreamStart;
const TICK_MS = 100;

let seq = 0;
/** A valid uuid unique to this run and phase: the tag (8 hex digits), a kind nibble, a counter. */
const uuid = (kind: number): string => `${tag}-000${kind}-4000-8000-${(++seq).toString(16).padStart(12, '0')}`;
/** Wall-clock milliseconds with sub-millisecond precision, comparable across threads. */
const nowMs = (): number => performance.timeOrigin + performance.now();

function event(type: string, data: Record<string, unknown>, now: string, key: string): Message {
  return { key, value: JSON.stringify({ event_id: uuid(3), type, schema_version: 1, occurred_at: now, data }) };
}

// Placeholders in a pre-serialized event: filling a template is a join, not a JSON.stringify of
// ~1.4 KB per event, so the stream reaches its rate on a busy machine.
const EID = '~~eid~~';
const ID = '~~id~~';
const GROUP = '~~group~~';
const NOW = '~~now~~';
const HOLES = new RegExp(`(${[EID, ID, GROUP, NOW].join('|')})`);

/** An event serialized once with placeholders, split into literal parts and holes. */
function compile(type: string, data: Record<string, unknown>): string[] {
  return JSON.stringify({ event_id: EID, type, schema_version: 1, occurred_at: NOW, data }).split(HOLES);
}

function fill(parts: string[], group: string, now: string): string {
  let out = '';
  for (const p of parts) out += p === EID ? uuid(3) : p === ID ? uuid(2) : p === GROUP ? group : p === NOW ? now : p;
  return out;
}

interface Compiled { key: string; started: string[]; runs: string[][]; completed: string[] }

const compiled: Compiled[] = templates.map((t) => ({
  key: t.project_id,
  started: compile('run_group.started', { ...t.started, id: GROUP, started_at: NOW }),
  runs: t.runs.map((r) => compile('prompt_run.completed', { ...r, id: ID, run_group_id: GROUP, completed_at: NOW })),
  completed: compile('run_group.completed', { ...t.completed, id: GROUP, completed_at: NOW }),
}));

/** The events of the stream's groups, one after another, each group dated when it is started. */
function* background(): Generator<Message> {
  for (let i = 0; ; i++) {
    const t = compiled[i % compiled.length]!;
    const group = uuid(1);
    const now = new Date().toISOString();
    yield { key: t.key, value: fill(t.started, group, now) };
    for (const r of t.runs) yield { key: t.key, value: fill(r, group, now) };
    yield { key: t.key, value: fill(t.completed, group, now) };
  }
}

function probeGroup(n: number): { messages: Message[]; group: string; run: string; project: string } {
  const t = templates[n % templates.length]!;
  const group = uuid(1);
  const run = uuid(2);
  const now = new Date().toISOString();
  return {
    group, run, project: t.project_id,
    messages: [
      event('run_group.started', { ...t.started, id: group, started_at: now }, now, t.project_id),
      event('prompt_run.completed', { ...t.runs[0]!, id: run, run_group_id: group, completed_at: now }, now, t.project_id),
    ],
  };
}

/** Probe events sent so far: they count toward the rate. */
let probeEvents = 0;

/** Every tick, a probe group of its own, sent alone: its acknowledgement is the start of its freshness. */
async function probing(producer: Producer, until: number): Promise<void> {
  let n = 0;
  while (performance.now() < until) {
    const tickStart = performance.now();
    const probe = probeGroup(n++);
    await sendAll(producer, topic, probe.messages);
    probeEvents += probe.messages.length;
    parentPort!.postMessage({ type: 'probe', group: probe.group, run: probe.run, project: probe.project, ackedAt: nowMs() } satisfies StreamMessage);
    const wait = TICK_MS - (performance.now() - tickStart);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

/** The stream's groups at `rate`: each tick sends what is due by then, up to 4 sends in flight. */
async function streaming(producer: Producer, started: number, until: number): Promise<number> {
  const source = background();
  const pipeline = new Pipeline(producer, topic, 4);
  let produced = 0;
  while (performance.now() < until) {
    const tickStart = performance.now();
    // Due by now at `rate`, probes included: a slow tick is caught up on the next, so the average holds.
    const due = Math.floor(((tickStart - started) / 1000) * rate) - produced - probeEvents;
    const batch: Message[] = [];
    for (let i = 0; i < due; i++) batch.push(source.next().value!);
    await pipeline.send(batch);
    produced += batch.length;
    const wait = TICK_MS - (performance.now() - tickStart);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await pipeline.flush();
  return produced;
}

async function main(): Promise<void> {
  const producer = producerOf(kafkaOf(brokers, 'bench-kafka-stream'));
  await producer.connect();
  const started = performance.now();
  const until = started + seconds * 1000;
  const probes = probing(producer, until);
  const produced = await streaming(producer, started, until);
  await probes;
  await producer.disconnect();
  parentPort!.postMessage({ type: 'done', produced: produced + probeEvents, seconds: (performance.now() - started) / 1000 } satisfies StreamMessage);
}

main().catch((e: unknown) => {
  parentPort!.postMessage({ type: 'error', message: e instanceof Error ? e.message : String(e) } satisfies StreamMessage);
});
