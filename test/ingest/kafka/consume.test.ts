// Kafka ingestion against a real broker of this file's own (test/helpers/kafka-ingest.ts):
//   demo produced with `produce` -> same digest as a file replay; produced again -> nothing changes;
//   the offsets that count are SQLite's, not the group's;
//   records from Kafka's own console producer are applied;
//   poison records reach the dead letters and the DLQ topic (with headers) while consumption goes on.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { DLQ_HEADERS, eventKey, produceFiles } from '../../../src/ingest/kafka';
import { digest } from '../../../src/store';
import { DEMO_FILE } from '../../helpers/demo';
import { ev, id, run, W, world, writeNdjson } from '../../helpers/events';
import { tmpDir } from '../../helpers/db';
import { runCli } from '../../helpers/processes';
import { sleep } from '../../helpers/wait';
import { admin, BROKER, conn, consume, endOffsets, freshTopic, lines, produceMessages, replayDigest, script, settled, testLog, useTestBroker, waitFor, withAdmin } from '../../helpers/kafka-ingest';

useTestBroker();

t.test('demo events through Kafka', async (t) => {
  const topic = await freshTopic();
  const demoDigest = await replayDigest(DEMO_FILE);
  const count = (await produceFiles(conn, topic, [DEMO_FILE], { log: testLog })).sent;
  const ends = await endOffsets(topic);
  t.equal(ends.reduce((a, b) => a + b, 0), count, `${count} records on ${topic}`);
  const first = await consume(t, topic);

  await t.test('produced with produce(), consumed: the digest of a file replay', async (t) => {
    await waitFor('the demo to be applied', 90_000, () => settled(first.db, topic, ends));
    t.equal(digest(first.db), demoDigest);
    const s = first.ingest.status();
    t.equal(s.counters.events.applied + s.counters.events.duplicate + s.counters.events.stale, count, 'every record went through the projector once');
    t.equal(s.counters.events.dead_lettered, 0);
    await waitFor('lag 0 in status()', 10_000, () => first.ingest.status().lag === 0);
    t.same(first.ingest.status().partitions.map((p) => [p.partition, p.assigned, p.next_offset, p.high_watermark, p.lag]),
      ends.map((end, p) => [p, true, end, end, 0]), 'per-partition offsets and lag');
    t.ok(s.counters.batch_apply_seconds.count > 0 && s.counters.batch_apply_seconds.sum > 0, 'batch apply time recorded');
  });

  await t.test('produced again (duplicate deliveries): nothing changes', async (t) => {
    const before = first.ingest.status().counters.events;
    await produceFiles(conn, topic, [DEMO_FILE], { log: testLog });
    const ends2 = await endOffsets(topic);
    await waitFor('the copies to be consumed', 90_000, () => settled(first.db, topic, ends2));
    t.equal(digest(first.db), demoDigest, 'same digest');
    const after = first.ingest.status().counters.events;
    t.equal(after.applied, before.applied, 'no copy was applied');
    t.equal((after.duplicate - before.duplicate) + (after.stale - before.stale), count, 'every copy counted as duplicate or stale');
    ends.splice(0, ends.length, ...ends2);
  });

  await t.test('the offsets that count are in SQLite, not in the consumer group', async (t) => {
    // Idle for a while: a fetch is waiting at the broker for records that do not come. A stop waits
    // for it, so it must not wait long (SIGTERM: an orchestrator kills after ~10 s).
    await sleep(1000);
    const stopping = performance.now();
    await first.ingest.stop();
    const stopMs = performance.now() - stopping;
    t.ok(stopMs < 2500, `an idle consumer stopped in ${stopMs.toFixed(0)} ms (under 2.5 s)`);
    const groupId = `g-${topic}`;
    await withAdmin((a) => a.setOffsets({ groupId, topic, partitions: ends.map((_, partition) => ({ partition, offset: '0' })) }));
    const again = await consume(t, topic, first.file);
    // The seek to the stored offsets is committed to the group too (for lag monitoring).
    await waitFor('the group offsets to follow SQLite', 30_000, async () => {
      const [committed] = await withAdmin((a) => a.fetchOffsets({ groupId, topics: [topic] }));
      return committed!.partitions.every((p) => Number(p.offset) === ends[p.partition]);
    }, 250);
    const c = again.ingest.status().counters;
    t.same([c.events.applied, c.events.duplicate, c.redelivered, c.batches], [0, 0, 0, 0], 'group rewound to 0: nothing fetched again');
    await again.ingest.stop();
    again.db.close();

    // A fresh database in the same group (whose offsets say "done") still reads everything.
    const fresh = await consume(t, topic);
    await waitFor('a fresh database to catch up', 90_000, () => settled(fresh.db, topic, ends));
    t.equal(digest(fresh.db), demoDigest);
  });
});

