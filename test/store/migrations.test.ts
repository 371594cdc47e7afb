// A database written before migrations 003 to 013 is brought up to date on open and then holds
// exactly what this build writes: same digest as the same events projected from scratch (the week and
// month roll-ups of 007 among it). Older schemas are made from a database of this build: schema 10's
// day tables made again from its runs (test/store/schema-10.sql), then each later change taken back.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ENDPOINTS, ReadStore } from '../../src/readmodels';
import { digest, domainOf, knownSchemaVersion, openDb, Projector, storedCursorSecret, type Db } from '../../src/store';
import { asSource, ev, run, W, world } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { readArgs } from '../helpers/readmodels';
import { undoAfter } from '../helpers/migrations';

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
    // Thirds and two-decimal sentiments: float sums before 005, exact integers after.
    run({ n: 11, brand: 3, sentiment: 0.35, competitor: 3 }), run({ n: 12, brand: 7, sentiment: -0.1 }), run({ n: 13, brand: 3, sentiment: 0.2, competitor: 6 }),
  ];
}

/** What 012 adds: the trend's rendered day points, the days to render again and the triggers that list them. */
const UNDO_012 = `DROP TRIGGER trend_engine_added; DROP TRIGGER trend_engine_renamed; DROP TRIGGER trend_engine_dropped;
  DROP TRIGGER trend_day_added; DROP TRIGGER trend_day_changed; DROP TRIGGER trend_day_dropped; DROP TABLE trend_days; DROP TABLE trend_days_stale;`;

/** What 022 to the newest migration add, taken back (test/helpers/migrations.ts). */
const UNDO_022 = undoAfter(21);

/** What 021 adds: webhook subscriptions and the deliverer's outbox; 022 first. */
const UNDO_021 = `${UNDO_022} DROP TABLE webhooks; DROP TABLE webhook_tested; DROP TABLE webhook_outbox; DROP TABLE webhook_feed;`;

/** What 020 adds: the fingerprints of the replayed files' applied lines; 021 first. */
const UNDO_020 = `${UNDO_021} DROP TABLE source_prefixes;`;

/** What 019 adds: the shard a database holds; 020 first. */
const UNDO_019 = `${UNDO_020} DROP TABLE shard;`;

/** What 018 adds: the projects being counted again slice by slice; 019 first. */
const UNDO_018 = `${UNDO_019} DROP TABLE recounts;`;

/** What 017 adds: the months whose runs changed, per project (exports); 018 first. */
const UNDO_017 = `${UNDO_018} DROP TABLE changed_months;`;

/** What 016 adds: the filtered runs' covering index (017 taken back first). */
const UNDO_016 = `${UNDO_017} DROP INDEX runs_slices;`;

/** What 015 adds, taken back: the runs' dimensions (dims, runs.dims, the index entry and the view's columns); 016 first. */
const UNDO_015 = `${UNDO_016} DROP VIEW prompt_runs;
  CREATE VIEW prompt_runs AS
    SELECT r.id, g.id AS run_group_id, p.id AS project_id, r.facts ->> 1 AS prompt_id, r.facts ->> 0 AS engine_id, r.status,
      r.completed_at, substr(r.completed_at, 1, 10) AS day, r.facts ->> 2 AS brand_position, r.facts ->> 3 AS brand_sentiment,
      r.facts ->> 4 AS mention_count, r.facts ->> 5 AS citation_count, r.event, r.facts -> 6 AS hits, r.facts -> 7 AS cited
    FROM runs r JOIN keys p ON p.n = r.project JOIN keys g ON g.n = r.run_group;
  DROP INDEX runs_recent; ALTER TABLE runs DROP COLUMN dims; CREATE INDEX runs_recent ON runs (project, completed_at); DROP TABLE dims;`;

/** What 014 adds: the cursor key (015 taken back first). */
const UNDO_014 = `${UNDO_015} DROP TABLE cursor_secret;`;

/** What 013 changes, taken back: prompt_runs and the roll-ups as tables (test/store/schema-12.sql); 014 first. */
const UNDO_013 = `${UNDO_014} ${fs.readFileSync(path.join(__dirname, 'schema-12.sql'), 'utf8')}`;

/** A new database at `file` with the test events applied and settled, by this build. */
function withEvents(file: string): Db {
  const db = openDb(file);
  const projector = new Projector(db);
  projector.applyBatch(asSource(events()));
  projector.settle();
  return db;
}

