// Dead letters: every bad line of fixtures/invalid lands in dead_letters with its exact bytes, its
// source and position, and the reason the fixture README gives, through replayFiles and through
// Projector.applyBatch; ingestion goes on past each bad line; replaying adds no second copy.
// Last, 'projection_failed': a handler that throws dead-letters its event alone.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { fileSource, replayFiles } from '../../src/ingest';
import { digest, type Db } from '../../src/store';
import { asSource, ev, id, run, W, world } from '../helpers/events';
import { freshDb, tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';

type Row = Record<string, unknown>;

const INVALID = path.join(ROOT, 'fixtures', 'invalid');
const FILES = ['unparseable', 'invalid_envelope', 'unknown_type', 'unsupported_schema_version', 'invalid_payload', 'mixed'];


const all = (db: Db, sql: string, ...params: unknown[]): Row[] => db.prepare(sql).all(...params) as Row[];
const count = (db: Db, table: string): number => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

/** The lines of a fixture file exactly as written (the file ends with a newline). */
function linesOf(name: string): string[] {
  const text = fs.readFileSync(path.join(INVALID, `${name}.ndjson`), 'utf8');
  if (!text.endsWith('\n')) throw new Error(`${name}.ndjson does not end with a newline`);
  return text.slice(0, -1).split('\n');
}

/** The README table of one file: line number -> expected verdict. */
function readmeVerdicts(name: string): Map<number, string> {
  const readme = fs.readFileSync(path.join(INVALID, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith(`\`${name}.ndjson\``));
  if (!section) throw new Error(`README has no section for ${name}.ndjson`);
  const out = new Map<number, string>();
  for (const m of section.matchAll(/^\| (\d+) \| `([a-z_]+)` \|/gm)) out.set(Number(m[1]), m[2]!);
  return out;
}

/**
 * What each bad line's detail must name (the field or value that is wrong), and the event_id and type
 * the dead letter keeps when the line has them. Written from the README's "what is wrong" column.
 */
const DETAIL: Record<string, Record<number, { detail: RegExp; eventId: string | null; type: string | null }>> = {
  unparseable: {
    1: { detail: /^not JSON/, eventId: null, type: null },
    2: { detail: /^not JSON/, eventId: null, type: null },
    3: { detail: /^not JSON/, eventId: null, type: null },
    4: { detail: /^not JSON/, eventId: null, type: null },
  },
  invalid_envelope: {
    1: { detail: /event_id/, eventId: null, type: 'account.upserted' },
    2: { detail: /event_id/, eventId: 'evt-12345', type: 'account.upserted' },
    3: { detail: /occurred_at/, eventId: '9e000000-0000-4000-8000-000000000003', type: 'account.upserted' },
    4: { detail: /data/, eventId: '9e000000-0000-4000-8000-000000000004', type: 'account.upserted' },
  },
  unknown_type: {
    1: { detail: /project\.renamed/, eventId: '9e000000-0000-4000-8000-000000000005', type: 'project.renamed' },
    2: { detail: /Prompt_run\.completed/, eventId: '9e000000-0000-4000-8000-000000000006', type: 'Prompt_run.completed' },
    3: { detail: /envelope/, eventId: '9e000000-0000-4000-8000-000000000007', type: 'envelope' },
  },
  unsupported_schema_version: {
    1: { detail: /schema_version 2/, eventId: '9e000000-0000-4000-8000-000000000008', type: 'account.upserted' },
    2: { detail: /schema_version 0/, eventId: '9e000000-0000-4000-8000-000000000009', type: 'term.upserted' },
    3: { detail: /schema_version 2/, eventId: '9e000000-0000-4000-8000-000000000010', type: 'prompt_run.completed' },
  },
  invalid_payload: {
    1: { detail: /mentions\/0\/sentiment/, eventId: '9e000000-0000-4000-8000-000000000011', type: 'prompt_run.completed' },
    2: { detail: /mentions\/0\/position/, eventId: '9e000000-0000-4000-8000-000000000012', type: 'prompt_run.completed' },
    3: { detail: /status/, eventId: '9e000000-0000-4000-8000-000000000013', type: 'prompt_run.completed' },
    4: { detail: /key_sha256/, eventId: '9e000000-0000-4000-8000-000000000014', type: 'api_key.issued' },
    5: { detail: /anyOf/, eventId: '9e000000-0000-4000-8000-000000000015', type: 'forum_post.updated' },
    6: { detail: /kind/, eventId: '9e000000-0000-4000-8000-000000000016', type: 'term.upserted' },
  },
  mixed: {
    2: { detail: /^not JSON/, eventId: null, type: null },
    5: { detail: /event_id/, eventId: 'not-a-uuid', type: 'project.upserted' },
    8: { detail: /project\.renamed/, eventId: '9e000000-0000-4000-8000-000000000107', type: 'project.renamed' },
    11: { detail: /schema_version 2/, eventId: '9e000000-0000-4000-8000-000000000110', type: 'prompt_run.completed' },
    13: { detail: /mentions\/0\/position/, eventId: '9e000000-0000-4000-8000-000000000112', type: 'prompt_run.completed' },
  },
};

/** Checks the dead letters of one file against its README and the table above. */
function checkDeadLetters(tt: Test, db: Db, name: string, source: string): void {
  const lines = linesOf(name);
  const verdicts = readmeVerdicts(name);
  tt.strictSame([...verdicts.keys()].sort((a, b) => a - b), lines.map((_, i) => i + 1), `${name}: the README covers every line`);
  const bad = [...verdicts].filter(([, v]) => v !== 'valid');
  const rows = all(db, 'SELECT position, reason, detail, event_id, type, raw FROM dead_letters WHERE source = ? ORDER BY position', source);
  tt.strictSame(rows.map((r) => [r.position, r.reason]), bad.map(([line, v]) => [line, v]), `${name}: one dead letter per bad line, with its reason`);
  for (const r of rows) {
    const line = r.position as number;
    const raw = r.raw as Buffer;
    tt.ok(Buffer.isBuffer(raw) && raw.equals(Buffer.from(lines[line - 1]!, 'utf8')), `${name}:${line}: raw is exactly the line`);
    const want = DETAIL[name]![line]!;
    tt.match(r.detail, want.detail, `${name}:${line}: detail names what is wrong`);
    tt.equal(r.event_id, want.eventId, `${name}:${line}: event_id`);
    tt.equal(r.type, want.type, `${name}:${line}: type`);
  }
}

const MIXED = {
  account: 'a1f0c3d2-5b6e-4f70-8a91-b2c3d4e5f601',
  key: 'b2e1d4c3-6a7f-4081-9b02-c3d4e5f60712',
  project: 'c3d2e5f4-7b80-4192-8c13-d4e5f6071823',
  engine: 'd4e3f605-8c91-42a3-9d24-e5f607182934',
  prompt: 'e5f40716-9da2-43b4-8e35-f60718293a45',
  group: 'f6051827-aeb3-44c5-9f46-0718293a4b56',
  okRun: '07162938-bfc4-45d6-a057-18293a4b5c67',
  failedRun: '18273a49-c0d5-46e7-b168-293a4b5c6d78',
};

/** The valid world of mixed.ndjson, and nothing of its bad lines (which reuse its ids). */
function checkMixedWorld(tt: Test, db: Db): void {
  tt.strictSame(all(db, 'SELECT id, name FROM accounts'), [{ id: MIXED.account, name: 'Northwind Labs' }], 'line 1');
  tt.strictSame(all(db, 'SELECT key_id, account_id, label FROM api_keys'), [{ key_id: MIXED.key, account_id: MIXED.account, label: 'Dashboard' }], 'line 3');
  tt.strictSame(all(db, 'SELECT id, name, deleted FROM projects'), [{ id: MIXED.project, name: 'Tasklane', deleted: 0 }], 'line 4 applied, line 5 not');
  tt.strictSame(all(db, 'SELECT id, name, provider, model FROM engines'), [{ id: MIXED.engine, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o' }], 'line 6');
  tt.strictSame(all(db, 'SELECT project_id, engine_id, tracked FROM project_engines'), [{ project_id: MIXED.project, engine_id: MIXED.engine, tracked: 1 }], 'line 7');
  tt.strictSame(all(db, 'SELECT id, deleted FROM prompts'), [{ id: MIXED.prompt, deleted: 0 }], 'line 9');
  tt.strictSame(all(db, 'SELECT id, trigger, status FROM run_groups'), [{ id: MIXED.group, trigger: 'scheduled', status: 'partial' }], 'lines 10 and 15');
  tt.strictSame(all(db, 'SELECT id, status, brand_position, brand_sentiment FROM prompt_runs ORDER BY id'), [
    { id: MIXED.okRun, status: 'succeeded', brand_position: 1, brand_sentiment: 0.6 },
    { id: MIXED.failedRun, status: 'failed', brand_position: null, brand_sentiment: null },
  ], 'lines 12 and 14; not the runs of lines 11 and 13');
  tt.strictSame(all(db, 'SELECT * FROM agg_run_group'), [{ run_group_id: MIXED.group, project_id: MIXED.project, prompt_run_count: 2, succeeded_count: 1, failed_count: 1 }]);
  tt.strictSame(all(db, 'SELECT runs, brand_runs, position_sum FROM agg_engine_day'), [{ runs: 1, brand_runs: 1, position_sum: 1 }]);
}

for (const name of FILES) {
  t.test(`${name}.ndjson through replayFiles`, async (tt) => {
    const { db, projector } = freshDb(tt);
    const file = path.join(INVALID, `${name}.ndjson`);
    const lines = linesOf(name);
    const bad = [...readmeVerdicts(name).values()].filter((v) => v !== 'valid').length;
    const totals = await replayFiles(db, projector, [file], { batchSize: 1000 });
    tt.equal(totals.lines, lines.length);
    tt.equal(totals.deadLettered, bad);
    tt.equal(totals.applied, lines.length - bad);
    checkDeadLetters(tt, db, name, fileSource(file));
    tt.strictSame(all(db, 'SELECT source, position FROM source_positions'), [{ source: fileSource(file), position: lines.length + 1 }],
      'the position moves past the last line, bad or not');
  });

  t.test(`${name}.ndjson through Projector.applyBatch`, (tt) => {
    const { db, projector } = freshDb(tt);
    const lines = linesOf(name);
    const bad = [...readmeVerdicts(name).values()].filter((v) => v !== 'valid').length;
    const r = projector.applyBatch(asSource(lines, `kafka:invalid-${name}:0`, 1));
    tt.equal(r.deadLettered, bad);
    tt.equal(r.applied, lines.length - bad);
    checkDeadLetters(tt, db, name, `kafka:invalid-${name}:0`);
    tt.end();
  });
}

t.test('mixed.ndjson: every valid event applied, ingestion goes on after each bad line, in any batch size', async (tt) => {
  const file = path.join(INVALID, 'mixed.ndjson');
  const digests: string[] = [];
  for (const batchSize of [1, 4, 1000]) {
    const { db, projector } = freshDb(tt);
    const totals = await replayFiles(db, projector, [file], { batchSize });
    tt.strictSame({ applied: totals.applied, deadLettered: totals.deadLettered, duplicate: totals.duplicate, stale: totals.stale },
      { applied: 10, deadLettered: 5, duplicate: 0, stale: 0 }, `batch size ${batchSize}: 10 valid, 5 dead letters`);
    checkMixedWorld(tt, db);
    tt.equal(count(db, 'dead_letters'), 5);
    digests.push(digest(db));
  }
  tt.equal(digests[1], digests[0]);
  tt.equal(digests[2], digests[0]);
});

t.test('replaying a file again does not duplicate its dead letters', async (tt) => {
  const { db, projector } = freshDb(tt);
  const file = path.join(INVALID, 'mixed.ndjson');
  await replayFiles(db, projector, [file], { batchSize: 3 });
  // A file read from its first line sets its dead letters aside anew (a line fixed since leaves none): the same rows, received again.
  const letters = 'SELECT source, position, reason, detail, event_id, type, raw FROM dead_letters ORDER BY id';
  const before = { letters: all(db, letters), digest: digest(db) };
  tt.equal(before.letters.length, 5);
  const again = await replayFiles(db, projector, [file], { batchSize: 1000, fromStart: true });
  tt.equal(again.applied, 0, 'nothing applied the second time');
  tt.equal(again.skipped, 0, 'fromStart re-reads every line');
  tt.strictSame(all(db, letters), before.letters, 'the same five rows, in the same order');
  tt.equal(digest(db), before.digest);
  // Resuming (not fromStart) reads nothing new and adds nothing.
  const resumed = await replayFiles(db, projector, [file], { batchSize: 1000 });
  tt.strictSame({ skipped: resumed.skipped, applied: resumed.applied, deadLettered: resumed.deadLettered }, { skipped: 15, applied: 0, deadLettered: 0 });
  tt.equal(count(db, 'dead_letters'), 5);
});

t.test('projection_failed: a handler that throws dead-letters its event alone, the rest of the batch applies', (tt) => {
  // No schema-valid event makes a handler throw on its own (the schemas and the decoder catch what
  // SQLite would refuse), so the test makes SQLite refuse one: a trigger, standing for a constraint
  // the schemas do not know. The projector is used as shipped.
  const { db, projector } = freshDb(tt);
  db.exec(`CREATE TRIGGER refuse_boom BEFORE INSERT ON terms WHEN NEW.value = 'boom'
    BEGIN SELECT RAISE(ABORT, 'terms refuses boom'); END`);
  const ok1 = ev('term.upserted', { id: id(1, '33333333'), project_id: W.project, value: 'Acme', kind: 'brand' });
  const boom = ev('term.upserted', { id: id(2, '33333333'), project_id: W.project, value: 'boom', kind: 'brand' });
  const ok2 = ev('term.upserted', { id: id(3, '33333333'), project_id: W.project, value: 'acme.com', kind: 'domain' });
  const batch = asSource([ok1, boom, ok2, 'not json'], 'kafka:events:3', 100);
  const r = projector.applyBatch(batch);
  tt.strictSame(r, { applied: 2, duplicate: 0, stale: 0, deadLettered: 2, changed: [`project:${W.project}`] });
  tt.strictSame(all(db, 'SELECT value FROM terms ORDER BY id'), [{ value: 'Acme' }, { value: 'acme.com' }], 'the events around it applied once');
  const letters = all(db, 'SELECT source, position, reason, detail, event_id, type, raw FROM dead_letters ORDER BY position');
  tt.equal(letters.length, 2);
  tt.strictSame(
    { ...letters[0], raw: (letters[0]!.raw as Buffer).toString('utf8') },
    { source: 'kafka:events:3', position: 101, reason: 'projection_failed', detail: 'terms refuses boom', event_id: boom.event_id, type: 'term.upserted', raw: batch[1]!.raw },
  );
  tt.equal(letters[1]!.reason, 'unparseable', 'other dead letters of the batch are kept too');
  tt.strictSame(all(db, 'SELECT source, position FROM source_positions'), [{ source: 'kafka:events:3', position: 104 }]);
  // The project's version and the version of what changed in it (terms: 'setup'), each bumped once by the batch.
  tt.strictSame(all(db, 'SELECT scope, version FROM data_versions ORDER BY scope'), [
    { scope: `kind:setup:${W.project}`, version: 1 }, { scope: `project:${W.project}`, version: 1 },
  ], 'one bump, not two');
  tt.end();
});

t.test('projection_failed of a run: what its savepoint took back is not reused for other runs', (tt) => {
  // A refused run had numbered its project and run group (keys) and taken a row before SQLite refused
  // it; the savepoint takes them back and SQLite gives the same numbers and row to the next new ones.
  // The writer must not keep the refused run's: its project and run would then read as another's.
  const { db, projector } = freshDb(tt);
  projector.applyBatch(asSource(world()));
  db.exec(`CREATE TRIGGER refuse_run BEFORE INSERT ON runs WHEN NEW.id = '${id(1, '55555555')}'
    BEGIN SELECT RAISE(ABORT, 'runs refuses run 1'); END`);
  const refused = run({ n: 1 });
  const other = run({ n: 2 });
  const otherGroup = id(2, '77777777');
  Object.assign(other.data, { project_id: W.otherProject, run_group_id: otherGroup });
  const r = projector.applyBatch(asSource([refused, other]));
  tt.strictSame([r.applied, r.deadLettered], [1, 1], 'the refused run dead-lettered, the other applied');
  db.exec('DROP TRIGGER refuse_run');
  // The same run again (its retry, now accepted), and a later run of its project.
  tt.equal(projector.applyBatch(asSource([refused, run({ n: 3 })])).applied, 2);
  tt.strictSame(all(db, 'SELECT id, project_id, run_group_id FROM prompt_runs ORDER BY id'), [
    { id: id(1, '55555555'), project_id: W.project, run_group_id: W.group },
    { id: id(2, '55555555'), project_id: W.otherProject, run_group_id: otherGroup },
    { id: id(3, '55555555'), project_id: W.project, run_group_id: W.group },
  ], 'every run under its own project and run group');
  tt.end();
});

t.test('projection_failed in a replayed file: the dead letter keeps the line byte for byte (lines reach the writer as bytes)', async (tt) => {
  const { db, projector } = freshDb(tt);
  db.exec(`CREATE TRIGGER refuse_boom BEFORE INSERT ON terms WHEN NEW.value LIKE 'boom%'
    BEGIN SELECT RAISE(ABORT, 'terms refuses boom'); END`);
  // Multi-byte characters before and in the refused line: each line's bytes are found by offset in its batch's buffer.
  const term = (n: number, value: string): string => JSON.stringify(ev('term.upserted', { id: id(n, '33333333'), project_id: W.project, value, kind: 'brand' }));
  const lines = [...world().map((e) => JSON.stringify(e)), term(1, 'Acmé ✓'), term(2, 'boom — ünïcode 🚀'), term(3, 'acme.com'), term(4, 'boom again')];
  const file = path.join(tmpDir(), 'boom.ndjson');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const totals = await replayFiles(db, projector, [file], { batchSize: 1000 }); // one batch: lines after a refused one share its buffer
  tt.equal(totals.deadLettered, 2);
  tt.strictSame(all(db, `SELECT value FROM terms WHERE id IN ('${id(1, '33333333')}', '${id(3, '33333333')}') ORDER BY id`), [{ value: 'Acmé ✓' }, { value: 'acme.com' }], 'the lines around them applied');
  const letters = all(db, "SELECT position, reason, raw FROM dead_letters ORDER BY position") as Array<{ position: number; reason: string; raw: Buffer }>;
  tt.strictSame(letters.map((l) => [l.position, l.reason, l.raw.toString('utf8')]), [
    [lines.length - 2, 'projection_failed', lines[lines.length - 3]],
    [lines.length, 'projection_failed', lines[lines.length - 1]],
  ], 'each refused line, as it is in the file');
});

