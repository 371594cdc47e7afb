// The service's partition arithmetic must be the producer's: a project's events are put in a
// partition by kafkajs's default partitioner, and a shard owns a project by the same number.
import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import t from 'tap';
import { covers, murmur2, ownsProject, parseShard, partitionOf } from '../../src/lib/partition';

t.test('partitionOf is the partition kafkajs\'s default partitioner gives the key', async (t) => {
  const partitioner = Partitioners.DefaultPartitioner();
  const keys = [...Array.from({ length: 3000 }, () => randomUUID()), '', 'a', 'ab', 'abc', 'abcd', 'é', '日本語のキー', 'x'.repeat(101)];
  for (const partitions of [1, 3, 6, 12, 48]) {
    const partitionMetadata = Array.from({ length: partitions }, (_, i) => ({ partitionId: i, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 }));
    let wrong = 0;
    for (const key of keys) {
      const expected = partitioner({ topic: 't', partitionMetadata, message: { key, value: null } });
      if (partitionOf(key, partitions) !== expected) wrong += 1;
    }
    t.equal(wrong, 0, `${partitions} partitions: every one of ${keys.length} keys in kafkajs's partition`);
  }
  // Kafka's own test vectors (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java).
  t.equal(murmur2('21'), -973932308);
  t.equal(murmur2('foobar'), -790332482);
  t.equal(murmur2('a-little-bit-long-string'), -985981536);
  t.equal(murmur2('a-little-bit-longer-string'), -1486304829);
  t.equal(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'), -58897971);
});

t.test('a shard owns the projects of its partitions, and N shards share them out', async (t) => {
  const ids = Array.from({ length: 500 }, () => randomUUID());
  for (const n of [1, 2, 3]) {
    const owners = ids.map((id) => [0, 1, 2].slice(0, n).filter((k) => ownsProject({ k, n }, 12, id)));
    t.ok(owners.every((o) => o.length === 1), `${n} shards: each project on exactly one`);
    t.equal(new Set(owners.map((o) => o[0])).size, n, `${n} shards: every shard holds some`);
  }
});

t.test('parseShard and covers', async (t) => {
  t.same(parseShard('1/2'), { k: 1, n: 2 });
  t.same(parseShard(' 0/1 '), { k: 0, n: 1 });
  for (const bad of ['2/2', '1', '-1/2', 'a/b', '0/0', '1/2/3', '0/2000']) t.type(parseShard(bad), 'string', bad);
  t.ok(covers({ k: 0, n: 1 }, { k: 1, n: 2 }), 'the whole seeds any shard');
  t.ok(covers({ k: 1, n: 2 }, { k: 3, n: 4 }), '1/2 holds 3/4');
  t.notOk(covers({ k: 1, n: 2 }, { k: 2, n: 4 }), '1/2 does not hold 2/4');
  t.notOk(covers({ k: 0, n: 2 }, { k: 0, n: 3 }), '0/2 does not hold 0/3');
  t.notOk(covers({ k: 0, n: 2 }, { k: 0, n: 1 }), 'a half does not seed the whole');
  t.ok(covers({ k: 1, n: 2 }, { k: 1, n: 2 }));
});
