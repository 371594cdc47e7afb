// Which replica of a shard delivers: all of them join one Kafka consumer group on a topic of one
// partition, and the member the group gives partition 0 delivers. When it dies (kill -9, a lost host),
// its session times out (KAFKA_SESSION_TIMEOUT_MS), the group rebalances and another member is given
// the partition: the hand-over needs no coordination of our own. docs/decisions.md, "One deliverer per shard".
import { createKafkaClient, dedupedKafkaLog, type ConsumerAdapter } from '../ingest/kafka/client';
import type { KafkaConnection } from '../ingest/kafka/config';
import type { Logger } from '../lib/log';

/** The topic whose partition 0 makes its holder the deliverer (default of --webhooks-topic). */
export const DEFAULT_LEADER_TOPIC = 'visibility.webhooks';

/** The default group of a shard's replicas: one group per shard, so each shard has its deliverer. */
export function leaderGroup(shard: string | null): string {
  return `visibility-webhooks-${(shard ?? 'all').replace(/[^A-Za-z0-9._-]/g, '-')}`;
}

export class KafkaElection {
  private holds = false;
  private readonly consumer: ConsumerAdapter;

  constructor(conn: KafkaConnection, private readonly groupId: string, private readonly topic: string, sessionTimeoutMs: number, private readonly logger: Logger) {
    const log = dedupedKafkaLog((level, message) => logger[level]({ group: groupId }, `kafka (webhooks): ${message}`), conn.logLevel === 'nothing' ? 'error' : conn.logLevel);
    // sticky: a replica that starts (or comes back) joins as a follower; the deliverer keeps delivering.
    this.consumer = createKafkaClient(conn, log).consumer({ groupId, sessionTimeoutMs, sticky: () => this.holds });
  }

  /** Whether this replica holds partition 0 now (false while the group is being formed or the consumer is down). */
  leads(): boolean {
    return this.holds;
  }

  private set(holds: boolean): void {
    if (holds !== this.holds) this.logger.info({ group: this.groupId, topic: this.topic }, holds ? 'webhooks: this replica delivers' : 'webhooks: this replica no longer delivers');
    this.holds = holds;
  }

  async start(): Promise<void> {
    await this.consumer.start([this.topic], {
      // Nothing is written to the topic: it is only there to be held.
      eachBatch: async () => {},
      startOffsets: (assigned) => {
        this.set(assigned.some((p) => p.topic === this.topic && p.partition === 0));
        return [];
      },
      // A consumer that lost the broker may have lost the partition too: it stops delivering until it rejoins.
      onCrash: () => this.set(false),
      onFetch: () => {},
    });
  }

  async stop(): Promise<void> {
    this.set(false);
    await this.consumer.stop();
  }
}

/**
 * The election joined only once a subscription exists: a service with none (most) never joins the
 * group, and needs no leader topic. A join that fails (the topic missing, the broker away) is logged
 * and tried again 30 s later; meanwhile this replica does not deliver.
 */
export class LazyElection {
  private election: KafkaElection | null = null;
  private starting: Promise<void> | null = null;
  private retryAt = 0;
  private stopped = false;

  constructor(private readonly make: () => KafkaElection, private readonly logger: Logger) {}

  /** Whether this replica delivers now; starts the election when `wanted` says a subscription exists. */
  leads(wanted: () => boolean): boolean {
    if (this.election === null && this.starting === null && !this.stopped && Date.now() >= this.retryAt && wanted()) {
      const e = this.make();
      this.starting = e.start().then(() => {
        this.election = e;
      }, async (err: unknown) => {
        this.logger.error({ err: (err as Error).message }, 'webhooks: cannot join the deliverer\'s group; trying again in 30 s');
        this.retryAt = Date.now() + 30_000;
        await e.stop().catch(() => undefined);
      }).finally(() => {
        this.starting = null;
      });
    }
    return this.election?.leads() ?? false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.starting;
    await this.election?.stop();
  }
}
