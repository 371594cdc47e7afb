// The Kafka consumer's queue of fetched batches (src/ingest/kafka/fetched.ts): a transaction takes
// one partition's oldest records across its batches, and no record is lost, repeated or reordered
// within its partition, whatever the batch and transaction sizes.
import t from 'tap';
import { intBetween, mulberry32 } from '../../../fixtures/random';
import { FetchedBatches } from '../../../src/ingest/kafka/fetched';

t.test("a transaction takes one partition's records across its batches, in order", async (t) => {
  const q = new FetchedBatches<string>();
  q.push('p0', ['a0', 'a1']);
  q.push('p1', ['b0']);
  q.push('p0', ['a2', 'a3', 'a4']);
  q.push('p2', ['c0']);
  q.push('p0', ['a5']);
  t.equal(q.oldestSource, 'p0');
  t.same(q.take('p0', 4), ['a0', 'a1', 'a2', 'a3'], 'two batches of p0 in one chunk, the second one in part');
  t.equal(q.oldestSource, 'p1', "p1's batch, fetched before p0's later ones, is now the oldest");
  t.same(q.take('p1', 10), ['b0']);
  t.same(q.take('p0', 10), ['a4', 'a5'], "the rest of p0: its part-taken batch first, then the next");
  t.same(q.take('p0', 10), [], 'nothing left of p0');
  t.equal(q.oldestSource, 'p2');
  t.same(q.take('p2', 1), ['c0']);
  t.equal(q.oldestSource, undefined, 'empty');
});

t.test('a chunk shorter than a batch leaves the rest of it first in line', async (t) => {
  const q = new FetchedBatches<number>();
  q.push('p0', [1, 2, 3, 4, 5]);
  q.push('p1', [10]);
  t.same(q.take('p0', 2), [1, 2]);
  t.equal(q.oldestSource, 'p0');
  t.same(q.take('p0', 2), [3, 4]);
  t.same(q.take('p0', 2), [5]);
  t.equal(q.oldestSource, 'p1');
  q.push('p1', []);
  t.same(q.take('p1', 5), [10], 'an empty batch adds nothing');
  q.push('p2', [7]);
  q.clear();
  t.equal(q.oldestSource, undefined, 'clear() drops everything (an assignment: the seek fetches it again)');
});

t.test('seeded trials: every record leaves once, in its partition order, whatever the sizes', async (t) => {
  const rng = mulberry32(12345);
  const random = (n: number): number => intBetween(rng, 0, n - 1);
  for (let trial = 0; trial < 50; trial += 1) {
    const q = new FetchedBatches<[string, number]>();
    const next: Record<string, number> = { p0: 0, p1: 0, p2: 0 };
    const seen: Record<string, number[]> = { p0: [], p1: [], p2: [] };
    let pending = 0;
    let mixed = 0;
    for (let step = 0; step < 200; step += 1) {
      if (random(3) > 0) {
        const source = `p${random(3)}`;
        const batch: Array<[string, number]> = [];
        for (let n = random(20); n > 0; n -= 1) batch.push([source, next[source]!++]);
        q.push(source, batch);
        pending += batch.length;
      } else {
        const source = q.oldestSource;
        if (source === undefined) continue;
        const chunk = q.take(source, 1 + random(40));
        if (chunk.length === 0 || chunk.some(([s]) => s !== source)) mixed += 1;
        for (const [s, n] of chunk) seen[s]!.push(n);
        pending -= chunk.length;
      }
    }
    for (let source = q.oldestSource; source !== undefined; source = q.oldestSource) {
      const chunk = q.take(source, 1 + random(40));
      for (const [s, n] of chunk) seen[s]!.push(n);
      pending -= chunk.length;
    }
    t.equal(mixed, 0, `trial ${trial}: each chunk held records of the oldest source only, at least one`);
    t.equal(pending, 0, `trial ${trial}: every record taken`);
    for (const source of Object.keys(seen)) {
      t.same(seen[source], Array.from({ length: next[source]! }, (_, i) => i), `trial ${trial}: ${source} in order, each once`);
    }
  }
});
