// Which Kafka partition holds a project, and which shard holds a partition. The producer
// keys a project's events by its id, and kafkajs's default partitioner (Java-compatible murmur2,
// node_modules/kafkajs/src/producer/partitioners/default) puts a key in partition
// (murmur2(key) & 0x7fffffff) % partitions. The service computes the same number to know what it
// owns, and the router (deploy/shard-router.lua) does too, so neither needs a per-project map.
// test/lib/partition.test.ts checks this against kafkajs's own partitioner.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Java-compatible murmur2 of the key's UTF-8 bytes (a signed 32-bit integer, as Kafka's Utils.murmur2). */
export function murmur2(key: string): number {
  const data = Buffer.from(key, 'utf8');
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // The last 1-3 bytes (Kafka's switch falls through from case 3 to case 1).
  const tail = length & 3;
  if (tail > 0) {
    if (tail === 3) h ^= data[whole + 2]! << 16;
    if (tail >= 2) h ^= data[whole + 1]! << 8;
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition kafkajs's default partitioner gives a record keyed `key` in a topic of `partitions`. */
export function partitionOf(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/** Shard K of N holds the partitions p with p % N = K. */
export interface Shard {
  k: number;
  n: number;
}

export const WHOLE: Shard = { k: 0, n: 1 };

export function ownsPartition(shard: Shard, partition: number): boolean {
  return partition % shard.n === shard.k;
}

/** Where a project lives among `n` shards of a topic of `partitions`: its partition, and the shard that holds it. */
export function homeOf(projectId: string, partitions: number, n: number): { partition: number; shard: Shard } {
  const partition = partitionOf(projectId, partitions);
  return { partition, shard: { k: partition % n, n } };
}

/** Whether `shard` holds the project, for an events topic of `partitions` partitions. */
export function ownsProject(shard: Shard, partitions: number, projectId: string): boolean {
  return shard.n === 1 || ownsPartition(shard, partitionOf(projectId, partitions));
}

export const shardName = (s: Shard): string => `${s.k}/${s.n}`;

/**
 * "K/N": 0 <= K < N, 1 <= N <= 1024. Returns a message instead of a shard when the text is not one
 * (src/lib does not know the CLI's error type).
 */
export function parseShard(text: string): Shard | string {
  const m = /^(\d{1,4})\/(\d{1,4})$/.exec(text.trim());
  if (!m) return `"${text}" is not K/N (shard K of N, e.g. 0/2)`;
  const k = Number(m[1]);
  const n = Number(m[2]);
  if (n < 1 || n > 1024) return `"${text}": N must be 1 to 1024`;
  if (k >= n) return `"${text}": K must be 0 to N-1`;
  return { k, n };
}

/**
 * Whether a store that holds shard `held` holds every partition shard `wanted` needs (so a snapshot
 * of `held` can seed `wanted`: 0/1 seeds anything, 1/2 seeds 1/4 and 3/4). True for every partition
 * count exactly when N(wanted) is a multiple of N(held) and K(wanted) % N(held) = K(held).
 */
export function covers(held: Shard, wanted: Shard): boolean {
  return wanted.n % held.n === 0 && wanted.k % held.n === held.k;
}
