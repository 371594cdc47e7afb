import type { Statement } from 'better-sqlite3';
import type { Db } from './db';

/** Prepared once per connection: callers ask on every readiness probe until the answer is yes. */
const anyVersion = new WeakMap<Db, Statement>();

/** True once any batch changed data (a data_version exists): there is a read model to serve. */
export function hasReadModel(db: Db): boolean {
  let s = anyVersion.get(db);
  if (!s) anyVersion.set(db, (s = db.prepare('SELECT EXISTS (SELECT 1 FROM data_versions)').pluck()));
  return s.get() === 1;
}
