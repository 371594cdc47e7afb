import { digest, openDb } from '../store';
import fs from 'node:fs';
import { parse, requireString, UsageError } from './args';


export async function digestCommand(argv: string[]): Promise<number> {
  const p = parse(argv, { db: { type: 'string' } }, { db: 'VISIBILITY_DB' });
  const file = requireString(p, 'db');
  if (!fs.existsSync(file)) throw new UsageError(`database not found: ${file}`);
  const db = openDb(file, { readonly: true });
  try {
    console.log(digest(db));
    return 0;
  } finally {
    db.close();
  }
}
