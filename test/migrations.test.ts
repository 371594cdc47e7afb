// A database written before migrations 003 and 004 is brought up to date on open and then holds
// exactly what this build writes: same digest as the same events projected from scratch.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { digest, knownSchemaVersion, openDb, Projector } from '../src/store';
import { asSource, ev, run, tmpDir, W, world } from './helpers';

function events(): ReturnType<typeof world> {
  // Titles cited at different times in different buckets, and a run naming another project than its group's.
  const titled = (n: number, day: string, hour: string, title: string | null, engine = W.engineA): ReturnType<typeof run> => {
    const e = run({ n, day, engine, citations: ['https://docs.example.org/guide'] });
    const c = (e.data.citations as Array<Record<string, unknown>>)[0]!;
    if (title) c.title = title;
    e.data.completed_at = `${day}T${hour}:00:00Z`;
    return e;
  };
  const foreign = run({ n: 9 });
  foreign.data.project_id = W.otherProject;
  return [
    ...world(),
    ev('project.engine_tracked', { project_id: W.otherProject, engine_id: W.engineA, at: '2026-01-01T00:00:00Z' }),
    titled(1, '2026-01-05', '10', 'Old title'), titled(2, '2026-01-05', '14', null),
    titled(3, '2026-01-05', '12', 'New title', W.engineB), foreign, run({ n: 10, status: 'failed' }),
  ];
}

t.test('an older database is migrated to what this build writes', async (t) => {
  const dir = tmpDir('migrate-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fresh = openDb(path.join(dir, 'fresh.db'));
  new Projector(fresh).applyBatch(asSource(events()));
  const expected = digest(fresh);
  fresh.close();

  // The same data as schema 2 held it: run group counts per group, no title_at.
  const oldFile = path.join(dir, 'old.db');
  const old = openDb(oldFile);
  new Projector(old).applyBatch(asSource(events()));
  old.exec(`
    ALTER TABLE agg_url_day DROP COLUMN title_at;
    CREATE TABLE g (run_group_id TEXT PRIMARY KEY, prompt_run_count INTEGER NOT NULL, succeeded_count INTEGER NOT NULL, failed_count INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO g SELECT run_group_id, sum(prompt_run_count), sum(succeeded_count), sum(failed_count) FROM agg_run_group GROUP BY run_group_id;
    DROP TABLE agg_run_group;
    ALTER TABLE g RENAME TO agg_run_group;
    PRAGMA user_version = 2;
  `);
  t.equal(old.prepare('SELECT prompt_run_count FROM agg_run_group WHERE run_group_id = ?').pluck().get(W.group), 5, 'schema 2 counted the foreign run in the group');
  old.close();

  const migrated = openDb(oldFile);
  t.teardown(() => migrated.close());
  t.equal(migrated.pragma('user_version', { simple: true }), knownSchemaVersion(), 'brought to the newest schema');
  t.equal(digest(migrated), expected, 'the digest of a fresh projection');
  t.same(migrated.prepare('SELECT title, title_at FROM agg_url_day WHERE title IS NOT NULL ORDER BY title').all(), [
    { title: 'New title', title_at: '2026-01-05T12:00:00.000Z' },
    { title: 'Old title', title_at: '2026-01-05T10:00:00.000Z' },
  ], 'title_at filled in from the runs');
  t.same(migrated.prepare('SELECT project_id, prompt_run_count FROM agg_run_group WHERE run_group_id = ? ORDER BY project_id').all(W.group), [
    { project_id: W.project, prompt_run_count: 4 }, { project_id: W.otherProject, prompt_run_count: 1 },
  ], 'run group counts per project');
});
