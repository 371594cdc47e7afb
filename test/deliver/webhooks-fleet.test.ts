// Two replicas of one service consume the same Kafka topic (group ids of their own) and join one
// webhooks group: only the holder of the leader topic's partition delivers. Killed with SIGKILL while
// a receiver holds its deliveries open, the other replica is handed the partition when the dead one's
// session expires, and delivers: every signal ends received (deduplicated by id), none lost.
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import t from 'tap';
import { kafkaConnectionFromEnv, produceFiles } from '../../src/ingest/kafka';
import { openDb, WebhookStore } from '../../src/store';
import { writeNdjson, W } from '../helpers/events';
import { testBroker } from '../helpers/broker';
import { tmpDir } from '../helpers/db';
import { request } from '../helpers/http';
import { startServe, type ServeProcess } from '../helpers/processes';
import { until } from '../helpers/wait';
import { HOOK, newSecret, periods, plantedWorld, Receiver, subscribed } from '../helpers/webhooks';

t.test('kill -9 of the replica that delivers: the other takes over, every signal ends received', async (t) => {
  const broker = await testBroker();
  t.teardown(() => broker.close());
  const topic = `hooks-${Date.now()}`;
  const leader = `${topic}-leader`;
  const admin = new Kafka({ brokers: [broker.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }, { topic: leader, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  await admin.disconnect();

  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  t.teardown(() => rx.close());
  rx.mode = 'hang';
  const dir = tmpDir('hooks-fleet-');
  const events = writeNdjson(path.join(dir, 'events.ndjson'), [...plantedWorld(2, 18), subscribed(HOOK, W.account, rx.url, secret)]);
  await produceFiles(kafkaConnectionFromEnv({ KAFKA_BROKERS: broker.brokers, KAFKA_LOG_LEVEL: 'error' }), topic, [events]);

  const env = (name: string): NodeJS.ProcessEnv => ({
    KAFKA_BROKERS: broker.brokers, KAFKA_TOPICS: topic, KAFKA_GROUP_ID: `${topic}-${name}`, KAFKA_DLQ_TOPIC: '', KAFKA_LOG_LEVEL: 'error',
    KAFKA_SESSION_TIMEOUT_MS: '6000', MAX_READY_LAG: '0', WEBHOOKS_TOPIC: leader, WEBHOOKS_GROUP: `${topic}-webhooks`,
  });
  const flags = ['--webhooks-allow-loopback', '--webhooks-grace', '0', '--webhooks-plan-every', '200', '--webhooks-retry-base', '200', '--build-threads', '0'];
  const replicas: Array<{ name: string; db: string; proc: ServeProcess }> = [];
  const launch = async (name: string): Promise<void> => {
    const db = path.join(dir, `${name}.db`);
    const proc = await startServe(['--db', db, ...flags], env(name));
    t.teardown(() => void (proc.child.exitCode === null && proc.child.signalCode === null && proc.child.kill('SIGKILL')));
    replicas.push({ name, db, proc });
  };
  const queued = (db: string): number => {
    if (!fs.existsSync(db)) return 0;
    const hooks = new WebhookStore(openDb(db, { readonly: true }));
    try {
      const c = hooks.counts();
      return c.pending + c.delivered + c.dead + c.cancelled;
    } finally {
      hooks.close();
    }
  };
  await launch('r1');
  t.ok(await until(() => rx.hung.length >= 1, 90_000, 100), 'the first replica delivers (the receiver holds its deliveries open)');
  // The second joins the group: the partition stays with the replica that delivers.
  await launch('r2');
  const [dead, survivor] = replicas as [typeof replicas[0], typeof replicas[0]];
  const caughtUp = async (): Promise<boolean> => {
    const r = await request(`${survivor.proc.ops}/readyz`);
    return r.status === 200 && (r.json as { kafka: { lag: number | null } }).kafka.lag === 0;
  };
  t.ok(await until(caughtUp, 60_000, 100), 'the second replica caught up');
  await new Promise((resolve) => setTimeout(resolve, 9000)); // past the rebalance its join caused, and many plan intervals
  t.ok(queued(dead.db) > 0, 'the first replica queued and sent');
  t.equal(queued(survivor.db), 0, 'the second queued nothing: exactly one replica delivers');
  t.match(dead.proc.stdout(), /webhooks: this replica delivers/);
  t.notMatch(survivor.proc.stdout(), /webhooks: this replica delivers/, 'the second waits');

  dead.proc.child.kill('SIGKILL');
  await dead.proc.exited;
  rx.mode = 'ok';
  const p = periods();
  const api = await request(`${survivor.proc.base}/projects/${W.project}/signals?start_date=${p.start}&end_date=${p.end}`, { headers: { 'x-api-key': W.key } });
  const expected = (api.json as { signals: unknown[] }).signals.length;
  t.ok(expected >= 1, `the API shows ${expected} signals`);
  t.ok(await until(() => rx.ids().size >= expected, 90_000, 100), 'the survivor took over and delivered every signal');
  t.match(survivor.proc.stdout(), /webhooks: this replica delivers/);
  for (const id of new Set(rx.hung)) t.ok(rx.ids().has(id), `the delivery cut by the kill was sent again: ${id}`);
  t.equal(rx.ids().size, expected, 'one per signal once deduplicated by id');
  t.same(rx.unverified, []);
  survivor.proc.child.kill('SIGTERM');
  t.equal((await survivor.proc.exited).code, 0);
});
