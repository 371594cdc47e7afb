// Determinism: the demo log gives the same read-model digest however it is cut into batches, when
// it is replayed in two halves by two separate processes, when it is replayed again on top of
// itself, and when the runs of one day arrive shuffled; a generated log with corrections likewise
// (test/ingest/corrections-property.test.ts tries random ones).
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { readLines } from '../../src/ingest';
import { digest, openDb } from '../../src/store';
import { DEMO_OPTIONS, generateWorld } from '../../fixtures/world';
import { DEMO_FILE } from '../helpers/demo';
import { freshDb, tmpDir } from '../helpers/db';
import { runCliSync, type SyncExit } from '../helpers/processes';

const cli = (args: string[]): SyncExit => runCliSync(args, { timeout: 120_000 });

/** `replayed 1 file(s) in 0.24 s: 10 applied, 0 duplicate, 0 stale (superseded), 5 dead-lettered, 0 lines skipped (already applied)` */
function summary(stdout: string): { applied: number; duplicate: number; stale: number; deadLettered: number; skipped: number } {
  const m = /: (\d+) applied, (\d+) duplicate, (\d+) stale \(superseded\), (\d+) dead-lettered, (\d+) lines skipped/.exec(stdout);
  if (!m) throw new Error(`no summary line in: ${stdout}`);
  return { applied: Number(m[1]), duplicate: Number(m[2]), stale: Number(m[3]), deadLettered: Number(m[4]), skipped: Number(m[5]) };
}


/** Applies `lines` in batches of `size` (positions are line numbers of one source), settles as a replay does at its end, and returns the digest. */
function replayInBatches(tt: Test, lines: string[], size: number): string {
  const { db, projector } = freshDb(tt);
  let dead = 0;
  for (let i = 0; i < lines.length; i += size) {
    const batch = lines.slice(i, i + size).map((raw, k) => ({ raw, source: 'file:demo', position: i + k + 1 }));
    dead += projector.applyBatch(batch).deadLettered;
  }
  tt.equal(dead, 0, `batches of ${size}: no dead letters`);
  projector.settle();
  return digest(db);
}

