// A Kafka client without a broker, through the consumer's own seam (KafkaIngestOptions.client): the
// test plays the group (assignments), the fetcher (batches) and the admin probe (watermarks, outages),
// so the consumer's supervisor and write pipeline can be driven step by step and fast. Everything
// below the seam (the projector, SQLite, the precompute thread) is the real thing.
import type {
  AdminAdapter, ConsumerAdapter, ConsumerHooks, KafkaClient, PartitionOffsets, ProducerAdapter, StartOffset, TopicPartition,
} from '../../src/ingest/kafka/adapters';

export class FakeConsumer implements ConsumerAdapter {
  hooks: ConsumerHooks | null = null;
  topics: string[] = [];
  stopped = false;
  /** Heartbeats sent while a batch waited for room. */
  heartbeats = 0;

  async start(topics: string[], hooks: ConsumerHooks): Promise<void> {
    this.topics = topics;
    this.hooks = hooks;
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  /** The group gives this member `partitions`: where the consumer says to start each. */
  assign(partitions: TopicPartition[]): StartOffset[] {
    return this.started().startOffsets(partitions);
  }

  /** A fetched batch of `values` from `offset` on, handed over as kafkajs's eachBatch does. */
  deliver(topic: string, partition: number, offset: number, values: string[], highWatermark = offset + values.length): Promise<void> {
    const messages = values.map((v, i) => ({ offset: offset + i, key: null, value: Buffer.from(v) }));
    return this.started().eachBatch({ topic, partition, highWatermark, messages }, {
      resolveOffset: () => undefined,
      heartbeat: async () => {
        this.heartbeats += 1;
      },
      isRunning: () => !this.stopped,
      isStale: () => false,
    });
  }

  crash(error: Error, restarting: boolean): void {
    this.started().onCrash(error, restarting);
  }

  fetched(): void {
    this.started().onFetch();
  }

  private started(): ConsumerHooks {
    if (!this.hooks) throw new Error('the consumer was not started');
    return this.hooks;
  }
}

export class FakeKafka implements KafkaClient {
  readonly brokers = ['fake:9092'];
  readonly consumers: FakeConsumer[] = [];
  /** What the admin probe answers per topic. */
  readonly offsets = new Map<string, PartitionOffsets[]>();
  /** The broker is down: the admin probe fails. */
  down = false;

  /** The consumer started last. */
  get latest(): FakeConsumer {
    const c = this.consumers[this.consumers.length - 1];
    if (!c) throw new Error('no consumer yet');
    return c;
  }

  consumer(): ConsumerAdapter {
    const c = new FakeConsumer();
    this.consumers.push(c);
    return c;
  }

  producer(): ProducerAdapter {
    return { connect: async () => undefined, send: async () => undefined, disconnect: async () => undefined };
  }

  admin(): AdminAdapter {
    const check = (): void => {
      if (this.down) throw new Error('Connection error: connect ECONNREFUSED fake:9092');
    };
    return {
      connect: async () => check(),
      fetchTopicOffsets: async (topic) => {
        check();
        return this.offsets.get(topic) ?? [];
      },
      disconnect: async () => undefined,
    };
  }

  async checkReachable(): Promise<void> {}
}
