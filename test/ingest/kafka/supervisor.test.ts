// The Kafka consumer's supervisor through the fake client (test/helpers/fake-kafka.ts): its state as
// status() and /readyz show it, restarts with backoff, the broker probe, and a clean stop.
//   starting until the first assignment, then consuming;
//   a crash kafkajs does not recover from: restarting, a fresh consumer after the delay, consuming once assigned;
//   a crash kafkajs recovers from itself: no second consumer, consuming again at the next fetch;
//   the broker probe failing: disconnected, /readyz degraded with the reason; answering again: consuming;
//   stop(): stopped, the consumer left, status() still answers.
import t, { type Test } from 'tap';
import { kafkaIngestConfigFromEnv, kafkaReadiness, startKafkaIngest, type KafkaIngest } from '../../../src/ingest/kafka';
import { freshDb } from '../../helpers/db';
import { FakeKafka } from '../../helpers/fake-kafka';
import { sleep, until } from '../../helpers/wait';

const TOPIC = 'events';
const config = kafkaIngestConfigFromEnv({ KAFKA_BROKERS: 'fake:9092', KAFKA_TOPICS: TOPIC, KAFKA_DLQ_TOPIC: '', KAFKA_LOG_LEVEL: 'nothing' });

async function started(t: Test, kafka: FakeKafka, logs: string[] = []): Promise<KafkaIngest> {
  const { db, projector } = freshDb(t);
  const ingest = await startKafkaIngest(db, projector, config, {
    client: kafka, log: (level, message) => logs.push(`${level} ${message}`), restartDelayMs: 30, lagPollMs: 30,
  });
  const alive = setInterval(() => undefined, 1000); // the fake has no sockets to keep the process alive
  t.teardown(async () => {
    await ingest.stop();
    clearInterval(alive);
  });
  return ingest;
}

t.test('starting until the first assignment, then consuming', async (t) => {
  const kafka = new FakeKafka();
  kafka.offsets.set(TOPIC, [{ partition: 0, low: 0, high: 40 }, { partition: 1, low: 5, high: 5 }]);
  const ingest = await started(t, kafka);
  t.equal(ingest.status().state, 'starting');
  t.same(kafka.latest.topics, [TOPIC], 'subscribed to the events topic');
  t.equal(ingest.status().lag, 40, 'before an assignment: the lag of every known partition');
  kafka.latest.assign([{ topic: TOPIC, partition: 1 }]);
  const s = ingest.status();
  t.equal(s.state, 'consuming');
  t.equal(s.lag, 0, 'assigned: the lag of the assigned partitions only');
  t.same(s.partitions.map((p) => [p.partition, p.assigned, p.lag]), [[0, false, 40], [1, true, 0]]);
});

t.test('a crash kafkajs does not recover from: restarted with a fresh consumer', async (t) => {
  const kafka = new FakeKafka();
  const logs: string[] = [];
  const ingest = await started(t, kafka, logs);
  kafka.latest.assign([{ topic: TOPIC, partition: 0 }]);
  const first = kafka.latest;
  first.crash(new Error('The group coordinator is not available'), false);
  t.equal(ingest.status().state, 'restarting');
  t.match(ingest.status().last_error, /^consumer crashed: The group coordinator is not available$/);
  t.match(kafkaReadiness(ingest.status(), true).status, 'degraded', '/readyz: serving the last data');
  t.ok(await until(() => kafka.consumers.length === 2, 5000), 'a fresh consumer after the delay');
  t.ok(first.stopped, 'the crashed one stopped first');
  kafka.latest.assign([{ topic: TOPIC, partition: 0 }]);
  t.equal(ingest.status().state, 'consuming');
  t.ok(logs.some((l) => /^warn restarting the Kafka consumer in 0\.0 s$/.test(l)), 'the restart is logged');
  t.ok(logs.some((l) => /^warn ingest restarting -> consuming$/.test(l)), 'the recovery is logged as a warning');
});

t.test('a crash kafkajs recovers from itself: no second consumer', async (t) => {
  const kafka = new FakeKafka();
  const ingest = await started(t, kafka);
  kafka.latest.assign([{ topic: TOPIC, partition: 0 }]);
  kafka.latest.crash(new Error('Request timed out'), true);
  t.equal(ingest.status().state, 'restarting');
  await sleep(100);
  t.equal(kafka.consumers.length, 1, 'kafkajs restarts it');
  kafka.latest.fetched();
  t.equal(ingest.status().state, 'consuming', 'the next fetch: consuming again');
});

t.test('the broker probe failing: disconnected and degraded; answering again: consuming', async (t) => {
  const kafka = new FakeKafka();
  const ingest = await started(t, kafka);
  kafka.latest.assign([{ topic: TOPIC, partition: 0 }]);
  kafka.down = true;
  t.ok(await until(() => ingest.status().state === 'disconnected', 5000), 'disconnected');
  const s = ingest.status();
  t.equal(s.last_error, 'cannot reach Kafka at fake:9092: connect ECONNREFUSED fake:9092');
  const r = kafkaReadiness(s, true);
  t.equal(r.ready, true, 'still ready: the last data is served');
  t.equal(r.status, 'degraded');
  t.match(r.reasons[0], /^Kafka disconnected \(fake:9092\) since .*: cannot reach Kafka at fake:9092: connect ECONNREFUSED fake:9092; serving the last data applied$/);
  kafka.down = false;
  t.ok(await until(() => ingest.status().state === 'consuming', 5000), 'consuming again');
});

t.test('stop(): stopped, the consumer left, status() still answers', async (t) => {
  const kafka = new FakeKafka();
  const ingest = await started(t, kafka);
  kafka.latest.assign([{ topic: TOPIC, partition: 0 }]);
  await ingest.stop();
  t.equal(ingest.status().state, 'stopped');
  t.ok(kafka.latest.stopped);
  t.same(kafka.latest.assign([{ topic: TOPIC, partition: 0 }]), [], 'an assignment after the stop seeks nothing');
  await ingest.stop(); // idempotent
});
