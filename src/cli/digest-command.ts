import { digest, openDb, pendingPeriods } from '../store';
import { requireString, type Command, type FlagTable, type Parsed } from './flags';

const FLAGS = {
  db: { type: 'string', value: 'FILE', env: 'VISIBILITY_DB', shows: 'required', help: 'the database to digest (opened read-only, never created or migrated)' },
} satisfies FlagTable;

async function digestCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  const file = requireString(p, 'db');
  // Read-only: a missing, empty, foreign, newer or damaged file is a DbOpenError naming it (one line, exit 2).
  const db = openDb(file, { readonly: true });
  try {
    console.log(digest(db));
    // A replay or consumer stopped without settling left its latest weeks and months to count again: the
    // answers do not depend on it, the digest does, until the next replay or Kafka ingest settles them.
    const pending = pendingPeriods(db);
    if (pending > 0) console.error(`visibility-api digest: ${pending} week/month roll-up period(s) pending (a writer stopped before settling them); the next replay or Kafka ingest settles them, and the digest changes then`);
    return 0;
  } finally {
    db.close();
  }
}

export const command: Command<typeof FLAGS> = { synopsis: '--db FILE', flags: FLAGS, run: digestCommand };
