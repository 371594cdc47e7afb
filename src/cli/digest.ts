import { digest, openDb } from '../store';
import { parse, requireString } from './args';


export async function digestCommand(argv: string[]): Promise<number> {
  const p = parse(argv, { db: { type: 'string' } }, { db: 'VISIBILITY_DB' });
  const file = requireString(p, 'db');
  // Read-only: a missing, empty, foreign, newer or damaged file is a DbOpenError naming it (one line, exit 2).
  const db = openDb(file, { readonly: true });
  try {
    console.log(digest(db));
    return 0;
  } finally {
    db.close();
  }
}
