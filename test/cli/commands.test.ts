// The CLI in child processes: every command's --help (from its flag table), replay's summary, its
// one-line usage errors (exit 2), gzip input, resuming after the lines already applied, digest (64 hex
// characters, equal data -> equal digest), and the log's format (pretty on a terminal, JSON otherwise).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { command as cacheStats } from '../../src/cli/cache-stats-command';
import { command as deadLetters } from '../../src/cli/dead-letters-command';
import { command as digestCommand } from '../../src/cli/digest-command';
import { COMMANDS } from '../../src/cli/main';
import { command as mcp } from '../../src/cli/mcp-command';
import { command as exportCommand } from '../../src/cli/export-command';
import { command as produce } from '../../src/cli/produce-command';
import { command as replay } from '../../src/cli/replay-command';
import { command as serve } from '../../src/cli/serve-command';
import { command as snapshot } from '../../src/cli/snapshot-command';
import { command as webhooks } from '../../src/cli/webhooks-command';
import type { Command } from '../../src/cli/flags';
import { chooseLogFormat, logOptionsFromEnv } from '../../src/lib/log';
import { digest, openDb, Projector, writeSnapshot } from '../../src/store';
import { asSource, ev, run, W, world, writeNdjson, type Ev } from '../helpers/events';
import { tmpDb, tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';
import { startServe } from '../helpers/processes';
/** The CLI in a child process, as bin/visibility-api.js runs it (from source, through tsx). */
const CLI = "require('./src/cli/main').main(process.argv.slice(1)).then((c) => process.exit(c), " +
  "(e) => { console.error('visibility-api: ' + (e && e.message ? e.message : String(e))); process.exit(1); })";

interface Run { status: number | null; stdout: string; stderr: string }

function cli(args: string[]): Run {
  const env = { ...process.env };
  delete env.VISIBILITY_DB; // the flags' environment twins must not leak in from the test's environment
  delete env.BATCH_SIZE;
  delete env.LOG_FORMAT;
  // '--': node takes what follows as the script's arguments, --help included.
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', CLI, '--', ...args], { cwd: ROOT, encoding: 'utf8', env, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The built CLI (bin/visibility-api.js over dist/, as `npm test` builds it first): for the many short
 * runs of the help tests, at a third of the start-up time of the sources through tsx.
 */
function bin(args: string[]): Run {
  const env = { ...process.env };
  delete env.LOG_FORMAT;
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'visibility-api.js'), ...args], { cwd: ROOT, encoding: 'utf8', env, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Summary { applied: number; duplicate: number; stale: number; deadLettered: number; skipped: number }

/** `replayed 1 file(s) in 0.24 s: 10 applied, 0 duplicate, 0 stale (superseded), 5 dead-lettered, 0 lines skipped (already applied)` */
function summary(tt: Test, r: Run): Summary {
  tt.equal(r.status, 0, `replay exits 0 ${r.stderr}`);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  tt.equal(lines.length, 1, 'one summary line on stdout');
  const m = /^replayed (\d+) file\(s\) in [\d.]+ s: (\d+) applied, (\d+) duplicate, (\d+) stale \(superseded\), (\d+) dead-lettered, (\d+) lines skipped \(already applied\)$/.exec(lines[0] ?? '');
  if (!m) {
    tt.fail(`summary line: ${r.stdout}`);
    return { applied: -1, duplicate: -1, stale: -1, deadLettered: -1, skipped: -1 };
  }
  return { applied: Number(m[2]), duplicate: Number(m[3]), stale: Number(m[4]), deadLettered: Number(m[5]), skipped: Number(m[6]) };
}

/** A usage error: the exit code, exactly one line on stderr, nothing on stdout. */
function oneLineError(tt: Test, r: Run, code: number | 'non-zero', mentions: RegExp): void {
  if (code === 'non-zero') tt.ok(r.status !== 0 && r.status !== null, `exits non-zero (got ${r.status})`);
  else tt.equal(r.status, code, `exits ${code}`);
  tt.equal(r.stdout, '', 'nothing on stdout');
  tt.match(r.stderr, /^[^\n]+\n$/, `exactly one line on stderr: ${JSON.stringify(r.stderr)}`);
  tt.match(r.stderr, mentions);
}

function workDir(tt: Test): string {
  const dir = tmpDir('cli-');
  tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** world() (16 events) and two runs: 18 events, all new. */
function events(): Ev[] {
  return [...world(), run({ n: 1, brand: 2, sentiment: 0.5, citations: ['https://a.com/x'] }), run({ n: 2, engine: W.engineB, competitor: 1 })];
}

/** The digest of `evs` applied in-process in one batch: what any equal replay must print. */
function digestOf(evs: Ev[]): string {
  const { db, projector, file } = tmpDb();
  try {
    projector.applyBatch(asSource(evs));
    projector.settle(); // as a replay ends
    return digest(db);
  } finally {
    db.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Each command's table, imported here as main() loads it (a dynamic import, which tap's loader does not give named exports). */
const TABLES: Record<string, Command> = { serve, replay, 'dead-letters': deadLetters, digest: digestCommand, snapshot, produce, 'cache-stats': cacheStats, mcp, export: exportCommand, webhooks };

t.test('every command explains itself: --help, -h and help CMD print its flag table on stdout, exit 0', async (tt) => {
  tt.strictSame(Object.keys(TABLES).sort(), Object.keys(COMMANDS).sort(), 'every command is checked');
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const { flags } = TABLES[name]!;
    const r = bin([name, '--help']);
    tt.equal(r.status, 0, `${name} --help exits 0`);
    tt.equal(r.stderr, '', `${name} --help: nothing on stderr`);
    tt.match(r.stdout, new RegExp(`^usage: visibility-api ${name} `), `${name} --help starts with its usage`);
    tt.ok(r.stdout.includes(entry.summary), `${name} --help says what it does`);
    const lines = r.stdout.split('\n');
    for (const [flag, f] of Object.entries(flags)) {
      // The flag's line: the flag (and its placeholder), its environment twin or '-', its default; then what it does.
      const at = lines.findIndex((l) => new RegExp(`^  --${escape(flag)}( [A-Z_/]+)? +${f.env ? escape(f.env) : '-'} +\\S`).test(l));
      tt.ok(at >= 0, `${name} --help: --${flag} with ${f.env ?? 'no environment variable'} and a default`);
      tt.equal(lines[at + 1]?.trim(), f.help, `${name} --help: what --${flag} does`);
    }
    tt.equal(bin(['help', name]).stdout, r.stdout, `help ${name} prints the same as ${name} --help`);
  }
  const h = bin(['serve', '-h']);
  tt.equal(h.status, 0);
  tt.match(h.stdout, /^usage: visibility-api serve /, '-h is --help');
});

t.test("the README's excerpt of help serve is what it prints", async (tt) => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /```\n\$ visibility-api help serve\n([\s\S]*?)```/.exec(readme);
  tt.ok(block, 'the README shows help serve');
  // The default of --build-threads names this machine's count.
  const printed = bin(['help', 'serve']).stdout.replace(/\(\d+ here\)/, '(N here)').split('\n');
  const excerpt = block![1]!.split('\n').filter((l) => l !== '' && l !== '...');
  tt.ok(excerpt.length > 20, 'a line per flag');
  for (const line of excerpt) tt.ok(printed.includes(line), `printed: ${line}`);
});

t.test('help, --help: the commands, each with what it does; no command: the same on stderr, exit 2', async (tt) => {
  for (const args of [['help'], ['--help']]) {
    const r = bin(args);
    tt.equal(r.status, 0, `${args[0]} exits 0`);
    tt.equal(r.stderr, '');
    for (const [name, entry] of Object.entries(COMMANDS)) tt.match(r.stdout, new RegExp(`^  ${escape(name)} +${escape(entry.summary)}$`, 'm'), `lists ${name}`);
  }
  const none = bin([]);
  tt.equal(none.status, 2, 'no command is a mistake');
  tt.equal(none.stdout, '');
  tt.equal(none.stderr, `${bin(['help']).stdout}`, 'the list, on stderr');
  oneLineError(tt, bin(['help', 'nope']), 2, /unknown command "nope"/);
});

t.test('an unknown flag of any command: exit 2, one line naming it and pointing to --help', async (tt) => {
  for (const name of Object.keys(COMMANDS)) {
    tt.test(name, async (t2) => oneLineError(t2, bin([name, '--no-such-flag']), 2, new RegExp(`^visibility-api ${escape(name)}: unknown flag '--no-such-flag' \\(visibility-api ${escape(name)} --help lists the flags\\)\n$`)));
  }
});

t.test('the log format: LOG_FORMAT when set, otherwise pretty on a terminal and JSON lines anywhere else', async (tt) => {
  tt.equal(chooseLogFormat(undefined, true), 'pretty', 'a terminal: lines for a person');
  tt.equal(chooseLogFormat(undefined, false), 'json', 'a pipe or a file: JSON lines');
  tt.equal(chooseLogFormat('', true), 'pretty', 'empty is unset');
  tt.equal(chooseLogFormat('json', true), 'json', 'LOG_FORMAT=json on a terminal');
  tt.equal(chooseLogFormat('PRETTY', false), 'pretty', 'LOG_FORMAT=pretty into a pipe');
  tt.throws(() => chooseLogFormat('xml', true), /LOG_FORMAT must be one of json, pretty \(got "xml"\)/);
  // The fd the log is written to decides: a pseudo-terminal's, and /dev/null's.
  const terminal = fs.openSync('/dev/ptmx', 'r+');
  const file = fs.openSync('/dev/null', 'w');
  tt.teardown(() => [terminal, file].forEach((fd) => fs.closeSync(fd)));
  tt.equal(logOptionsFromEnv({}, terminal).format, 'pretty');
  tt.equal(logOptionsFromEnv({}, file).format, 'json');
  tt.equal(logOptionsFromEnv({ LOG_FORMAT: 'json' }, terminal).format, 'json');
});

t.test('serve with its stdout piped and no LOG_FORMAT writes JSON lines', async (tt) => {
  const { db, projector, file } = tmpDb();
  projector.applyBatch(asSource(world()));
  projector.settle();
  db.close();
  tt.teardown(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  const srv = await startServe(['--db', file]);
  srv.child.kill('SIGTERM');
  const exit = await srv.exited;
  tt.equal(exit.code, 0, exit.stderr);
  const lines = exit.stdout.split('\n').filter((l) => l !== '');
  tt.ok(lines.length >= 3, 'listening, stopping, stopped');
  for (const l of lines) tt.doesNotThrow(() => JSON.parse(l), `a JSON line: ${l}`);
  tt.match(JSON.parse(lines.at(-1)!), { level: 30, msg: 'visibility-api: stopped' });
});

t.test('replay prints one summary line whose counts match the file', async (tt) => {
  const dir = workDir(tt);
  const evs = events();
  const lines: Array<Ev | string> = [
    ...evs,
    evs[16]!,                                                                              // run 1 again: duplicate
    ev('account.upserted', { account_id: W.account, name: 'Older name' }, '2025-12-01T00:00:00Z'), // older than world(): stale
    'this is not json',                                                                    // dead letter
    JSON.stringify({ ...evs[0]!, type: 'account.renamed' }),                               // dead letter
  ];
  const file = writeNdjson(path.join(dir, 'events.ndjson'), lines);
  const s = summary(tt, cli(['replay', '--db', path.join(dir, 'a.db'), file]));
  tt.strictSame(s, { applied: 18, duplicate: 1, stale: 1, deadLettered: 2, skipped: 0 });
  const db = openDb(path.join(dir, 'a.db'), { readonly: true });
  tt.teardown(() => db.close());
  tt.equal((db.prepare('SELECT count(*) AS n FROM dead_letters').get() as { n: number }).n, 2);
  tt.equal((db.prepare('SELECT name FROM accounts WHERE id = ?').get(W.account) as { name: string }).name, 'Acme', 'the stale rename lost');
});

t.test('usage errors: a non-zero exit (2 for flags) and one line on stderr', async (tt) => {
  const dir = workDir(tt);
  const file = writeNdjson(path.join(dir, 'events.ndjson'), events());
  const db = path.join(dir, 'a.db');

  tt.test('a missing events file', async (t2) => {
    const missing = path.join(dir, 'no-such-events.ndjson');
    oneLineError(t2, cli(['replay', '--db', db, missing]), 2, /no-such-events\.ndjson/);
  });
  tt.test('an unknown flag', async (t2) => {
    oneLineError(t2, cli(['replay', '--db', db, '--bogus', file]), 2, /--bogus/);
  });
  tt.test('--batch-size 0', async (t2) => {
    oneLineError(t2, cli(['replay', '--db', db, '--batch-size', '0', file]), 2, /batch-size/);
  });
  tt.test('no --db', async (t2) => {
    oneLineError(t2, cli(['replay', file]), 2, /--db/);
  });
  tt.test('serve --max-staleness -1', async (t2) => {
    oneLineError(t2, cli(['serve', '--db', db, '--max-staleness', '-1']), 2, /max-staleness/);
  });
  tt.test('digest --db on a missing file', async (t2) => {
    const missing = path.join(dir, 'no-such.db');
    oneLineError(t2, cli(['digest', '--db', missing]), 'non-zero', /no-such\.db/);
    t2.notOk(fs.existsSync(missing), 'digest does not create the database');
  });
});

t.test('gzip input is read like plain NDJSON', async (tt) => {
  const dir = workDir(tt);
  const evs = events();
  const gz = path.join(dir, 'events.ndjson.gz');
  fs.writeFileSync(gz, zlib.gzipSync(evs.map((e) => JSON.stringify(e)).join('\n') + '\n'));
  const db = path.join(dir, 'gz.db');
  tt.strictSame(summary(tt, cli(['replay', '--db', db, gz])), { applied: 18, duplicate: 0, stale: 0, deadLettered: 0, skipped: 0 });
  tt.equal(cli(['digest', '--db', db]).stdout, `${digestOf(evs)}\n`, 'the same data as the events applied in-process');
});

t.test('digest prints 64 hex characters; equal data gives equal digests, other data another', async (tt) => {
  const dir = workDir(tt);
  const evs = events();
  // Same events: one file in order, read one event per batch; the other reversed, with a redelivery, in one batch.
  const inOrder = writeNdjson(path.join(dir, 'in-order.ndjson'), evs);
  const reversed = writeNdjson(path.join(dir, 'reversed.ndjson'), [...evs].reverse().concat(evs[3]!));
  const more = writeNdjson(path.join(dir, 'more.ndjson'), [...evs, run({ n: 3, brand: 1 })]);
  summary(tt, cli(['replay', '--db', path.join(dir, 'a.db'), '--batch-size', '1', inOrder]));
  summary(tt, cli(['replay', '--db', path.join(dir, 'b.db'), reversed]));
  summary(tt, cli(['replay', '--db', path.join(dir, 'c.db'), more]));
  const [a, b, c] = ['a.db', 'b.db', 'c.db'].map((f) => cli(['digest', '--db', path.join(dir, f)]));
  for (const d of [a!, b!, c!]) {
    tt.equal(d.status, 0);
    tt.match(d.stdout, /^[0-9a-f]{64}\n$/, 'one line of 64 lowercase hex characters');
  }
  tt.equal(a!.stdout, b!.stdout, 'equal data, equal digest');
  tt.not(c!.stdout, a!.stdout, 'one more run, another digest');
  tt.equal(a!.stdout, `${digestOf(evs)}\n`, 'the CLI prints the digest of the store');
});

t.test('digest says so when week and month roll-ups are pending (a writer stopped before settling), and prints the settled digest once settled', async (tt) => {
  const { db, projector, file } = tmpDb();
  tt.teardown(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  const evs = events();
  projector.applyBatch(asSource(evs)); // the latest week and month wait in memory: left pending, not settled (a killed replay)
  const pending = cli(['digest', '--db', file]);
  tt.equal(pending.status, 0);
  tt.match(pending.stderr, /^visibility-api digest: \d+ week\/month roll-up period\(s\) pending \(a writer stopped before settling them\); the next replay or Kafka ingest settles them, and the digest changes then\n$/, 'one line on stderr');
  projector.settle();
  db.close();
  const settled = cli(['digest', '--db', file]);
  tt.equal(settled.stderr, '', 'nothing to say once settled');
  tt.equal(settled.stdout, `${digestOf(evs)}\n`, 'the digest of the events applied in one batch');
});

t.test('a file that breaks midway (truncated gzip): exit 1, one line, the batches before it kept', async (tt) => {
  const dir = workDir(tt);
  const lines = [...events(), ...Array.from({ length: 400 }, (_, i) => run({ n: 10 + i, brand: 1 + (i % 5) }))].map((e) => JSON.stringify(e));
  const whole = zlib.gzipSync(lines.join('\n') + '\n', { level: 0 }); // stored blocks: the cut falls after whole lines
  const gz = path.join(dir, 'cut.ndjson.gz');
  fs.writeFileSync(gz, whole.subarray(0, Math.floor(whole.length * 0.8)));
  const db = path.join(dir, 'cut.db');
  const r = cli(['replay', '--db', db, '--batch-size', '50', gz]);
  oneLineError(tt, r, 1, /^visibility-api replay: cannot read .*cut\.ndjson\.gz: unexpected end of file; line \d+ of .*cut\.ndjson\.gz is next: re-run to continue once resolved\n$/);
  const kept = openDb(db, { readonly: true });
  const committed = kept.prepare('SELECT position FROM source_positions').pluck().get() as number;
  const runs = kept.prepare('SELECT count(*) FROM prompt_runs').pluck().get() as number;
  kept.close();
  tt.ok(committed > 50 && committed < lines.length, `batches before the break committed (next line ${committed})`);
  tt.equal(runs, committed - 1 - 16, 'exactly the runs of the committed lines (16 setup events first)');
  // The whole file put back: the re-run continues from there and ends with everything.
  fs.writeFileSync(gz, whole);
  tt.strictSame(summary(tt, cli(['replay', '--db', db, gz])), { applied: lines.length - committed + 1, duplicate: 0, stale: 0, deadLettered: 0, skipped: committed - 1 });
});

t.test('replay resumes after the lines already applied', async (tt) => {
  const dir = workDir(tt);
  const db = path.join(dir, 'resume.db');
  const evs = events();
  const file = writeNdjson(path.join(dir, 'events.ndjson'), evs);
  tt.strictSame(summary(tt, cli(['replay', '--db', db, file])), { applied: 18, duplicate: 0, stale: 0, deadLettered: 0, skipped: 0 });
  tt.strictSame(summary(tt, cli(['replay', '--db', db, file])), { applied: 0, duplicate: 0, stale: 0, deadLettered: 0, skipped: 18 },
    'the second time: every line skipped, nothing applied');
  // Lines appended since: only they are read.
  fs.appendFileSync(file, [run({ n: 3, brand: 1 }), run({ n: 4, status: 'failed' })].map((e) => JSON.stringify(e)).join('\n') + '\n');
  tt.strictSame(summary(tt, cli(['replay', '--db', db, file])), { applied: 2, duplicate: 0, stale: 0, deadLettered: 0, skipped: 18 });
  // --from-start reads every line again; all are already there.
  tt.strictSame(summary(tt, cli(['replay', '--db', db, '--from-start', file])), { applied: 0, duplicate: 20, stale: 0, deadLettered: 0, skipped: 0 });
});

t.test('snapshot writes a consistent copy with the same digest', async (t) => {
  const dir = tmpDir('snap-');
  const dbFile = path.join(dir, 'a.db');
  const db = openDb(dbFile, { fast: true });
  new Projector(db).applyBatch(asSource(world()));
  const out = path.join(dir, 'copy.db');
  const r = cli(['snapshot', '--db', dbFile, out]);
  t.equal(r.status, 0, r.stderr);
  const copy = openDb(out, { readonly: true });
  t.equal(digest(copy), digest(db), 'equal data, equal digest');
  t.same(copy.prepare('SELECT count(*) AS n FROM source_positions').get(), { n: 1 }, 'offsets travel with the data');
  copy.close();
  db.close();
  const again = cli(['snapshot', '--db', dbFile, out]);
  t.equal(again.status, 2);
  t.match(again.stderr, /exists \(use --force to overwrite\)/);
});

t.test('a snapshot appears whole or not at all: copied as OUT.part, renamed when complete; an older copy\'s WAL does not follow it', async (t) => {
  const dir = tmpDir('snap-part-');
  const dbFile = path.join(dir, 'a.db');
  const db = openDb(dbFile, { fast: true });
  new Projector(db).applyBatch(asSource(world()));
  const out = path.join(dir, 'copy.db');
  fs.writeFileSync(`${out}.part`, 'left by a killed run');
  const seen: Array<{ out: boolean; part: boolean }> = [];
  const info = await writeSnapshot(dbFile, out, () => seen.push({ out: fs.existsSync(out), part: fs.existsSync(`${out}.part`) }));
  t.ok(seen.length > 0, 'progress was reported while copying');
  t.ok(seen.every((s) => !s.out && s.part), 'while copying, only OUT.part exists: a kill leaves no half-copied OUT');
  t.notOk(fs.existsSync(`${out}.part`), 'nothing left beside it');
  t.equal(info.bytes, fs.statSync(out).size);
  const copy = openDb(out, { readonly: true });
  t.equal(digest(copy), digest(db), 'the stale .part was replaced, not appended to');
  copy.close();
  // Over an older copy that a killed process had open: its WAL of committed frames is still beside it.
  const old = openDb(out, { fast: true });
  old.pragma('wal_autocheckpoint = 0');
  new Projector(old).applyBatch(asSource([run({ n: 9, brand: 1 })]));
  fs.copyFileSync(`${out}-wal`, path.join(dir, 'stale-wal'));
  old.close();
  fs.copyFileSync(path.join(dir, 'stale-wal'), `${out}-wal`);
  await writeSnapshot(dbFile, out);
  t.notOk(fs.existsSync(`${out}-wal`), 'the replaced copy\'s WAL is gone');
  const fresh = openDb(out, { readonly: true });
  t.equal(digest(fresh), digest(db), 'the new copy holds the database, not the old copy\'s frames');
  fresh.close();
  db.close();
  // A copy that fails (here: the output's folder does not exist) leaves nothing either.
  await t.rejects(writeSnapshot(dbFile, path.join(dir, 'missing', 'x.db')));
  t.same(fs.readdirSync(dir).filter((n) => n.endsWith('.part')), [], 'no .part after a failure');
});
