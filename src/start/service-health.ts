// Whether a started service should get traffic: the data is there (with Kafka, once the first events
// arrived), it is not shutting down, its file has not been found corrupt; what /readyz shows, with
// the shard it answers for. One place for the state that the request hooks, /readyz and the
// deliverer read.
import { shardName } from '../lib/partition';
import type { Readiness } from '../ops';
import { isCorruption, type HeldShard } from '../store';
import type { KafkaWiring } from './kafka-wiring';

export class ServiceHealth {
  private draining = false;
  private corrupt: string | null = null;
  /** Requests answered with a reason (the only one today: a project of another shard). */
  misrouted = 0;

  constructor(
    private readonly dbFile: string,
    private readonly kafka: KafkaWiring | null,
    /** What this process may answer (written by the consumer's start, or brought by a snapshot). */
    readonly shardHeld: HeldShard | null,
    private readonly catalogTopic: string | null,
  ) {}

  /** Without Kafka the file was checked at open; with it, ready once the first data has arrived. */
  readonly isLoaded = (): boolean => (this.kafka ? this.kafka.loaded() : true);

  readonly isDraining = (): boolean => this.draining;

  /** close() began: /readyz says not ready, every answer from now on says Connection: close. */
  drain(): void {
    this.draining = true;
  }

  /** A request failed: a corrupt file fails every read from now on, so /readyz says so and the balancer stops sending traffic here. */
  noteFailure(err: unknown): void {
    if (isCorruption(err)) this.corrupt ??= `database file is corrupt: ${this.dbFile} (${(err as Error).message})`;
  }

  /** Whether the deliverer may plan and send: not draining, and (with Kafka) caught up enough to be ready. */
  readyToDeliver(): boolean {
    return !this.draining && (this.kafka ? this.kafka.readiness().ready : true);
  }

  readiness(): Readiness {
    const base: Readiness = this.kafka ? this.kafka.readiness() : { ready: true, reasons: [] };
    const reasons = [...(this.draining ? ['shutting down'] : []), ...(this.corrupt ? [this.corrupt] : []), ...base.reasons];
    const ready = base.ready && !this.draining && this.corrupt === null;
    const shard = this.shardHeld;
    return {
      ...base, ready, reasons, ...(ready ? {} : { status: 'not ready' }),
      // What a router must agree with: this process answers only the projects of these partitions.
      ...(shard === null ? {} : { shard: { shard: shardName(shard), k: shard.k, n: shard.n, partitions: shard.partitions, catalog_topic: this.catalogTopic } }),
    };
  }
}
