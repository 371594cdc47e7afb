// Kafka settings from the environment (and command-line flags that override it), validated up
// front so a typo is one clear line at startup rather than a consumer that hangs or retries forever.
import fs from 'node:fs';
import { parseShard, WHOLE, type Shard } from '../../lib/partition';

/** A bad Kafka setting. The CLI reports it as one line and exits 2; src/ingest does not import src/cli. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';
export type KafkaLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

/** TLS material, read when the configuration is loaded so a missing file fails at startup. */
export interface KafkaTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** What any client (consumer, producer, admin) needs to reach the cluster. */
export interface KafkaConnection {
  brokers: string[];
  clientId: string;
  /** null: plaintext; {}: TLS with the system CAs; files: TLS with these. */
  tls: KafkaTls | null;
  sasl: { mechanism: SaslMechanism; username: string; password: string } | null;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  logLevel: KafkaLogLevel;
}

/** The consumer side: which topics, which group, where dead letters go. */
export interface KafkaIngestConfig extends KafkaConnection {
  topics: string[];
  groupId: string;
  /** null when KAFKA_DLQ_TOPIC is set to the empty string: dead letters stay in the table only. */
  dlqTopic: string | null;
  sessionTimeoutMs: number;
  /**
   * The topic of account-wide facts (accounts, keys, engines, projects and who may see them), consumed
   * whole by every shard beside its partitions of `topics`; null: none (one topic holds everything).
   */
  catalogTopic: string | null;
  /** The partitions p of `topics` with p % n = k (this shard's share); WHOLE: every partition. */
  shard: Shard;
}

/** Values given on the command line; they win over the environment. */
export interface KafkaOverrides {
  brokers?: string;
  topics?: string;
  groupId?: string;
  clientId?: string;
  dlqTopic?: string;
  catalogTopic?: string;
  shard?: string;
}

export const KAFKA_DEFAULTS = {
  topics: 'visibility.events',
  groupId: 'visibility-api',
  clientId: 'visibility-api',
  dlqTopic: 'visibility.events.dlq',
  connectTimeoutMs: 3000,
  requestTimeoutMs: 30000,
  sessionTimeoutMs: 10000,
  logLevel: 'warn' as KafkaLogLevel,
} as const;

type Env = Record<string, string | undefined>;

/** The flag when given, else the environment variable; '' is a value (it disables the DLQ). */
function setting(env: Env, variable: string, override: string | undefined): string | undefined {
  return override !== undefined ? override : env[variable];
}

/** A non-empty setting or the default. */
function textSetting(env: Env, variable: string, override: string | undefined, fallback: string): string {
  const raw = setting(env, variable, override)?.trim();
  return raw === undefined || raw === '' ? fallback : raw;
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])$/;

/** One bootstrap address: host:port (IPv6 in brackets), port 1..65535. */
export function parseBroker(entry: string, variable = 'KAFKA_BROKERS'): string {
  const text = entry.trim();
  const m = /^(.+):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !HOST.test(m[1]!) || port < 1 || port > 65535) {
    throw new ConfigError(`${variable}: "${text}" is not host:port (expected e.g. 127.0.0.1:9092 or kafka-1.internal:9093)`);
  }
  return text;
}

/** A comma-separated list of host:port. */
export function parseBrokers(value: string | undefined, variable = 'KAFKA_BROKERS'): string[] {
  if (value === undefined || value.trim() === '') throw new ConfigError(`${variable} is required (comma-separated host:port, e.g. 127.0.0.1:9092)`);
  const entries = value.split(',');
  if (entries.some((e) => e.trim() === '')) throw new ConfigError(`${variable}: empty entry in "${value}" (comma-separated host:port)`);
  return entries.map((e) => parseBroker(e, variable));
}

const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;

/** A Kafka topic name: letters, digits, '.', '_', '-'; at most 249 characters; not '.' or '..'. */
export function parseTopic(name: string, variable: string): string {
  const text = name.trim();
  if (!TOPIC.test(text) || text === '.' || text === '..') {
    throw new ConfigError(`${variable}: "${text}" is not a valid topic name (letters, digits, '.', '_', '-'; 1 to 249 characters)`);
  }
  return text;
}

function parseTopics(value: string, variable: string): string[] {
  const names = value.split(',').map((t) => parseTopic(t, variable));
  return [...new Set(names)];
}

function parseBool(value: string | undefined, variable: string): boolean | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new ConfigError(`${variable} must be true or false, got "${value}"`);
}

function parseMs(env: Env, variable: string, fallback: number, min: number, max: number): number {
  const raw = env[variable];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ConfigError(`${variable} must be an integer from ${min} to ${max} (milliseconds), got "${raw}"`);
  return n;
}

