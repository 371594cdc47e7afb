// What a consumer checks before it writes anything: a store of another shard is refused untouched,
// and a store of every partition (or of a shard that holds this one's) is cut to this shard first.
// Run once, at start; what it returns screens every chunk after that (shard-screen.ts).
import { covers, ownsProject, shardName, WHOLE } from '../../lib/partition';
import { cutShard, hasReadModel, heldShard, holdShard, type Db } from '../../store';
import { KafkaUnavailableError, type KafkaLog } from './client';
import { ConfigError, type KafkaIngestConfig } from './config';
import type { LagTracker } from './lag';
import { ShardScreen } from './shard-screen';

/** Consuming every partition into a shard's store would fill it with projects it then refuses to answer. */
export function refuseHeldShard(db: Db): void {
  const held = heldShard(db);
  if (held !== null) throw new ConfigError(`${db.name} holds shard ${shardName(held)}: start it with --shard ${shardName(held)} (SHARD), or start an unsharded replica on a new file`);
}

/**
 * The partition count of the events topics (the producer's partitioner divides by it), checked
 * against what the database holds, which it then records. Refused: topics of different counts,
 * fewer partitions than shards, a database cut for another shard or another count.
 */
export async function shardScreen(db: Db, config: KafkaIngestConfig, lag: LagTracker, log: KafkaLog): Promise<ShardScreen> {
  const { shard, topics } = config;
  const counts = await partitionCounts(lag, topics);
  const partitions = counts[0]!;
  if (counts.some((c) => c !== partitions)) {
    throw new ConfigError(`SHARD=${shardName(shard)}: the events topics ${topics.join(', ')} have ${counts.join(', ')} partitions; a project's partition must mean the same in each`);
  }
  if (partitions < shard.n) throw new ConfigError(`SHARD=${shardName(shard)}: ${topics.join(', ')} has ${partitions} partitions, fewer than ${shard.n} shards`);
  const held = heldShard(db);
  if (held && held.partitions !== partitions) {
    throw new ConfigError(`SHARD=${shardName(shard)}: ${db.name} was cut from ${held.partitions} partitions, and ${topics.join(', ')} now has ${partitions}: a project's partition has changed (docs/scale-out.md)`);
  }
  if (held === null && !hasReadModel(db)) {
    holdShard(db, shard, partitions); // a new shard: nothing to cut
  } else if (held === null || held.k !== shard.k || held.n !== shard.n) {
    // Resharding: a store of every partition (or of a shard that holds this one's) keeps this shard's projects.
    const from = held ?? WHOLE;
    if (!covers(from, shard)) {
      throw new ConfigError(`SHARD=${shardName(shard)}: ${db.name} holds shard ${shardName(from)}, which lacks partitions of ${shardName(shard)}: start from a snapshot of a shard that holds them (docs/scale-out.md)`);
    }
    const cut = cutShard(db, shard, partitions, topics, (id) => ownsProject(shard, partitions, id));
    log('warn', `shard ${shardName(shard)}: cut from ${held === null ? 'every partition' : `shard ${shardName(held)}`}: the data of ${cut.projects} projects of other shards (${cut.runs} runs) deleted in ${cut.seconds.toFixed(2)} s`);
  }
  log('info', `shard ${shardName(shard)}: partitions p % ${shard.n} = ${shard.k} of ${partitions}, and every partition of ${config.catalogTopic}`);
  return new ShardScreen(shard, partitions, topics);
}

/** Partitions per topic, waiting a few seconds for topics being auto-created. */
async function partitionCounts(lag: LagTracker, topics: string[], waitMs = 15_000): Promise<number[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const counts = topics.map((t) => lag.partitionCount(t));
    if (counts.every((c) => c > 0)) return counts;
    if (Date.now() > deadline) {
      throw new KafkaUnavailableError(`topic ${topics.filter((_, i) => counts[i] === 0).join(', ')} does not exist: a shard needs its partition count (create the topics first)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    await lag.poll();
  }
}
