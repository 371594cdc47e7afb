// The Kafka consumer's write pipeline through the fake client (test/helpers/fake-kafka.ts): a real
// database, projector and precompute thread, batches handed over as kafkajs hands them.
//   records are applied once: a batch fetched again is skipped, an assignment resumes at SQLite's offsets;
//   the apply mode comes with each batch: far behind, catch-up transactions (250, 500, then 2,000
//   events); near the end, the configured size; the same data either way, and the same as a replay;
//   a batch that overfills the queue waits for room, heart-beating, and is written whole;
//   a failed transaction halts the queue until the consumer is restarted and reassigned.
import t, { type Test } from 'tap';
import { kafkaIngestConfigFromEnv, startKafkaIngest, type KafkaIngest, type KafkaIngestOptions } from '../../../src/ingest/kafka';
import { digest, Projector, type ApplyMode, type Db, type PrecomputedEvent } from '../../../src/store';
import { freshDb } from '../../helpers/db';
import { run, world, type Ev } from '../../helpers/events';
import { FakeKafka } from '../../helpers/fake-kafka';
import { until } from '../../helpers/wait';

const TOPIC = 'events';
const config = kafkaIngestConfigFromEnv({ KAFKA_BROKERS: 'fake:9092', KAFKA_TOPICS: TOPIC, KAFKA_DLQ_TOPIC: '', KAFKA_LOG_LEVEL: 'nothing' });

/** The tiny world, then `n` runs over a few weeks. */
function events(n: number): Ev[] {
  const runs = Array.from({ length: n }, (_, i) => run({ n: i + 1, day: `2026-01-${String(5 + (i % 20)).padStart(2, '0')}`, brand: (i % 3) + 1 }));
  return [...world(), ...runs];
}
const lines = (evs: Ev[]): string[] => evs.map((e) => JSON.stringify(e));

async function started(t: Test, db: Db, projector: Projector, kafka: FakeKafka, opts: KafkaIngestOptions = {}): Promise<KafkaIngest> {
  const ingest = await startKafkaIngest(db, projector, config, { client: kafka, log: () => undefined, restartDelayMs: 20, ...opts });
  // kafkajs's sockets keep a real consumer's process alive; the fake has none (the precompute thread is unref'd).
  const alive = setInterval(() => undefined, 1000);
  t.teardown(async () => {
    await ingest.stop();
    clearInterval(alive);
  });
  return ingest;
}

const nextOffset = (ingest: KafkaIngest): number | null => ingest.status().partitions.find((p) => p.partition === 0)?.next_offset ?? null;

/** The data of a file replay of the same events (one batch, settled). */
function replayDigest(t: Test, evs: Ev[]): string {
  const { db, projector } = freshDb(t);
  projector.applyBatch(evs.map((e, i) => ({ raw: JSON.stringify(e), source: 'file:x', position: i + 1 })), 'bulk');
  projector.settle();
  return digest(db);
}

t.test('records are applied once: redelivered ones skipped, an assignment resumes at the stored offsets', async (t) => {
  const { db, projector } = freshDb(t);
  const kafka = new FakeKafka();
  const ingest = await started(t, db, projector, kafka, { chunkSize: 100 });
  const evs = events(300);
  t.same(kafka.latest.assign([{ topic: TOPIC, partition: 0 }]), [{ topic: TOPIC, partition: 0, offset: 'earliest' }], 'nothing stored: from the earliest record');
  await kafka.latest.deliver(TOPIC, 0, 0, lines(evs.slice(0, 200)));
  t.ok(await until(() => nextOffset(ingest) === 200, 10_000), 'the first batch is written');
  t.same(kafka.latest.assign([{ topic: TOPIC, partition: 0 }]), [{ topic: TOPIC, partition: 0, offset: 200 }], 'a new assignment seeks to what SQLite holds');
  // kafkajs may fetch again what was already written (a group's offsets run ahead or behind SQLite's).
  await kafka.latest.deliver(TOPIC, 0, 150, lines(evs.slice(150)));
  t.ok(await until(() => nextOffset(ingest) === evs.length, 10_000), 'the rest is written');
  const s = ingest.status();
  t.equal(s.counters.events.applied, evs.length, 'every event applied once');
  t.equal(s.counters.redelivered, 50, 'the 50 records below the stored offset skipped');
  t.equal(s.state, 'consuming');
  t.equal(s.lag, 0, 'no lag left');
  await ingest.stop();
  t.equal(digest(db), replayDigest(t, evs), 'the data of a replay');
});

