// How the serving thread learns that data changed: this process's threads through the shared
// commit counter, other writers through SQLite's data_version (test/serve/hot-path.test.ts: another process).
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import t from 'tap';
import { ReadStore } from '../../src/readmodels';
import { Access } from '../../src/serve/http/access';
import { commitCounter } from '../../src/store';
import { ev, W, world } from '../helpers/events';
import { tmpDb } from '../helpers/db';
import { ROOT } from '../helpers/paths';

const renamed = (name: string, at: string): string => JSON.stringify(ev('account.upserted', { account_id: W.account, name }, at));

/** Applies one event from a worker thread that shares (or not) this thread's commit counter. */
function commitFromThread(file: string, raw: string, shareCounter: boolean): Promise<void> {
  const code = `require('tsx/cjs/api').register();
    const { workerData, parentPort } = require('node:worker_threads');
    const { adoptCommitCounter, openDb, Projector } = require(${JSON.stringify(path.join(ROOT, 'src/store'))});
    if (workerData.commits) adoptCommitCounter(workerData.commits);
    const db = openDb(workerData.file);
    new Projector(db).applyBatch([{ raw: workerData.raw, source: 'thread', position: 1 }]);
    db.close();
    parentPort.postMessage('done');`;
  const worker = new Worker(code, { eval: true, workerData: { file, raw, commits: shareCounter ? commitCounter() : null } });
  return new Promise((resolve, reject) => {
    worker.once('message', () => void worker.terminate().then(() => resolve()));
    worker.once('error', reject);
  });
}

t.test('a commit by a thread that shares the counter is seen at once; SQLite is not asked otherwise', async (t) => {
  const { db, projector, file } = tmpDb();
  projector.applyBatch(world().map((e, i) => ({ raw: JSON.stringify(e), source: 'seed', position: i + 1 })));
  const reader = new Database(file, { readonly: true });
  t.teardown(() => {
    reader.close();
    db.close();
  });
  // Never asks SQLite about other processes after the first check: only the counter can tell.
  const access = new Access(new ReadStore(reader), Infinity);
  const g0 = access.refresh();
  t.equal(access.refresh(), g0, 'nothing committed, same generation');

  await commitFromThread(file, renamed('Thread Co', '2026-03-01T00:00:00Z'), true);
  const g1 = access.refresh();
  t.not(g1, g0, 'a commit by a thread sharing the counter: the next refresh forgets');

  await commitFromThread(file, renamed('Silent Co', '2026-03-02T00:00:00Z'), false);
  t.equal(access.refresh(), g1, 'a writer that does not share the counter is not seen without asking SQLite');

  const asking = new Access(new ReadStore(reader), 0);
  const a0 = asking.refresh();
  await commitFromThread(file, renamed('Asked Co', '2026-03-04T00:00:00Z'), false);
  t.not(asking.refresh(), a0, 'asking SQLite every time sees any connection\'s commit');
});
