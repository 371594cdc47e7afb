// What a shard applies of the records it consumes. The static assignment gives a shard
// only its partitions, and the producer keys each project's events by the project id, so a record
// of another shard's project is a producer's mistake (keyed by something else). It goes to the dead
// letters, named: never applied, never dropped silently.
import { projectOfEvent } from '../../events';
import { homeOf, shardName, type Shard } from '../../lib/partition';
import { parseKafkaSource, type PrecomputedEvent } from '../../store';

export class ShardScreen {
  constructor(private readonly shard: Shard, private readonly partitions: number, private readonly eventTopics: readonly string[]) {}

  /** The events of a chunk from `source`, those of a project this shard does not hold turned into dead letters. */
  screen(source: string, events: PrecomputedEvent[]): PrecomputedEvent[] {
    if (this.shard.n === 1) return events;
    const from = parseKafkaSource(source);
    // The catalog topic holds account-wide facts and events no partition owns: every shard takes them.
    if (!from || !this.eventTopics.includes(from.topic)) return events;
    return events.map((e): PrecomputedEvent => {
      if (!e.ok) return e;
      const project = e.run ? e.run.facts.project_id : projectOfEvent(e.type, e.data);
      if (project === null) return e;
      const home = homeOf(project, this.partitions, this.shard.n);
      if (home.shard.k === this.shard.k) return e;
      return {
        ok: false, source: e.source, position: e.position, raw: e.raw, reason: 'foreign_project', eventId: e.version.id, type: e.type,
        detail: `project ${project} is in partition ${home.partition} (shard ${shardName(home.shard)}), but the record is in partition ${from.partition} of shard ${shardName(this.shard)}: key a project's events by its id`,
      };
    });
  }
}
