// NDJSON files -> a Kafka topic, keyed so each project's events stay in order within one partition
// (spec section 3). Lines that cannot be parsed are sent too, unkeyed: the consumer dead-letters
// them, which is the point of producing them. With a catalog topic (a sharded fleet), the
// account-wide facts and the events that name no project go there instead, for every shard.
import { isCatalogEvent } from '../../events';
import { readLines, type ByteMeter } from '../line-reader';
import { createKafkaClient, stderrKafkaLog, type KafkaLog, type OutboundMessage, type ProducerAdapter } from './client';
import type { KafkaConnection } from './config';

type Data = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Event types not keyed by data.project_id: the entity that orders them. */
const KEY_OF: Record<string, (d: Data) => string | null> = {
  'project.upserted': (d) => str(d.id),
  'project.deleted': (d) => str(d.id),
  'account.upserted': (d) => str(d.account_id),
  'api_key.issued': (d) => str(d.account_id),
  'api_key.revoked': (d) => str(d.key_id),
  'engine.upserted': (d) => str(d.id),
  'webhook.subscribed': (d) => str(d.id),
  'webhook.unsubscribed': (d) => str(d.id),
  // These may not carry the project: keyed by their own id then (their facts are order-independent).
  'run_group.completed': (d) => str(d.project_id) ?? str(d.id),
  'forum_post.updated': (d) => str(d.project_id) ?? str(d.id),
};

/** Where a line goes: its record key (null if unparseable) and whether it is a catalog fact. */
export interface Routed {
  key: string | null;
  /** Account-wide, or names no project: every shard needs it (the catalog topic, when there is one). */
  catalog: boolean;
}

/** The record key of an NDJSON line (the project id, or the account or entity id) and whether it is catalog. */
export function routeLine(line: string): Routed {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { key: null, catalog: false };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { key: null, catalog: false };
  const { type, data } = value as { type?: unknown; data?: unknown };
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { key: null, catalog: false };
  const d = data as Data;
  const keyOf = typeof type === 'string' ? KEY_OF[type] : undefined;
  const key = keyOf ? keyOf(d) : (str(d.project_id) ?? str(d.account_id) ?? str(d.id));
  return { key, catalog: typeof type === 'string' && isCatalogEvent(type, d) };
}

/** The record key of an NDJSON line: the project id, or the account (or entity) id; null if unparseable. */
export function eventKey(line: string): string | null {
  return routeLine(line).key;
}

export interface ProduceTotals {
  sent: number;
  unkeyed: number;
  blank: number;
  batches: number;
}

export interface ProduceOptions {
  /** Records per send (default 1000). */
  batchSize?: number;
  /**
   * Bytes of values per send (default 512 KiB). A send becomes one record batch per partition, and
   * the broker refuses a batch over message.max.bytes (1 MiB by default).
   */
  maxBatchBytes?: number;
  onBatch?: (totals: ProduceTotals) => void;
  /** Catalog facts go to this topic (routeLine); absent: every line goes to the events topic. */
  catalogTopic?: string;
}

/**
 * Sends lines in order, one batch at a time: a batch is acknowledged by all in-sync replicas
 * (acks -1) before the next is sent, so the per-key order of the input is kept.
 */
export async function produceLines(producer: ProducerAdapter, topic: string, lines: AsyncIterable<string> | Iterable<string>, opts: ProduceOptions = {}): Promise<ProduceTotals> {
  const totals: ProduceTotals = { sent: 0, unkeyed: 0, blank: 0, batches: 0 };
  const batchSize = opts.batchSize ?? 1000;
  const maxBatchBytes = opts.maxBatchBytes ?? 512 * 1024;
  // One pending batch per topic; each is sent in input order, so per-key order holds in each topic.
  const pending = new Map<string, { batch: OutboundMessage[]; bytes: number }>();
  const flush = async (to: string): Promise<void> => {
    const p = pending.get(to);
    if (!p || p.batch.length === 0) return;
    pending.delete(to);
    await producer.send(to, p.batch);
    totals.sent += p.batch.length;
    totals.batches += 1;
    opts.onBatch?.(totals);
  };
  for await (const line of lines) {
    if (line.trim() === '') {
      totals.blank += 1;
      continue;
    }
    const { key, catalog } = routeLine(line);
    if (key === null) totals.unkeyed += 1;
    const to = catalog && opts.catalogTopic !== undefined ? opts.catalogTopic : topic;
    const size = Buffer.byteLength(line);
    if ((pending.get(to)?.bytes ?? 0) + size > maxBatchBytes) await flush(to);
    let p = pending.get(to);
    if (!p) pending.set(to, (p = { batch: [], bytes: 0 }));
    p.batch.push({ key, value: line });
    p.bytes += size;
    if (p.batch.length >= batchSize) await flush(to);
  }
  // The catalog first: a shard then knows the accounts and projects when their data arrives.
  if (opts.catalogTopic !== undefined) await flush(opts.catalogTopic);
  await flush(topic);
  return totals;
}

async function* linesOf(files: string[], meter?: ByteMeter): AsyncGenerator<string> {
  for (const file of files) yield* readLines(file, meter);
}

/** Connects (failing fast when the cluster is unreachable), sends every file in order, disconnects. */
export async function produceFiles(
  conn: KafkaConnection, topic: string, files: string[], opts: ProduceOptions & { log?: KafkaLog; meter?: ByteMeter } = {},
): Promise<ProduceTotals> {
  const client = createKafkaClient(conn, opts.log ?? stderrKafkaLog(conn.logLevel));
  await client.checkReachable();
  const producer = client.producer();
  await producer.connect();
  try {
    return await produceLines(producer, topic, linesOf(files, opts.meter), opts);
  } finally {
    await producer.disconnect();
  }
}
