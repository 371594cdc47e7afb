// The shard a database holds (migration 019): read by the server (what it may answer) and written by
// the Kafka consumer when it first knows the events topics' partition count.
import { ownsPartition, parseShard, WHOLE, type Shard } from '../lib/partition';
import type { Db } from './db';
import { parseKafkaSource } from './positions';

/** A shard with the partition count of the events topics it was cut from. */
export interface HeldShard extends Shard {
  partitions: number;
}

/** What the database holds: its shard row, or null for everything (no row, or a schema before 019). */
export function heldShard(db: Db): HeldShard | null {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'shard'").get();
  if (table === undefined) return null;
  return (db.prepare('SELECT k, n, partitions FROM shard WHERE id = 1').get() as HeldShard | undefined) ?? null;
}

/** How a snapshot names the shard it holds (its X-Snapshot-Shard header): "K/N of P". */
export function shardLabel(held: HeldShard): string {
  return `${held.k}/${held.n} of ${held.partitions}`;
}

/** The shard a label names (shardLabel); null when the text is not one. */
export function parseShardLabel(text: string): HeldShard | null {
  const m = /^(\d+\/\d+) of (\d+)$/.exec(text);
  const shard = m ? parseShard(m[1]!) : null;
  return shard === null || typeof shard === 'string' ? null : { ...shard, partitions: Number(m![2]) };
}

/** Records what the database holds from now on; the whole of every topic removes the row. */
export function holdShard(db: Db, shard: Shard, partitions: number): void {
  if (shard.n === WHOLE.n) {
    db.prepare('DELETE FROM shard').run();
    return;
  }
  db.prepare('INSERT INTO shard (id, k, n, partitions) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET k = excluded.k, n = excluded.n, partitions = excluded.partitions')
    .run(shard.k, shard.n, partitions);
}

/**
 * The data tables of a project, by the column that names it (its id). A project's catalog rows
 * (projects, project_access) stay: every shard holds every project's. Runs and dimension combinations
 * name it by its number in `keys`.
 */
const PROJECT_DATA = [
  'prompts', 'prompt_segments', 'segments', 'competitors', 'terms', 'project_engines', 'run_groups', 'forum_posts',
  'agg_run_group', 'agg_engine_day', 'rollups', 'rollup_pending', 'run_refs', 'trend_days', 'trend_days_stale',
  'project_changes', 'changed_months', 'recounts',
] as const;

export interface ShardCut {
  projects: number;
  runs: number;
  seconds: number;
}

/**
 * Makes a database that holds `held` (null: everything) hold shard `shard` of `partitions`: the data
 * of every project it no longer owns and the stored offsets of the partitions it no longer consumes
 * are deleted, in one transaction with the new shard row, so that a kill leaves either the old store
 * or the cut one (resharding, docs/scale-out.md). `owns` says whether a project id stays.
 */
export function cutShard(db: Db, shard: Shard, partitions: number, eventTopics: readonly string[], owns: (projectId: string) => boolean): ShardCut {
  const started = performance.now();
  const ids = new Set<string>();
  for (const table of PROJECT_DATA) for (const id of db.prepare(`SELECT DISTINCT project_id FROM ${table}`).pluck().all() as string[]) ids.add(id);
  for (const id of db.prepare('SELECT k.id FROM keys k WHERE k.n IN (SELECT DISTINCT project FROM runs)').pluck().all() as string[]) ids.add(id);
  const foreign = JSON.stringify([...ids].filter((id) => !owns(id)).sort());
  let runs = 0;
  db.transaction(() => {
    for (const table of PROJECT_DATA) db.prepare(`DELETE FROM ${table} WHERE project_id IN (SELECT value FROM json_each(?))`).run(foreign);
    const numbers = 'SELECT n FROM keys WHERE id IN (SELECT value FROM json_each(?))';
    runs = db.prepare(`DELETE FROM runs WHERE project IN (${numbers})`).run(foreign).changes;
    for (const table of ['slice_days', 'slice_hits', 'slice_months', 'slice_month_hits', 'slice_dims', 'slice_pairs', 'slice_pair_dims', 'range_totals', 'range_hit_totals', 'slice_values', 'slice_value_months']) db.prepare(`DELETE FROM ${table} WHERE project IN (${numbers})`).run(foreign);
    db.prepare(`DELETE FROM dims WHERE project IN (${numbers})`).run(foreign);
    db.prepare('DELETE FROM run_ids WHERE run NOT IN (SELECT rowid FROM runs)').run();
    db.prepare('DELETE FROM forum_post_fields WHERE post_id NOT IN (SELECT id FROM forum_posts)').run();
    const positions = db.prepare("SELECT source FROM source_positions WHERE source GLOB 'kafka:*'").pluck().all() as string[];
    for (const source of positions) {
      const from = parseKafkaSource(source);
      if (from && eventTopics.includes(from.topic) && !ownsPartition(shard, from.partition)) db.prepare('DELETE FROM source_positions WHERE source = ?').run(source);
    }
    holdShard(db, shard, partitions);
  })();
  return { projects: (JSON.parse(foreign) as string[]).length, runs, seconds: (performance.now() - started) / 1000 };
}