/** A fresh database of this build holding events(), settled, and its digest. */
function freshWithEvents(dir: string): { fresh: Db; expected: string } {
  const fresh = withEvents(path.join(dir, 'fresh.db'));
  return { fresh, expected: digest(fresh) };
}

/** Schema 10 from a database of this build (settled: schema 10 had no waiting roll-ups in memory). */
const SCHEMA_10_SQL = fs.readFileSync(path.join(__dirname, 'schema-10.sql'), 'utf8');
function toSchema10(db: Db): void {
  db.function('domain_of', { deterministic: true }, (url: unknown) => domainOf(String(url)));
  db.exec(UNDO_013);
  db.exec(UNDO_012);
  db.exec(SCHEMA_10_SQL);
}

/**
 * What migrations 007 to 010 add: the week and month roll-ups, the engine-day sums and the cited URLs,
 * filled in from the day rows on migrate, and the roll-ups' pending periods (empty).
 */
const DROP_ROLLUPS = `DROP TABLE agg_prompt_week; DROP TABLE agg_prompt_month; DROP TABLE agg_competitor_week; DROP TABLE agg_competitor_month; DROP TABLE agg_engine_day;
  DROP TABLE agg_cited_day; DROP TABLE agg_cited_week; DROP TABLE agg_cited_month; DROP TABLE agg_cited_engine_week; DROP TABLE agg_cited_engine_month;
  DROP TABLE rollup_pending;`;