t.test('the apply mode comes with each batch: large transactions far behind, the configured size near the end', async (t) => {
  const evs = events(1000 - world().length);
  const digests: string[] = [];
  for (const far of [true, false]) {
    const { db, projector } = freshDb(t);
    const kafka = new FakeKafka();
    // Far behind: the topic holds 100,000 more records than this batch (from the probe and the batch alike).
    const high = far ? 100_000 : evs.length;
    kafka.offsets.set(TOPIC, [{ partition: 0, low: 0, high }]);
    const ingest = await started(t, db, projector, kafka, { chunkSize: 100 });
    kafka.latest.assign([{ topic: TOPIC, partition: 0 }]);
    await kafka.latest.deliver(TOPIC, 0, 0, lines(evs), high);
    t.ok(await until(() => nextOffset(ingest) === evs.length, 10_000), 'every record written');
    // Catching up, the first transactions take 250 then 500 events (growing to 2,000); live, chunkSize.
    t.equal(ingest.status().counters.batches, far ? 3 : 10, far ? '1,000 events in 250 + 500 + 250' : '1,000 events in 10 x 100');
    await ingest.stop();
    digests.push(digest(db));
  }
  t.equal(digests[0], digests[1], 'the same data whatever the mode');
  t.equal(digests[0], replayDigest(t, evs), 'and the same as a replay');
});

t.test('a batch that overfills the queue waits for room, heart-beating, and is written whole', async (t) => {
  const { db, projector } = freshDb(t);
  const kafka = new FakeKafka();
  const ingest = await started(t, db, projector, kafka, { chunkSize: 500 });
  const evs = events(9000);
  kafka.latest.assign([{ topic: TOPIC, partition: 0 }]);
  await kafka.latest.deliver(TOPIC, 0, 0, lines(evs));
  t.ok(kafka.latest.heartbeats >= 1, `the batch waited for room (${kafka.latest.heartbeats} heartbeats)`);
  t.ok(await until(() => nextOffset(ingest) === evs.length, 30_000), 'every record written');
  t.equal(ingest.status().counters.events.applied, evs.length);
});

/** A real projector whose next transaction fails, as on a full disk. */
class FailingOnce extends Projector {
  failNext = false;

  override applyPrecomputed(events: PrecomputedEvent[], mode?: ApplyMode): ReturnType<Projector['applyPrecomputed']> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database or disk is full');
    }
    return super.applyPrecomputed(events, mode);
  }
}

t.test('a failed transaction halts the queue; the restarted consumer resumes from SQLite', async (t) => {
  const { db } = freshDb(t);
  const projector = new FailingOnce(db);
  const kafka = new FakeKafka();
  const ingest = await started(t, db, projector, kafka, { chunkSize: 100 });
  const evs = events(200);
  kafka.latest.assign([{ topic: TOPIC, partition: 0 }]);
  await kafka.latest.deliver(TOPIC, 0, 0, lines(evs.slice(0, 100)));
  t.ok(await until(() => nextOffset(ingest) === 100, 10_000));
  projector.failNext = true;
  const first = kafka.latest;
  await first.deliver(TOPIC, 0, 100, lines(evs.slice(100)));
  t.ok(await until(() => ingest.status().state === 'restarting', 10_000), 'the consumer is restarted as after a crash');
  t.match(ingest.status().last_error, /consumer crashed: database or disk is full/);
  await t.rejects(first.deliver(TOPIC, 0, 100, lines(evs.slice(100))), /disk is full/, 'halted: the next batch is refused (kafkajs fetches it again)');
  t.ok(await until(() => kafka.consumers.length === 2, 10_000), 'a fresh consumer is started');
  t.ok(first.stopped, 'the old one stopped');
  t.same(kafka.latest.assign([{ topic: TOPIC, partition: 0 }]), [{ topic: TOPIC, partition: 0, offset: 100 }], 'it resumes at what SQLite holds');
  await kafka.latest.deliver(TOPIC, 0, 100, lines(evs.slice(100)));
  t.ok(await until(() => nextOffset(ingest) === evs.length, 10_000), 'the rest written once');
  t.equal(ingest.status().state, 'consuming');
  t.equal(ingest.status().counters.events.applied, evs.length);
});
