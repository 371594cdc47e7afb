import { digest, openDb, pendingPeriods } from '../store';
import { parse, requireString } from './args';


export async function digestCommand(argv: string[]): Promise<number> {
  const p = parse(argv, { db: { type: 'string' } }, { db: 'VISIBILITY_DB' });
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
