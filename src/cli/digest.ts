import { digest, openDb } from '../store';
import { parse, requireString } from './args';


export async function digestCommand(argv: string[]): Promise<number> {
  const p = parse(argv, { db: { type: 'string' } }, { db: 'VISIBILITY_DB' });
  const db = openDb(requireString(p, 'db'), { readonly: true });
  try {
    console.log(digest(db));
    return 0;
  } finally {
    db.close();
  }
}
