// A project with many runs a day replays in a small heap: what the writer reads back of a project's
// runs (a recount after a prompt is deleted mid-history, a period counted again) comes a page of runs
// at a time, not a week, so the replay thread's memory does not grow with the project's runs per day.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { replayInThread } from '../../src/ingest/replay-thread';
import { digest, openReader } from '../../src/store';
import { DEMO_OPTIONS, generateWorld } from '../../fixtures/world';
import { tmpDir } from '../helpers/db';

/** One project of 60 prompts x 5 engines at 8 run groups a day (2,400 runs a day, a week ~17,000): a prompt is deleted on day 8. */
const WORLD = { ...DEMO_OPTIONS, seed: 53, accounts: 1, projectsPerAccount: 1, sharedProjects: 0, engines: 5, enginesPerProject: 5, promptsPerProject: 60, runsPerPromptPerDay: 8, days: 12 };
/** Far below the default cap (256 MB), and below what one read of a week of this project's runs took. */
const SMALL_HEAP_MB = 48;

function replayedDigest(log: string, dbFile: string, heapMb?: number): Promise<string> {
  const run = replayInThread({ dbFile, files: [log], batchSize: 1000, fromStart: false, ...(heapMb ? { heapMb } : {}) }, () => {});
  return run.done.then(() => {
    const db = openReader(dbFile);
    try {
      return digest(db);
    } finally {
      db.close();
    }
  });
}

t.test('a project with many runs a day replays in a small heap, to the digest of a replay in the default one', async (t) => {
  const dir = tmpDir('replay-heap-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'world.ndjson');
  const lines = [...generateWorld(WORLD)];
  t.ok(lines.some((l) => l.includes('"type":"prompt.deleted"')), 'the world deletes a prompt mid-history (its project is counted again)');
  fs.writeFileSync(log, lines.join('\n') + '\n');
  const small = await replayedDigest(log, path.join(dir, 'small.db'), SMALL_HEAP_MB);
  const normal = await replayedDigest(log, path.join(dir, 'normal.db'));
  t.equal(small, normal, 'same digest');
});