t.test('an older database is migrated to what this build writes', async (t) => {
  const dir = tmpDir('migrate-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { fresh, expected } = freshWithEvents(dir);
  fresh.close();

  // The same data as schema 2 held it: float sums, no title_run and the bucket index (005),
  // no title_at (004), run group counts per group (003).
  const oldFile = path.join(dir, 'old.db');
  const old = withEvents(oldFile);
  toSchema10(old);
  const mentionColumns = 'runs INTEGER NOT NULL, position_sum INTEGER NOT NULL, rr_sum REAL NOT NULL, sentiment_sum REAL NOT NULL, sentiment_n INTEGER NOT NULL';
  const floats = (scaled: string): string => scaled.replace('rr_fixed, sentiment_fixed', 'rr_fixed / 232792560.0, sentiment_fixed / 1000000.0');
  old.exec(`
    CREATE TABLE p (project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, brand_runs INTEGER NOT NULL, ${mentionColumns},
      PRIMARY KEY (project_id, day, engine_id, prompt_id)) WITHOUT ROWID;
    INSERT INTO p ${floats('SELECT project_id, day, engine_id, prompt_id, brand_runs, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n FROM agg_prompt_day')};
    DROP TABLE agg_prompt_day;
    ALTER TABLE p RENAME TO agg_prompt_day;
    CREATE TABLE c (project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, competitor_id TEXT NOT NULL, ${mentionColumns},
      PRIMARY KEY (project_id, day, engine_id, prompt_id, competitor_id)) WITHOUT ROWID;
    INSERT INTO c ${floats('SELECT project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n FROM agg_competitor_day')};
    DROP TABLE agg_competitor_day;
    ALTER TABLE c RENAME TO agg_competitor_day;
    ALTER TABLE agg_url_day DROP COLUMN title_run;
    CREATE INDEX prompt_runs_bucket ON prompt_runs (project_id, engine_id, day, prompt_id, id);
  `);
  t.ok(old.prepare('SELECT sum(rr_sum) FROM agg_prompt_day').pluck().get() as number % 1 !== 0, 'schema 4 held a fractional float sum');
  old.exec(`
    ALTER TABLE agg_url_day DROP COLUMN title_at;
    CREATE TABLE g (run_group_id TEXT PRIMARY KEY, prompt_run_count INTEGER NOT NULL, succeeded_count INTEGER NOT NULL, failed_count INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO g SELECT run_group_id, sum(prompt_run_count), sum(succeeded_count), sum(failed_count) FROM agg_run_group GROUP BY run_group_id;
    DROP TABLE agg_run_group;
    ALTER TABLE g RENAME TO agg_run_group;
    DROP TABLE project_changes;
    ALTER TABLE data_versions DROP COLUMN data_as_of;
    ${DROP_ROLLUPS}
    PRAGMA user_version = 2;
  `);
  t.equal(old.prepare('SELECT prompt_run_count FROM agg_run_group WHERE run_group_id = ?').pluck().get(W.group), 8, 'schema 2 counted the foreign run in the group');
  old.close();

  const migrated = openDb(oldFile);
  t.teardown(() => migrated.close());
  t.equal(migrated.pragma('user_version', { simple: true }), knownSchemaVersion(), 'brought to the newest schema');
  t.equal(digest(migrated), expected, 'the digest of a fresh projection');
  t.same(migrated.prepare('SELECT title, title_at, title_run FROM agg_cited_engine_week WHERE title IS NOT NULL ORDER BY title').all(), [
    { title: 'New title', title_at: '2026-01-05T12:00:00.000Z', title_run: (events().at(-6)!.data as { id: string }).id },
    { title: 'Old title', title_at: '2026-01-05T10:00:00.000Z', title_run: (events().at(-8)!.data as { id: string }).id },
  ], 'title_at and title_run filled in from the runs (004, 005), then into the cited roll-ups (009)');
  t.notOk(migrated.prepare("SELECT 1 FROM sqlite_master WHERE name = 'prompt_runs_bucket'").get(), 'the bucket index is gone');
  t.same(migrated.prepare('SELECT project_id, prompt_run_count FROM agg_run_group WHERE run_group_id = ? ORDER BY project_id').all(W.group), [
    { project_id: W.project, prompt_run_count: 7 }, { project_id: W.otherProject, prompt_run_count: 1 },
  ], 'run group counts per project');
});

// 006: data_as_of and the change log. A schema 5 database gets each project's data-as-of from the
// versions of its stored facts: the same times the projector records as it applies the events.
t.test('006 fills in data-as-of from the stored facts and starts an empty change log', async (t) => {
  const dir = tmpDir('migrate6-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'old.db');
  const db = openDb(file);
  // In several batches, one with older times last: data-as-of is a max over time, not the last batch's.
  const all = events();
  const late = all.splice(16, 3);
  new Projector(db).applyBatch(asSource(all));
  const later = new Projector(db);
  later.applyBatch(asSource(late, 'late'));
  later.settle();
  const asOf = (d: typeof db): unknown[] => d.prepare("SELECT scope, data_as_of FROM data_versions WHERE scope LIKE 'project:%' ORDER BY scope").all();
  const expected = asOf(db);
  t.same(expected.map((r) => (r as { data_as_of: string }).data_as_of), ['2026-01-05T12:00:01.000Z', '2026-01-05T12:00:01.000Z'], 'newest event time per project');
  t.ok((db.prepare('SELECT count(*) FROM project_changes').pluck().get() as number) > 0, 'the writer logs its commits');
  toSchema10(db);
  db.exec(`DROP TABLE project_changes; ALTER TABLE data_versions DROP COLUMN data_as_of; ${DROP_ROLLUPS} PRAGMA user_version = 5;`);
  db.close();

  const migrated = openDb(file);
  t.teardown(() => migrated.close());
  t.equal(migrated.pragma('user_version', { simple: true }), knownSchemaVersion(), 'brought to the newest schema');
  t.same(asOf(migrated), expected, 'data_as_of as the projector recorded it');
  t.equal(migrated.prepare('SELECT count(*) FROM project_changes').pluck().get(), 0, 'an empty change log: feeds resume from the next change');
});

// 011: the per-prompt day tables go; the engine-day rows get their prompts, run_refs what the runs
// name. A schema 10 database left mid-replay (a period pending, its roll-up rows behind) is counted
// again by the next writer: the digest of a fresh projection, settled.
t.test('011 drops the day tables, fills prompt lists and run refs, and a period left pending is counted again', async (t) => {
  const dir = tmpDir('migrate11-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { fresh, expected } = freshWithEvents(dir);
  const refs = fresh.prepare('SELECT * FROM run_refs ORDER BY kind, ref_id, project_id').all();
  const parts = (d: Db): unknown[] => (d.prepare('SELECT id, hits, cited FROM prompt_runs ORDER BY id').all() as Array<{ id: string; hits: string; cited: string }>)
    .map((r) => [r.id, JSON.parse(r.hits), JSON.parse(r.cited)]);
  const freshParts = parts(fresh);
  t.ok(freshParts.some((p) => (p as unknown[][])[1]!.length > 0) && freshParts.some((p) => (p as unknown[][])[2]!.length > 0), 'runs with hits and cited URLs');
  const lists = fresh.prepare('SELECT project_id, day, engine_id, prompt_ids FROM agg_engine_day ORDER BY 1, 2, 3').all();
  t.ok(refs.length >= 5 && lists.length >= 2, 'the runs name prompts, engines and competitors; days list their prompts');
  fresh.close();

  const file = path.join(dir, 'old.db');
  const old = withEvents(file);
  toSchema10(old);
  // A replay killed mid-week: the week pending, its roll-up rows missing what came after the mark.
  old.exec(`DELETE FROM agg_prompt_week WHERE project_id = '${W.project}'; DELETE FROM agg_cited_week WHERE project_id = '${W.project}';
    INSERT INTO rollup_pending (project_id, grain, day) VALUES ('${W.project}', 'week', '2026-01-05');`);
  old.close();

  const migrated = openDb(file);
  t.teardown(() => migrated.close());
  t.equal(migrated.pragma('user_version', { simple: true }), knownSchemaVersion(), 'brought to the newest schema');
  for (const table of ['agg_prompt_day', 'agg_competitor_day', 'agg_url_day', 'agg_cited_day', 'sqlite_autoindex_prompt_runs_1']) {
    t.notOk(migrated.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(table), `${table} is gone`);
  }
  t.same(migrated.prepare('SELECT count(*) AS n, count(DISTINCT id) AS ids FROM run_ids').get(), migrated.prepare('SELECT count(*) AS n, count(DISTINCT id) AS ids FROM prompt_runs').get(), 'run_ids: every run');
  t.equal(migrated.prepare("SELECT value FROM store_meta WHERE key = 'run_ids_through'").pluck().get(), migrated.prepare('SELECT max(rowid) FROM runs').pluck().get(), 'indexed through the last run');
  t.same(migrated.prepare('SELECT * FROM run_refs ORDER BY kind, ref_id, project_id').all(), refs, 'run_refs: what the writer notes');
  t.same(parts(migrated), freshParts, 'hits and cited: what the writer keeps of a run');
  t.same(migrated.prepare('SELECT project_id, day, engine_id, prompt_ids FROM agg_engine_day ORDER BY 1, 2, 3').all(), lists, 'the days\' prompt lists');
  new Projector(migrated).settle();
  t.equal(migrated.prepare('SELECT count(*) FROM rollup_pending').pluck().get(), 0, 'the pending week settled');
  t.equal(digest(migrated), expected, 'the digest of a fresh projection');
});

// 012 renders no point itself (SQL cannot format numbers as JSON.stringify does): it lists every day
// stale, the reads compute the trend meanwhile, and the next writer renders the days.
t.test('012 lists every day of a database of 011 stale; its next writer renders them', async (t) => {
  const dir = tmpDir('migrate12-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'old.db');
  const old = withEvents(file);
  old.exec(`${UNDO_013} ${UNDO_012} PRAGMA user_version = 11;`);
  old.close();

  const migrated = openDb(file);
  t.teardown(() => migrated.close());
  const days = migrated.prepare('SELECT count(DISTINCT project_id || day) FROM agg_engine_day').pluck().get() as number;
  t.ok(days >= 1, 'days with counted runs');
  t.equal(migrated.prepare('SELECT count(*) FROM trend_days_stale').pluck().get(), days, 'every one of them stale');
  const trend = ENDPOINTS.find((e) => e.name === 'timeseries')!;
  const store = new ReadStore(migrated);
  const a = readArgs({ accountId: '', runGroupId: '', limit: 0 });
  const read = (): { text: string | null; built: string } => migrated.transaction(() => ({ text: trend.text!(store, a), built: JSON.stringify(trend.build(store, a)) }))();
  t.equal(read().text, null, 'the trend is computed while they are');
  new Projector(migrated).settle();
  t.equal(migrated.prepare('SELECT count(*) FROM trend_days_stale').pluck().get(), 0, 'the next writer renders them');
  const { text, built } = read();
  t.equal(text, built, 'and the trend is read from the points: the same bytes');
});

// 013: runs in their lean rows (keys, facts) and each period's roll-ups as one row. A database of 012
// migrates to the rows this build writes itself, and a run whose version a retry of the same fact had
// moved (v_at, v_id) keeps that version in its event's envelope.
t.test('013 moves runs to lean rows and each period\'s roll-ups to one row: the rows this build writes', async (t) => {
  const dir = tmpDir('migrate13-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { fresh, expected } = freshWithEvents(dir);
  const runs = (d: Db): unknown[] => (d.prepare('SELECT id, status, completed_at, facts FROM runs ORDER BY id').raw().all() as string[][])
    .map(([id, status, at, facts]) => [id, status, at, JSON.parse(facts!)]);
  const rollups = (d: Db): unknown[] => (d.prepare('SELECT * FROM rollups ORDER BY project_id, grain, day').raw().all() as string[][])
    .map((r) => [...r.slice(0, 3), ...r.slice(3).map((json) => JSON.parse(json))]);
  const freshRuns = runs(fresh);
  const freshRollups = rollups(fresh);
  t.ok(freshRollups.length >= 2, 'a week and a month of roll-ups');
  fresh.close();

  const file = path.join(dir, 'old.db');
  const old = withEvents(file);
  old.exec(UNDO_013);
  t.equal(old.prepare("SELECT type FROM sqlite_master WHERE name = 'agg_cited_week'").pluck().get(), 'table', 'schema 12: the roll-ups are tables');
  const retried = old.prepare('SELECT id FROM prompt_runs ORDER BY id LIMIT 1').pluck().get() as string;
  old.prepare("UPDATE prompt_runs SET v_at = '2027-01-01T00:00:00.000Z', v_id = 'ffffffff-0000-4000-8000-000000000000' WHERE id = ?").run(retried);
  old.close();

  const migrated = openDb(file);
  t.teardown(() => migrated.close());
  t.equal(migrated.pragma('user_version', { simple: true }), knownSchemaVersion(), 'brought to the newest schema');
  t.same(runs(migrated), freshRuns, 'each run: its status, time and facts as the writer keeps them');
  t.same(rollups(migrated), freshRollups, 'each period: its four lists as the writer writes them');
  t.same(migrated.prepare("SELECT event ->> '$.occurred_at' AS at, event ->> '$.event_id' AS id FROM runs WHERE id = ?").get(retried),
    { at: '2027-01-01T00:00:00.000Z', id: 'ffffffff-0000-4000-8000-000000000000' }, 'the retried run keeps its version in its event');
  t.equal(digest(migrated), expected, 'the digest of a fresh projection');
  for (const view of ['prompt_runs', 'agg_prompt_week', 'agg_competitor_month', 'agg_cited_week', 'agg_cited_engine_month']) {
    t.equal(migrated.prepare('SELECT type FROM sqlite_master WHERE name = ?').pluck().get(view), 'view', `${view}: a view of the new rows`);
  }
});

// 014: each database gets a cursor key of its own, made once; it is not read-model data, so two
// databases of the same events keep the same digest.
t.test('014 gives a database of 013 a cursor key of its own, outside the digest', async (t) => {
  const dir = tmpDir('migrate14-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { fresh, expected } = freshWithEvents(dir);
  t.teardown(() => fresh.close());
  const file = path.join(dir, 'old.db');
  const old = withEvents(file);
  old.exec(`${UNDO_014} PRAGMA user_version = 13;`);
  t.equal(storedCursorSecret(old), null, 'schema 13: no key');
  old.close();

  const migrated = openDb(file);
  t.teardown(() => migrated.close());
  const key = storedCursorSecret(migrated);
  t.equal(key?.length, 32, '32 bytes');
  t.notSame(key, storedCursorSecret(fresh), 'random: not the key of another database');
  t.equal(digest(migrated), expected, 'the digest of a fresh projection, whatever the key');
  migrated.close();
  const again = openDb(file);
  t.same(storedCursorSecret(again), key, 'kept: opening the file again keeps its key');
  again.close();
});

// 015: a run's dimensions (country, persona, model, surface). A database of 014 kept the events as
// they came, so the dimensions of runs stored before are read from them: the same numbers, view
// columns and digest as the same events projected by this build.
t.test('015 gives the runs of a database of 014 their dimensions, from their events', async (t) => {
  const dir = tmpDir('migrate15-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const withDims = (): ReturnType<typeof world> => {
    const all = events();
    const dims = [{ country: 'US', persona: 'Developer', model: 'gpt-4o', surface: 'api' }, { country: 'DE', surface: 'app' }, { persona: 'Founder', country: null }];
    let i = 0;
    for (const e of all) if (e.type === 'prompt_run.completed') Object.assign(e.data, dims[i++ % (dims.length + 1)] ?? {});
    return all;
  };
  const project = (file: string): Db => {
    const db = openDb(file);
    const projector = new Projector(db);
    projector.applyBatch(asSource(withDims()));
    projector.settle();
    return db;
  };
  const dimsOf = (d: Db): unknown[] => d.prepare('SELECT id, country, persona, model, surface FROM prompt_runs ORDER BY id').raw().all();
  const fresh = project(path.join(dir, 'fresh.db'));
  const expected = digest(fresh);
  const freshDims = dimsOf(fresh);
  t.ok(freshDims.some((r) => (r as unknown[])[1] === 'US') && freshDims.some((r) => (r as unknown[]).slice(1).every((v) => v === null)), 'runs with and without dimensions');
  fresh.close();

  const file = path.join(dir, 'old.db');
  const old = project(file);
  old.exec(`${UNDO_015} PRAGMA user_version = 14;`);
  old.close();

  const migrated = openDb(file);
  t.teardown(() => migrated.close());
  t.equal(migrated.pragma('user_version', { simple: true }), knownSchemaVersion(), 'brought to the newest schema');
  t.same(dimsOf(migrated), freshDims, 'each run: the dimensions its event names, null where it names none');
  t.equal(migrated.prepare("SELECT count(*) FROM runs WHERE dims IS NULL AND event ->> '$.data.country' IS NULL AND event ->> '$.data.persona' IS NULL").pluck().get(),
    migrated.prepare('SELECT count(*) FROM runs WHERE dims IS NULL').pluck().get(), 'a run naming none has no dims number');
  t.match(migrated.prepare("SELECT sql FROM sqlite_master WHERE name = 'runs_recent'").pluck().get(), /\(project, completed_at, dims\)/, 'the day index carries the dims number');
  t.equal(migrated.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'runs_slices'").pluck().get(), 0, 'the filtered runs\' covering index (016) dropped by 022');
  t.equal(digest(migrated), expected, 'the digest of a fresh projection');
});

// 015 reads the dimensions of runs stored before from their events, which the old schema let carry
// anything: only values the schema now accepts count (what replaying the event would decide).
t.test('015 takes from old events only the dimensions the schema now accepts', async (t) => {
  const dir = tmpDir('migrate15b-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'old.db');
  const old = openDb(file);
  const projector = new Projector(old);
  projector.applyBatch(asSource([...world(), run({ n: 1 }), run({ n: 2, day: '2026-01-06' })]));
  projector.settle();
  old.exec(`${UNDO_015} PRAGMA user_version = 14;`);
  // Sent unasked before the fields existed: a lower-case country, a number for a model, an empty persona, an unknown surface; and one valid set.
  old.prepare(`UPDATE runs SET event = json_set(event, '$.data.country', 'us', '$.data.model', 5, '$.data.persona', '', '$.data.surface', 'web') WHERE id = ?`).run(run({ n: 1 }).data.id);
  old.prepare(`UPDATE runs SET event = json_set(event, '$.data.country', 'US', '$.data.model', 'gpt-4o', '$.data.persona', 'Founder', '$.data.surface', 'app') WHERE id = ?`).run(run({ n: 2 }).data.id);
  old.close();

  const migrated = openDb(file);
  t.teardown(() => migrated.close());
  const dims = migrated.prepare('SELECT id, country, persona, model, surface FROM prompt_runs ORDER BY id').raw().all();
  t.same(dims, [[run({ n: 1 }).data.id, null, null, null, null], [run({ n: 2 }).data.id, 'US', 'Founder', 'gpt-4o', 'app']], 'invalid values left out, valid ones kept');
  t.equal(migrated.prepare('SELECT count(*) FROM runs WHERE dims IS NOT NULL').pluck().get(), 1, 'a run whose values are all invalid names no dimension');
});

// 017 adds the months an export reads changes from; an older database has never been exported, so it
// starts empty and the writer fills it from then on.
t.test('a 016 database gains changed_months, and the next batch marks its months', async (t) => {
  const dir = tmpDir('migrate16-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'old.db');
  const old = withEvents(file);
  const expected = digest(old);
  old.exec(`${UNDO_017} PRAGMA user_version = 16;`);
  old.close();

  const migrated = openDb(file);
  t.teardown(() => migrated.close());
  t.equal(migrated.pragma('user_version', { simple: true }), knownSchemaVersion(), 'brought to the newest schema');
  t.equal(migrated.prepare('SELECT count(*) FROM changed_months').pluck().get(), 0, 'no marks: the first export writes every month');
  t.equal(digest(migrated), expected, 'the digest does not read the marks');
  new Projector(migrated).applyBatch(asSource([run({ n: 40, day: '2026-02-03' })], 'later'));
  t.same(migrated.prepare('SELECT project_id, month FROM changed_months').raw().all(), [[W.project, '2026-02']], 'a new run marks its month');
});