/** A seeded shuffle (mulberry32 + Fisher-Yates): the same permutation on every run of the test. */
function shuffled<T>(items: T[], seed: number): T[] {
  let a = seed >>> 0;
  const random = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

t.test('the demo log gives one digest whatever the batching, the processes, the replays and the order of runs', async (t) => {
  const lines: string[] = [];
  for await (const line of readLines(DEMO_FILE)) lines.push(line);
  t.ok(lines.length > 10_000, `the demo log has ${lines.length} lines`);

  const whole = replayInBatches(t, lines, lines.length);
  t.match(whole, /^[0-9a-f]{64}$/);

  t.test('batches of 1000', async (tt) => {
    tt.equal(replayInBatches(tt, lines, 1000), whole);
  });

  t.test('batches of 1 (every event its own transaction)', async (tt) => {
    tt.equal(replayInBatches(tt, lines, 1), whole);
  });

  t.test('two halves by two separate processes, then the whole file again on top', async (tt) => {
    const dir = tmpDir('determinism-');
    tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const half = Math.floor(lines.length / 2);
    const half1 = path.join(dir, 'half1.ndjson');
    const half2 = path.join(dir, 'half2.ndjson');
    fs.writeFileSync(half1, lines.slice(0, half).join('\n') + '\n');
    fs.writeFileSync(half2, lines.slice(half).join('\n') + '\n');
    const dbFile = path.join(dir, 'halves.db');

    const first = cli(['replay', '--db', dbFile, half1]);
    tt.equal(first.status, 0, `first process exits 0 ${first.stderr}`);
    tt.equal(summary(first.stdout).applied + summary(first.stdout).stale + summary(first.stdout).duplicate, half, 'first process reads the first half');
    const second = cli(['replay', '--db', dbFile, half2]);
    tt.equal(second.status, 0, `second process exits 0 ${second.stderr}`);
    const s2 = summary(second.stdout);
    tt.equal(s2.applied + s2.stale + s2.duplicate, lines.length - half, 'second process reads the second half');
    tt.equal(s2.deadLettered, 0);

    const printed = cli(['digest', '--db', dbFile]);
    tt.equal(printed.status, 0);
    tt.equal(printed.stdout, `${whole}\n`, 'the digest of the two halves is the whole replay\'s');

    const versionsBefore = readVersions(dbFile);
    const again = cli(['replay', '--db', dbFile, '--from-start', DEMO_FILE]);
    tt.equal(again.status, 0, `replaying the whole file exits 0 ${again.stderr}`);
    const s3 = summary(again.stdout);
    tt.strictSame({ applied: s3.applied, deadLettered: s3.deadLettered, skipped: s3.skipped, unchanged: s3.duplicate + s3.stale },
      { applied: 0, deadLettered: 0, skipped: 0, unchanged: lines.length }, 'every line read, none applied');
    tt.equal(cli(['digest', '--db', dbFile]).stdout, `${whole}\n`, 'the digest is unchanged');
    tt.strictSame(readVersions(dbFile), versionsBefore, 'no data_version moved');
  });

  t.test('the runs of one day shuffled (setup events first, as in the log)', async (tt) => {
    // The day with the most runs; its run lines are permuted among the slots they occupy, so every
    // other event keeps its place and the entities the runs refer to come first, as in the log.
    const dayOf = (line: string): string | null => {
      const e = JSON.parse(line) as { type: string; data: { completed_at?: string } };
      return e.type === 'prompt_run.completed' ? e.data.completed_at!.slice(0, 10) : null;
    };
    const days = lines.map(dayOf);
    const perDay = new Map<string, number>();
    for (const d of days) if (d) perDay.set(d, (perDay.get(d) ?? 0) + 1);
    const day = [...perDay].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
    const slots = days.flatMap((d, i) => (d === day ? [i] : []));
    tt.ok(slots.length >= 100, `${slots.length} runs on ${day}`);
    const permuted = shuffled(slots.map((i) => lines[i]!), 20261115);
    const reordered = [...lines];
    slots.forEach((slot, k) => {
      reordered[slot] = permuted[k]!;
    });
    const moved = slots.filter((slot) => reordered[slot] !== lines[slot]).length;
    tt.ok(moved > slots.length / 2, `${moved} of ${slots.length} runs moved`);
    tt.equal(replayInBatches(tt, reordered, 97), whole, 'shuffled, in batches of 97');
  });
});

// Runs sent again later with the same id and changed facts (the generator's corrections: dimensions,
// status, mentions, citations, excerpt, completion time; across weeks and months; some after their
// prompt was deleted or moved): whichever batch a correction lands in, it replaces its run once.
t.test('a log with corrections gives one digest whatever the batching', async (t) => {
  const lines = [...generateWorld({ ...DEMO_OPTIONS, seed: 5252, promptsPerProject: 10, corrections: 0.03 })];
  const ids = lines.filter((l) => l.includes('"type":"prompt_run.completed"')).map((l) => (JSON.parse(l) as { data: { id: string } }).data.id);
  t.ok(ids.length - new Set(ids).size > 100, `${ids.length - new Set(ids).size} of ${ids.length} run events are corrections`);
  const whole = replayInBatches(t, lines, lines.length);
  for (const size of [5000, 1000, 100, 7, 1]) t.equal(replayInBatches(t, lines, size), whole, `batches of ${size}`);
});

function readVersions(file: string): unknown[] {
  const db = openDb(file, { readonly: true });
  try {
    return db.prepare('SELECT scope, version, updated_at FROM data_versions ORDER BY scope').all();
  } finally {
    db.close();
  }
}

// The digest covers a run's dimensions (migration 015): the same runs with another country, persona,
// model or surface are other data, whatever number the writer gave the combination.
t.test('the digest covers the runs\' dimensions', async (t) => {
  const lines: string[] = [];
  for await (const line of readLines(DEMO_FILE)) lines.push(line);
  const { db, projector } = freshDb(t);
  projector.applyBatch(lines.map((raw, k) => ({ raw, source: 'file:demo', position: k + 1 })));
  projector.settle();
  const named = db.prepare('SELECT count(DISTINCT country) AS countries, count(DISTINCT persona) AS personas, count(DISTINCT model) AS models, count(DISTINCT surface) AS surfaces FROM prompt_runs').get();
  t.same(named, { countries: 4, personas: 4, models: 10, surfaces: 2 }, 'the demo runs name several of each');
  const before = digest(db);
  const [a, b] = db.prepare('SELECT n FROM dims ORDER BY n LIMIT 2').pluck().all() as number[];
  const one = db.prepare('SELECT rowid FROM runs WHERE dims = ? LIMIT 1').pluck().get(a) as number;
  db.prepare('UPDATE runs SET dims = ? WHERE rowid = ?').run(b, one);
  t.not(digest(db), before, 'one run\'s dimensions changed: another digest');
  db.prepare('UPDATE runs SET dims = ? WHERE rowid = ?').run(a, one);
  t.equal(digest(db), before, 'changed back: the same digest');
});
