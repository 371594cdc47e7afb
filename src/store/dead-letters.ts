import type { Statement, Transaction } from 'better-sqlite3';
import type { Db } from './db';

/** A dead letter waiting for the DLQ topic. */
export interface PendingDeadLetter {
  id: number;
  source: string;
  position: number;
  reason: string;
  detail: string;
  raw: Buffer;
}

// Same predicate as the partial index in 002_dead_letter_outbox.sql, so SQLite uses it.
const UNPUBLISHED = "published_at IS NULL AND source GLOB 'kafka:*'";

/**
 * The dead-letter outbox: Kafka dead letters the projector wrote (in its batch's transaction) and
 * the DLQ publisher has not yet sent, oldest first.
 */
export class DeadLetterOutbox {
  private readonly batch: Statement;
  private readonly count: Statement;
  private readonly markAll: Transaction<(ids: number[], at: string) => void>;

  constructor(db: Db) {
    this.batch = db.prepare(`SELECT id, source, position, reason, detail, raw FROM dead_letters WHERE ${UNPUBLISHED} ORDER BY id LIMIT ?`);
    this.count = db.prepare(`SELECT count(*) FROM dead_letters WHERE ${UNPUBLISHED}`).pluck();
    const mark = db.prepare('UPDATE dead_letters SET published_at = ? WHERE id = ?');
    this.markAll = db.transaction((ids: number[], at: string) => {
      for (const id of ids) mark.run(at, id);
    });
  }

  /** Up to `limit` unpublished Kafka dead letters, oldest first. */
  pending(limit: number): PendingDeadLetter[] {
    return this.batch.all(limit) as PendingDeadLetter[];
  }

  pendingCount(): number {
    return this.count.get() as number;
  }

  /** Marks `ids` published at `at`, in one transaction. */
  markPublished(ids: number[], at: string): void {
    this.markAll(ids, at);
  }
}

/** A dead letter as `visibility-api dead-letters` shows it. */
export interface DeadLetterRow {
  source: string;
  position: number;
  reason: string;
  detail: string;
  event_id: string | null;
  type: string | null;
  received_at: string;
  published_at: string | null;
  raw: Buffer;
}

/** Every event set aside, oldest first (file lines, Kafka offsets), for a person to look at. */
export function deadLetterRows(db: Db): IterableIterator<DeadLetterRow> {
  return db.prepare('SELECT source, position, reason, detail, event_id, type, received_at, published_at, raw FROM dead_letters ORDER BY id')
    .iterate() as IterableIterator<DeadLetterRow>;
}

/**
 * A file read again from its first line: its dead letters go, and the lines still bad are set aside
 * again as they are read (a line fixed since leaves none). A stop midway loses none: the re-run
 * resumes at the first line this one did not read. File sources never go to the DLQ topic.
 */
export function forgetFileDeadLetters(db: Db, source: string): void {
  db.prepare("DELETE FROM dead_letters WHERE source = ? AND source GLOB 'file:*'").run(source);
}
