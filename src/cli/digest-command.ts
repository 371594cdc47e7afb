import { digest, openDb, pendingPeriods, pendingRecounts } from '../store';
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
    // A live writer counting a project again a slice a batch (migration 018): its rows are part old until it is done.
    const recounts = pendingRecounts(db);
    if (recounts > 0) console.error(`visibility-api digest: ${recounts} project(s) still being counted again after a change of what counts; the writer's next batches or its stop finish them, and the digest changes then`);
    return 0;
  } finally {
    db.close();
  }
}

export const command: Command<typeof FLAGS> = { synopsis: '--db FILE', flags: FLAGS, run: digestCommand };
