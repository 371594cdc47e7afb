// Dead letters to the DLQ topic with the outbox pattern. The projector writes a dead letter in the
// same SQLite transaction as the rest of its batch; this publisher sends the rows not yet published
// and marks them. A broker outage or a crash only delays the DLQ copy: the row is never lost, and a
// crash between the send and the mark sends it again (at-least-once on the DLQ topic).
import { DeadLetterOutbox, parseKafkaSource, type Db, type PendingDeadLetter } from '../../store';
import { describeKafkaError, type KafkaLog, type OutboundMessage, type ProducerAdapter } from './client';

/** Header names on every DLQ record. */
export const DLQ_HEADERS = {
  reason: 'dlq-reason',
  detail: 'dlq-detail',
  topic: 'source-topic',
  partition: 'source-partition',
  offset: 'source-offset',
} as const;

/** Long ajv details would bloat every header; the full text stays in the table. */
const MAX_DETAIL = 1000;

function toDlqMessage(row: PendingDeadLetter): OutboundMessage {
  const from = parseKafkaSource(row.source);
  return {
    key: null,
    value: row.raw,
    headers: {
      [DLQ_HEADERS.reason]: row.reason,
      [DLQ_HEADERS.detail]: row.detail.length > MAX_DETAIL ? `${row.detail.slice(0, MAX_DETAIL)}...` : row.detail,
      [DLQ_HEADERS.topic]: from?.topic ?? row.source,
      [DLQ_HEADERS.partition]: String(from?.partition ?? ''),
      [DLQ_HEADERS.offset]: String(row.position),
    },
  };
}

export interface DlqStatus {
  topic: string;
  /** Sent by this process. */
  published: number;
  /** Kafka dead letters in the table not yet on the topic. */
  pending: number;
  last_error: string | null;
}

export interface DlqOptions {
  batchSize?: number;
  retryMs?: number;
  log?: KafkaLog;
}

export class DeadLetterPublisher {
  private readonly outbox: DeadLetterOutbox;
  private running: Promise<void> | null = null;
  private rerun = false;
  private stopped = false;
  private connected = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private published = 0;
  private lastError: string | null = null;

  constructor(db: Db, private readonly producer: ProducerAdapter, readonly topic: string, private readonly opts: DlqOptions = {}) {
    this.outbox = new DeadLetterOutbox(db);
  }

  /** Publishes whatever is pending. Calls made while a pass runs are folded into one more pass. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    clearTimeout(this.retryTimer);
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.rerun) {
        this.rerun = false;
        this.kick();
      }
    });
  }

  status(): DlqStatus {
    return { topic: this.topic, published: this.published, pending: this.stopped ? 0 : this.outbox.pendingCount(), last_error: this.lastError };
  }

  /** Waits for a pass in progress (the database must stay open until then), then disconnects. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.running;
    if (this.connected) await this.producer.disconnect().catch(() => undefined);
  }

  private async drain(): Promise<void> {
    try {
      if (!this.connected) {
        await this.producer.connect();
        this.connected = true;
      }
      while (!this.stopped) {
        const rows = this.outbox.pending(this.opts.batchSize ?? 200);
        if (rows.length === 0) break;
        await this.producer.send(this.topic, rows.map(toDlqMessage));
        if (this.stopped) break; // the database may be closing; the rows are sent again next start
        this.outbox.markPublished(rows.map((r) => r.id), new Date().toISOString());
        this.published += rows.length;
      }
      this.lastError = null;
    } catch (e) {
      this.lastError = `publishing dead letters to ${this.topic} failed: ${describeKafkaError(e)}`;
      this.opts.log?.('warn', `${this.lastError} (retrying in ${(this.opts.retryMs ?? 5000) / 1000} s)`);
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => this.kick(), this.opts.retryMs ?? 5000);
    this.retryTimer.unref();
  }
}
