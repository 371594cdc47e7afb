// What start() takes and gives back (the library's contract, re-exported by src/index.ts), and the
// checks of the options made before anything is opened.
import type { DelivererOptions } from '../deliver';
import type { KafkaIngestConfig } from '../ingest/kafka';
import type { Logger } from '../lib/log';
import { opsAccessProblem, type SnapshotLimits } from '../ops';
import type { AppOptions, Service } from '../serve';
import { StartError } from '../start-error';

/** start() was stopped by its `signal` before it served (a bootstrap under way): nothing is left running or half-written. */
export class StartAborted extends Error {}

export interface StartOptions {
  /** The SQLite file to serve. Without Kafka it must exist and be a database; with Kafka it is created when missing. */
  dbFile: string;
  port?: number;
  host?: string;
  opsPort?: number;
  opsHost?: string;
  windowDays?: number;
  cacheMaxBytes?: number;
  rateLimit?: number;
  /** Builds one account may have queued or running (AppOptions.maxBuildsPerAccount). */
  maxBuildsPerAccount?: number;
  buildThreads?: number;
  /** How far behind the data a cached body may be served, in ms (AppOptions.maxStalenessMs; default 1000, 0: never). */
  maxStalenessMs?: number;
  /** Consume these topics into dbFile (in a thread of its own) while serving. */
  kafka?: KafkaIngestConfig;
  /** How long close() lets in-flight requests finish before their connections are cut (default 5 s). */
  drainMs?: number;
  /**
   * A peer's ops URL: when dbFile does not exist yet, it is first downloaded from the peer's GET
   * /snapshot (checked: length, SHA-256, schema version, quick_check), and the Kafka consumer then
   * resumes from the offsets stored in it. /readyz answers 503 "bootstrapping" meanwhile.
   */
  bootstrapFrom?: string;
  /**
   * The ops token: when set, every ops path but /livez, /healthz, /readyz and /metrics needs
   * `Authorization: Bearer TOKEN`, and a bootstrap sends it to the peer. Required (StartError
   * without it) when opsHost is not a loopback address. At least 16 characters.
   */
  opsToken?: string;
  /** A bootstrap gives up when the peer sends under 64 KiB/s over a window this long (ms; default 30 s): a stall or a trickle. */
  bootstrapIdleMs?: number;
  /** ... or when the whole bootstrap takes longer than this (ms; default 2 h). */
  bootstrapTimeoutMs?: number;
  /** Stops start() while it bootstraps: the download is removed and start() rejects with StartAborted. */
  signal?: AbortSignal;
  /** Readers, freshness and deadlines of the ops port's /snapshot (src/ops/snapshot-route.ts). */
  snapshotLimits?: Partial<SnapshotLimits>;
  /** With Kafka: /readyz is 503 while the known lag is above this many events (0: never for lag). Default 10,000. */
  maxReadyLag?: number;
  /** What signs page cursors (serve --cursor-secret); absent, the database's own key. See AppOptions.cursorSecret. */
  cursorSecret?: string;
  /** Serve the reference dashboard at / with these keys to pick from (serve --demo). */
  dashboard?: AppOptions['dashboard'];
  /** Where every log line goes, the access lines included (default: JSON at info on stdout). */
  logger?: Logger;
  /**
   * Pushed signals (src/deliver): without Kafka the service delivers; with Kafka the replica of the
   * shard that holds partition 0 of `topic` in consumer group `group` (default
   * visibility-webhooks-SHARD) does. Absent: no deliverer (a library caller's default).
   */
  webhooks?: Omit<DelivererOptions, 'dbFile' | 'logger' | 'ready' | 'leads'> & { group?: string; topic?: string };
  /** At info, one access line per this many cache hits of the hot path (default 100; 1 = all). See src/ops/access-log.ts. */
  logHitSample?: number;
}

export interface Running {
  /** http://HOST:PORT/v1/public, with 127.0.0.1 for a wildcard host: a URL to click, not what is bound. */
  url: string;
  port: number;
  /** What the API listens on: HOST:PORT as bound (0.0.0.0:8080 is every interface). */
  bind: string;
  opsUrl: string;
  opsPort: number;
  opsBind: string;
  service: Service;
  /** Graceful stop: not ready, stop accepting, drain, stop ingest, end threads, checkpoint, close. Idempotent. */
  close(): Promise<void>;
}
export const DEFAULT_MAX_READY_LAG = 10_000;

/** Refuses options that cannot start (StartError, one line) before anything is opened or listened on. */
export function checkOptions(o: StartOptions): void {
  const opsProblem = opsAccessProblem(o.opsHost ?? '127.0.0.1', o.opsToken);
  if (opsProblem !== null) throw new StartError(opsProblem);
}
