// The demo world replayed once into a temporary database, shared by the tests of one file.
import path from 'node:path';
import { DEMO_KEYS } from '../../fixtures/world';
import { replayFiles } from '../../src/ingest';
import { openDb, Projector, type Db } from '../../src/store';
import { tmpDir } from './db';
import { ROOT } from './paths';

export const DEMO_FILE = path.join(ROOT, 'fixtures', 'demo', 'events.ndjson.gz');

export async function demoDb(): Promise<{ db: Db; file: string; projector: Projector }> {
  const file = path.join(tmpDir('demo-'), 'demo.db');
  const db = openDb(file, { fast: true });
  const projector = new Projector(db);
  await replayFiles(db, projector, [DEMO_FILE], { batchSize: 2000 });
  return { db, file, projector };
}

export const activeKeys = DEMO_KEYS.filter((k) => !k.revoked);
export const revokedKey = DEMO_KEYS.find((k) => k.revoked)!;
