// Kafka ingestion through crashes, against a real broker of this file's own (test/helpers/kafka-ingest.ts):
//   the `serve` process SIGKILLed at random points of a large stream (seeded trials) ends with the
//   digest of a clean replay.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { produceFiles } from '../../../src/ingest/kafka';
import { openDb } from '../../../src/store';

import { sleep } from '../../helpers/wait';
import { mulberry32 } from '../../../fixtures/random';
import { alive, caughtUp, conn, dbDigest, endOffsets, freshTopic, generatedStream, startService, terminate, testLog, useTestBroker, waitFor } from '../../helpers/kafka-ingest';

useTestBroker();

t.test('killed with SIGKILL at random points of a stream, in seeded trials: the digest of a clean replay', async (t) => {
  // Seeded: the seed is printed, and KAFKA_CRASH_SEED=N repeats the trials' choices (the instants
  // still depend on the machine's pace, so a failure is a matter of where, not exactly when).
  const seed = Number(process.env.KAFKA_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.comment(`seed ${seed} (KAFKA_CRASH_SEED=${seed} to repeat)`);
  // Big enough for kills inside large batches and between them, small enough for several trials.
  const { dir, stream, total, clean } = await generatedStream(t, 'kafka-crash-', 4, 2);
  t.ok(total > 20_000, `${total} events`);

  const TRIALS = 3;
  for (let trial = 1; trial <= TRIALS; trial++) {
    await t.test(`trial ${trial} of ${TRIALS} (seed ${seed + trial})`, async (t) => {
      const random = mulberry32(seed + trial); // seeded: a failing trial can be run again with the same choices
      const started = Date.now();
      const topic = await freshTopic();
      const dbFile = path.join(dir, `service-${trial}.db`);
      t.teardown(() => {
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(dbFile + suffix, { force: true });
      });
      openDb(dbFile).close(); // so that the test can read it from the start

      // Produced while the service consumes, so it is killed while both sides are busy.
      const producing = produceFiles(conn, topic, [stream], { log: testLog });
      producing.catch(() => undefined);

      const reader = openDb(dbFile, { readonly: true });
      t.teardown(() => reader.close());
      const consumed = (): number => (reader.prepare('SELECT coalesce(sum(position), 0) FROM source_positions WHERE source GLOB ?').pluck().get(`kafka:${topic}:*`) as number);

      // 2 kills, one in each half of 5 %..70 % of the stream: late enough to have progress, early
      // enough that the pause before the kill cannot reach the end (it did once at 90 % + 300 ms).
      const kills = 2;
      const killedAt: number[] = [];
      const pendingAtKill: number[] = [];
      for (let k = 0; k < kills; k++) {
        const lo = 0.05 + (0.65 * k) / kills;
        const threshold = Math.floor(total * (lo + random() * (0.65 / kills)));
        const s = startService(t, dbFile, topic);
        await waitFor(`${threshold} records applied`, 120_000, () => alive(s) && consumed() >= threshold);
        await sleep(random() * 100); // a random instant: inside a transaction or between two
        s.child.kill('SIGKILL');
        await s.exited;
        killedAt.push(consumed());
        pendingAtKill.push(reader.prepare('SELECT count(*) FROM rollup_pending').pluck().get() as number);
      }
      t.comment(`killed ${kills} times, after ${killedAt.join(', ')} of ${total} records (${((Date.now() - started) / 1000).toFixed(0)} s), week/month periods pending then: ${pendingAtKill.join(', ')}`);
      // The latest weeks and months wait in the consumer's memory: a kill leaves them pending, and the restart counts them again.
      t.ok(pendingAtKill.some((n) => n > 0), 'killed with roll-ups pending');
      t.ok(killedAt.every((n, i) => n > 0 && n < total && (i === 0 || n >= killedAt[i - 1]!)), 'each kill after some progress, before the end; never backwards');

      const s = startService(t, dbFile, topic);
      t.equal((await producing).sent, total, 'every event produced');
      const ends = await endOffsets(topic);
      await waitFor('the restarted service to catch up', 180_000, () => alive(s) && consumed() === total, 250);
      t.ok(caughtUp(reader, topic, ends), 'stored offsets = high watermarks');
      t.equal(await terminate(s), 0, 'SIGTERM: clean exit');
      const served = dbDigest(dbFile);
      t.equal(served.deadLetters, 0, 'no dead letters');
      t.equal(served.digest, clean, 'same digest as a clean file replay');
      t.equal(reader.prepare('SELECT count(*) FROM rollup_pending').pluck().get(), 0, 'caught up: nothing pending');
    });
  }
});