t.test('`visibility-api produce` to a topic that does not exist yet: one summary line, no kafkajs error on the way', async (t) => {
  // The broker creates the topic on the first metadata request and answers "does not host this
  // topic-partition" until it has; kafkajs asks again. That retry used to print "kafka error: ...".
  const topic = `new-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
  const dir = tmpDir('kafka-produce-cli-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = writeNdjson(path.join(dir, 'events.ndjson'), world());
  const out = await runCli(['produce', '--brokers', BROKER, '--topic', topic, '--quiet', file], { KAFKA_LOG_LEVEL: 'warn' });
  t.equal(out.code, 0, 'exit 0');
  t.match(out.stdout, new RegExp(`^produced ${world().length} events to ${topic} in `), 'the summary line');
  t.equal(out.stderr, '', 'nothing on stderr');
  t.equal((await endOffsets(topic)).reduce((a, b) => a + b, 0), world().length, 'every event on the new topic');
});

t.test("events produced by Kafka's own console producer are applied", async (t) => {
  const topic = await freshTopic();
  const events = [...world(), run({ n: 1, brand: 1, sentiment: 0.5, competitor: 2, citations: ['https://acme.com/a'] }),
    run({ n: 2, engine: W.engineB, brand: null, competitor: 1 }), run({ n: 3, prompt: W.prompt2, day: '2026-01-06', brand: 2 })];
  const dir = tmpDir('kafka-console-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const plain = writeNdjson(path.join(dir, 'events.ndjson'), events);
  const keyed = path.join(dir, 'keyed.tsv');
  fs.writeFileSync(keyed, lines(events).map((l) => `${eventKey(l)}\t${l}`).join('\n') + '\n');
  await script('kafka-console-produce.sh', ['--keyed', topic, keyed], 120_000);
  const ends = await endOffsets(topic);
  t.equal(ends.reduce((a, b) => a + b, 0), events.length, 'the console producer wrote every line');
  const c = await consume(t, topic);
  await waitFor('the events to be applied', 60_000, () => settled(c.db, topic, ends));
  t.equal(digest(c.db), await replayDigest(plain), 'same digest as a file replay');
  t.equal(c.ingest.status().counters.events.dead_lettered, 0);
});

t.test('poison records: dead letters in the table and on the DLQ topic, consumption goes on', async (t) => {
  const topic = await freshTopic();
  const notUtf8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"<ff><fe>"}
  const poison: Array<{ value: Buffer | string; reason: string }> = [
    { value: '{"event_id": not json', reason: 'unparseable' },
    { value: notUtf8, reason: 'unparseable' },
    { value: JSON.stringify(ev('no.such.type', { id: id(9) })), reason: 'unknown_type' },
    { value: JSON.stringify(ev('account.upserted', { account_id: 'not-a-uuid', name: 'X' })), reason: 'invalid_payload' },
  ];
  const valid = lines([...world(), run({ n: 1, brand: 1 })]);
  // One key: everything in one partition, the poison first, so what follows it must still be applied.
  await produceMessages(topic, [...poison.map((p) => ({ key: W.project, value: p.value })), ...valid.map((v) => ({ key: W.project, value: v }))]);
  const ends = await endOffsets(topic);
  const c = await consume(t, topic);
  await waitFor('everything to be consumed', 60_000, () => settled(c.db, topic, ends));

  const dir = tmpDir('kafka-poison-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  t.equal(digest(c.db), await replayDigest(writeNdjson(path.join(dir, 'valid.ndjson'), valid)), 'the valid events after the poison are applied');

  type Row = { source: string; position: number; reason: string; raw: Buffer; published_at: string | null };
  const rows = c.db.prepare('SELECT source, position, reason, raw, published_at FROM dead_letters ORDER BY position').all() as Row[];
  t.same(rows.map((r) => r.reason), poison.map((p) => p.reason), 'each poison record dead-lettered, with its reason');
  t.ok(rows.every((r, i) => r.raw.equals(Buffer.from(poison[i]!.value))), 'raw bytes kept exactly (not-UTF-8 included)');
  const partition = Number(rows[0]!.source.split(':').pop());
  t.ok(rows.every((r, i) => r.source === `kafka:${topic}:${partition}` && r.position === i), 'source and offset');
  await waitFor('the dead letters to be published', 30_000, () =>
    c.db.prepare('SELECT count(*) FROM dead_letters WHERE published_at IS NULL').pluck().get() === 0 && c.ingest.status().dlq?.pending === 0);
  t.equal(c.ingest.status().dlq?.published, poison.length);

  // Read the DLQ topic with a plain kafkajs consumer.
  const reader = admin.consumer({ groupId: `dlq-reader-${topic}` });
  await reader.connect();
  t.teardown(() => reader.disconnect());
  await reader.subscribe({ topics: [`${topic}.dlq`], fromBeginning: true });
  const got: Array<{ value: Buffer; key: Buffer | null; headers: Record<string, string> }> = [];
  await reader.run({
    eachMessage: async ({ message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
      got.push({ value: message.value ?? Buffer.alloc(0), key: message.key, headers });
    },
  });
  await waitFor('4 records on the DLQ topic', 60_000, () => got.length >= poison.length, 200);
  got.sort((a, b) => Number(a.headers[DLQ_HEADERS.offset]) - Number(b.headers[DLQ_HEADERS.offset]));
  t.equal(got.length, poison.length, 'each dead letter once');
  got.forEach((m, i) => {
    t.ok(m.value.equals(Buffer.from(poison[i]!.value)), `record ${i}: the raw bytes`);
    t.equal(m.key, null, `record ${i}: no key`);
    t.match(m.headers, {
      [DLQ_HEADERS.reason]: poison[i]!.reason, [DLQ_HEADERS.topic]: topic, [DLQ_HEADERS.partition]: String(partition),
      [DLQ_HEADERS.offset]: String(i), [DLQ_HEADERS.detail]: /\S/,
    }, `record ${i}: headers`);
  });
});
