// The parts of a started service, assembled: the API (createService) with its request hooks wired to
// the metrics, the access log, the per-account throttling figures and the health; the thread heaps;
// the deliverer of pushed signals; the ops server and the API's node:http server (not listening yet).
// Each part that needs releasing is pushed on `cleanup` in the order it is opened.
import type http from 'node:http';
import type { Logger } from '../lib/log';
import { shardName } from '../lib/partition';
import { ThreadHeaps } from '../lib/thread-heap';
import { accessLog, accountFigures, Throttled, createMetrics, createOpsServer, type Metrics } from '../ops';
import type { Service } from '../serve';
import { heldShard, type Db } from '../store';
import { ServiceHealth } from './service-health';
import type { KafkaWiring } from './kafka-wiring';
import type { Cleanup } from './lifecycle';
import type { StartOptions } from './start-options';

export interface Assembled {
  service: Service;
  health: ServiceHealth;
  ops: http.Server;
  api: http.Server;
}

export function assembleService(o: StartOptions, db: Db, kafka: KafkaWiring | null, logger: Logger, cleanup: Cleanup): Assembled {
  // Written by the consumer's start (or brought by a snapshot): what this process may answer.
  const shard = heldShard(db);
  const health = new ServiceHealth(o.dbFile, kafka, shard, o.kafka?.catalogTopic ?? null);
  let observeLatency: Metrics['observeRequest'] = () => {};
  const access = accessLog(logger, { hitSample: o.logHitSample });
  cleanup.push(() => access.flush()); // runs after the API has drained: the lines of its last requests included
  // Loaded now, while the Kafka thread (started before) boots on the other core. A require, not
  // import(): the test runner's TypeScript loader gives import() of a CommonJS barrel no named exports.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createHttpServer, createService } = require('../serve') as typeof import('../serve');
  const throttled = new Throttled();
  const service = createService({
    db, windowDays: o.windowDays, cacheMaxBytes: o.cacheMaxBytes, rateLimit: o.rateLimit, maxBuildsPerAccount: o.maxBuildsPerAccount, buildThreads: o.buildThreads,
    maxStalenessMs: o.maxStalenessMs, dashboard: o.dashboard, logger, cursorSecret: o.cursorSecret, shard,
    isReady: health.isLoaded, isDraining: health.isDraining,
    onResponse: (s) => {
      observeLatency(s.route, s.status, s.seconds);
      throttled.observe(s.status, s.accountId);
      if (s.reason !== undefined) health.misrouted += 1; // the only reason given today: a project of another shard
      access.observe(s);
    },
    onFailure: (err) => health.noteFailure(err),
  });
  cleanup.push(() => service.close());
  const threadHeaps = new ThreadHeaps();
  cleanup.push(() => threadHeaps.close());
  const shardFigures = shard === null ? undefined : { name: shardName(shard), partitions: shard.partitions, misrouted: () => health.misrouted };
  const accounts = accountFigures(service.builder, service.cache, throttled);
  const metrics = createMetrics(service.cache, kafka ? kafka.figures : undefined, threadHeaps, shardFigures, accounts);
  observeLatency = metrics.observeRequest;
  if (o.webhooks) startDeliverer(o, o.webhooks, health, logger, metrics, cleanup);
  const ops = createOpsServer({
    cache: service.cache, readiness: () => health.readiness(), metrics: metrics.render, memoBytes: service.hotMemoBytes, accounts, dbFile: o.dbFile,
    token: o.opsToken, snapshotLimits: o.snapshotLimits, logger,
  });
  const api = createHttpServer(service);
  return { service, health, ops, api };
}

/** Pushed signals (src/deliver): without Kafka this process delivers; with it, the replica the group elects. */
function startDeliverer(o: StartOptions, webhooks: NonNullable<StartOptions['webhooks']>, health: ServiceHealth, logger: Logger, metrics: Metrics, cleanup: Cleanup): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Deliverer, KafkaElection, LazyElection, leaderGroup, DEFAULT_LEADER_TOPIC } = require('../deliver') as typeof import('../deliver');
  const { group, topic, ...settings } = webhooks;
  const kafkaConfig = o.kafka;
  const shard = health.shardHeld;
  // Replicas of a shard hold the same data: the one the group gives the partition delivers. Joined
  // once a subscription exists (a service without any never joins).
  const election = kafkaConfig ? new LazyElection(() => new KafkaElection(kafkaConfig, group ?? leaderGroup(shard === null ? null : shardName(shard)),
    topic ?? DEFAULT_LEADER_TOPIC, kafkaConfig.sessionTimeoutMs, logger), logger) : null;
  // Planning waits for a consumer to catch up: a day tested on half its runs would not be tested again.
  const deliverer: InstanceType<typeof Deliverer> = new Deliverer({
    ...settings, dbFile: o.dbFile, logger, ready: () => health.readyToDeliver(),
    ...(election ? { leads: () => election.leads(() => deliverer.hasSubscriptions()) } : {}),
  }).start();
  if (election) cleanup.push(() => election.stop());
  deliverer.register(metrics.registry);
  cleanup.push(() => deliverer.stop());
}
