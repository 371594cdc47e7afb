import { deadLetterRows, openDb, parseKafkaSource, type DeadLetterRow } from '../store';
import { boolFlag, requireString, type Command, type FlagTable, type Parsed } from './flags';

const FLAGS = {
  db: { type: 'string', value: 'FILE', env: 'VISIBILITY_DB', shows: 'required', help: 'the database to read (opened read-only, never created or migrated)' },
  json: { type: 'boolean', help: 'a JSON array, one object per event set aside (its raw line included), instead of a line each' },
} satisfies FlagTable;

/** Where a dead letter came from, as the user knows it: FILE:LINE, or the Kafka partition and offset. */
function place(r: DeadLetterRow): { where: string; file?: string; line?: number; topic?: string; partition?: number; offset?: number } {
  if (r.source.startsWith('file:')) {
    const file = r.source.slice('file:'.length);
    return { where: `${file}:${r.position}`, file, line: r.position };
  }
  const k = parseKafkaSource(r.source);
  if (k) return { where: `kafka ${k.topic} partition ${k.partition} offset ${r.position}`, topic: k.topic, partition: k.partition, offset: r.position };
  return { where: `${r.source} ${r.position}` };
}

async function deadLettersCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  const file = requireString(p, 'db');
  const json = boolFlag(p, 'json');
  const db = openDb(file, { readonly: true });
  try {
    let n = 0;
    // Streamed: a log with many bad lines is listed without holding them all.
    if (json) process.stdout.write('[');
    for (const r of deadLetterRows(db)) {
      const { where, ...at } = place(r);
      if (json) {
        const o = { source: r.source, ...at, reason: r.reason, detail: r.detail, event_id: r.event_id, type: r.type, received_at: r.received_at, published_at: r.published_at, raw: r.raw.toString('utf8') };
        process.stdout.write(`${n === 0 ? '\n' : ',\n'}${JSON.stringify(o)}`);
      } else {
        const event = r.event_id !== null ? ` (event ${r.event_id}${r.type !== null ? `, ${r.type}` : ''})` : '';
        process.stdout.write(`${where}: ${r.reason}${event}: ${r.detail}\n`);
      }
      n += 1;
    }
    if (json) process.stdout.write(n === 0 ? ']\n' : '\n]\n');
    else console.error(`${n} event(s) set aside in ${file}`);
    return 0;
  } finally {
    db.close();
  }
}

export const command: Command<typeof FLAGS> = { synopsis: '--db FILE [--json]', flags: FLAGS, run: deadLettersCommand };
