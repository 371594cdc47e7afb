import type { Db } from './db';

/** The database's cursor key (migration 014), or null in a file without one (a schema before 014). */
export function storedCursorSecret(db: Db): Buffer | null {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cursor_secret'").get();
  if (table === undefined) return null;
  return (db.prepare('SELECT secret FROM cursor_secret WHERE id = 1').pluck().get() as Buffer | undefined) ?? null;
}