function readPem(env: Env, variable: string): Buffer | undefined {
  const file = env[variable];
  if (file === undefined || file.trim() === '') return undefined;
  try {
    return fs.readFileSync(file.trim());
  } catch (e) {
    throw new ConfigError(`${variable}: cannot read ${file.trim()} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** KAFKA_SSL and the PEM files. Files imply TLS; files with KAFKA_SSL=false is a contradiction. */
function tlsConfig(env: Env): KafkaTls | null {
  const enabled = parseBool(env.KAFKA_SSL, 'KAFKA_SSL');
  const files = { ca: readPem(env, 'KAFKA_SSL_CA_FILE'), cert: readPem(env, 'KAFKA_SSL_CERT_FILE'), key: readPem(env, 'KAFKA_SSL_KEY_FILE') };
  const anyFile = files.ca !== undefined || files.cert !== undefined || files.key !== undefined;
  if (enabled === false && anyFile) throw new ConfigError('KAFKA_SSL=false but KAFKA_SSL_*_FILE is set: remove the files or enable TLS');
  if ((files.cert === undefined) !== (files.key === undefined)) {
    throw new ConfigError('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (client certificate and its key)');
  }
  if (!enabled && !anyFile) return null;
  const tls: KafkaTls = {};
  if (files.ca) tls.ca = files.ca;
  if (files.cert) tls.cert = files.cert;
  if (files.key) tls.key = files.key;
  return tls;
}

const MECHANISMS: readonly SaslMechanism[] = ['plain', 'scram-sha-256', 'scram-sha-512'];

function saslConfig(env: Env): KafkaConnection['sasl'] {
  const mechanism = env.KAFKA_SASL_MECHANISM?.trim().toLowerCase() ?? '';
  const username = env.KAFKA_SASL_USERNAME ?? '';
  const password = env.KAFKA_SASL_PASSWORD ?? '';
  if (mechanism === '') {
    if (username !== '' || password !== '') throw new ConfigError('KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD are set but KAFKA_SASL_MECHANISM is not (plain, scram-sha-256 or scram-sha-512)');
    return null;
  }
  if (!(MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new ConfigError(`KAFKA_SASL_MECHANISM must be one of ${MECHANISMS.join(', ')}, got "${env.KAFKA_SASL_MECHANISM}"`);
  }
  if (username === '' || password === '') throw new ConfigError(`KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`);
  return { mechanism: mechanism as SaslMechanism, username, password };
}

const LOG_LEVELS: readonly KafkaLogLevel[] = ['nothing', 'error', 'warn', 'info', 'debug'];

function logLevel(env: Env): KafkaLogLevel {
  const v = env.KAFKA_LOG_LEVEL?.trim().toLowerCase();
  if (v === undefined || v === '') return KAFKA_DEFAULTS.logLevel;
  if (!(LOG_LEVELS as readonly string[]).includes(v)) throw new ConfigError(`KAFKA_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.KAFKA_LOG_LEVEL}"`);
  return v as KafkaLogLevel;
}

/** Connection settings only (what `produce` needs). */
export function kafkaConnectionFromEnv(env: Env = process.env, overrides: KafkaOverrides = {}): KafkaConnection {
  return {
    brokers: parseBrokers(setting(env, 'KAFKA_BROKERS', overrides.brokers)),
    clientId: textSetting(env, 'KAFKA_CLIENT_ID', overrides.clientId, KAFKA_DEFAULTS.clientId),
    tls: tlsConfig(env),
    sasl: saslConfig(env),
    connectTimeoutMs: parseMs(env, 'KAFKA_CONNECT_TIMEOUT_MS', KAFKA_DEFAULTS.connectTimeoutMs, 100, 120_000),
    requestTimeoutMs: parseMs(env, 'KAFKA_REQUEST_TIMEOUT_MS', KAFKA_DEFAULTS.requestTimeoutMs, 1000, 300_000),
    logLevel: logLevel(env),
  };
}

/** Everything the consumer needs. The DLQ topic must differ from the consumed topics (no feedback loop). */
export function kafkaIngestConfigFromEnv(env: Env = process.env, overrides: KafkaOverrides = {}): KafkaIngestConfig {
  const connection = kafkaConnectionFromEnv(env, overrides);
  const topics = parseTopics(textSetting(env, 'KAFKA_TOPICS', overrides.topics, KAFKA_DEFAULTS.topics), 'KAFKA_TOPICS');
  const dlqRaw = setting(env, 'KAFKA_DLQ_TOPIC', overrides.dlqTopic);
  const dlqTopic = dlqRaw === undefined ? KAFKA_DEFAULTS.dlqTopic : dlqRaw.trim() === '' ? null : parseTopic(dlqRaw, 'KAFKA_DLQ_TOPIC');
  if (dlqTopic !== null && topics.includes(dlqTopic)) {
    throw new ConfigError(`KAFKA_DLQ_TOPIC "${dlqTopic}" is also in KAFKA_TOPICS: dead letters would be consumed again`);
  }
  const catalogRaw = setting(env, 'KAFKA_CATALOG_TOPIC', overrides.catalogTopic);
  const catalogTopic = catalogRaw === undefined || catalogRaw.trim() === '' ? null : parseTopic(catalogRaw, 'KAFKA_CATALOG_TOPIC');
  if (catalogTopic !== null && (topics.includes(catalogTopic) || catalogTopic === dlqTopic)) {
    throw new ConfigError(`KAFKA_CATALOG_TOPIC "${catalogTopic}" must differ from KAFKA_TOPICS and KAFKA_DLQ_TOPIC`);
  }
  const shardRaw = setting(env, 'SHARD', overrides.shard);
  const shard = shardRaw === undefined || shardRaw.trim() === '' ? WHOLE : parseShard(shardRaw);
  if (typeof shard === 'string') throw new ConfigError(`SHARD: ${shard}`);
  // Without a catalog topic, a shard would hold only the accounts and keys that happen to be keyed into its partitions.
  if (shard.n > 1 && catalogTopic === null) {
    throw new ConfigError(`SHARD=${shard.k}/${shard.n} needs KAFKA_CATALOG_TOPIC: the accounts, keys, engines and projects every shard must hold (docs/scale-out.md)`);
  }
  return {
    ...connection,
    topics,
    catalogTopic,
    shard,
    groupId: textSetting(env, 'KAFKA_GROUP_ID', overrides.groupId, KAFKA_DEFAULTS.groupId),
    dlqTopic,
    // The broker's group.min.session.timeout.ms is 6000 by default.
    sessionTimeoutMs: parseMs(env, 'KAFKA_SESSION_TIMEOUT_MS', KAFKA_DEFAULTS.sessionTimeoutMs, 6000, 300_000),
  };
}
