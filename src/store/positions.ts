import type { Statement } from 'better-sqlite3';
import type { Db } from './db';

/** The `source` of an event read from Kafka, as stored in source_positions and dead_letters. */
export function kafkaSource(topic: string, partition: number): string {
  return `kafka:${topic}:${partition}`;
}

/** Inverse of kafkaSource; topic names cannot contain ':', so the last one separates the partition. */
export function parseKafkaSource(source: string): { topic: string; partition: number } | null {
  const m = /^kafka:([^:]+):(\d+)$/.exec(source);
  return m ? { topic: m[1]!, partition: Number(m[2]) } : null;
}

/** The first `lines` lines of a file, as a replay applied them: their SHA-256 (each line's bytes and \n). */
export interface SourcePrefix { lines: number; sha256: string }

/**
 * Where each source resumes: source_positions holds the next position (NDJSON line, Kafka offset)
 * of every source, written by the projector in the same transaction as the facts it applied.
 */
export class SourcePositions {
  private readonly next: Statement;
  private readonly kafka: Statement;
  // Prepared on first use: only a file replay (whose database is migrated) reads or writes them.
  private prefix: Statement | undefined;
  private setPrefix: Statement | undefined;

  constructor(private readonly db: Db) {
    this.next = db.prepare('SELECT position FROM source_positions WHERE source = ?').pluck();
    this.kafka = db.prepare("SELECT source, position FROM source_positions WHERE source GLOB 'kafka:*'");
  }

  /** The next position to apply from `source`; undefined before anything of it was committed. */
  nextOf(source: string): number | undefined {
    return this.next.get(source) as number | undefined;
  }

  /** The fingerprint of the lines of a file source applied so far (source_prefixes), if one was kept. */
  prefixOf(source: string): SourcePrefix | undefined {
    this.prefix ??= this.db.prepare('SELECT lines, sha256 FROM source_prefixes WHERE source = ?');
    return this.prefix.get(source) as SourcePrefix | undefined;
  }

  /** Keeps the fingerprint of a file source's first `lines` lines (after their batch committed). */
  notePrefix(source: string, p: SourcePrefix): void {
    this.setPrefix ??= this.db.prepare(`INSERT INTO source_prefixes (source, lines, sha256) VALUES (?, ?, ?)
      ON CONFLICT (source) DO UPDATE SET lines = excluded.lines, sha256 = excluded.sha256`);
    this.setPrefix.run(source, p.lines, p.sha256);
  }

  /** The next position of every Kafka partition (sources `kafka:<topic>:<partition>`), by source. */
  kafkaPositions(): Map<string, number> {
    const rows = this.kafka.all() as Array<{ source: string; position: number }>;
    return new Map(rows.map((r) => [r.source, r.position]));
  }
}
