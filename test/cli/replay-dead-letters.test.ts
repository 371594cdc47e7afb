// What a replay says about the lines it could not apply, as a user runs it: each dead-lettered line
// named on stderr (FILE:LINE, the event id when its envelope was read, the reason), the first 20 and
// then a count; exit 0 unless --strict; `dead-letters` lists them; and a re-run over a file whose
// applied part was edited since (the bad line fixed) says it skipped it and how to apply it.
import path from 'node:path';
import t from 'tap';
import { ev, id, run, W, world, writeNdjson, type Ev } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { runCliSync } from '../helpers/processes';

const UNKNOWN = id(0xdead, 'eeeeeeee');

/** world() and two runs, with a line that is not JSON third from the end and an unknown type last. */
function lines(): Array<Ev | string> {
  return [...world(), run({ n: 1, brand: 2 }), 'this is not json', run({ n: 2 }), ev('account.renamed', { account_id: W.account }, undefined, UNKNOWN)];
}

t.test('replay names each dead-lettered line on stderr; exit 0, or 1 with --strict', async (tt) => {
  const dir = tmpDir('dead-');
  const file = writeNdjson(path.join(dir, 'events.ndjson'), lines());
  const db = path.join(dir, 'a.db');
  const r = runCliSync(['replay', '--db', db, file]);
  tt.equal(r.status, 0, `exit 0 without --strict: ${r.stderr}`);
  tt.match(r.stdout, /18 applied, .* 2 dead-lettered/);
  const err = r.stderr.split('\n').filter((l) => l !== '');
  tt.match(err[0], new RegExp(`^visibility-api replay: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:18: dead-lettered: unparseable: `), 'the line that is not JSON, by file and line');
  tt.match(err[1], new RegExp(`events\\.ndjson:20: dead-lettered \\(event ${UNKNOWN}\\): unknown_type: .*account\\.renamed`), 'the unknown type, with its event id');
  tt.match(err[2], /2 line\(s\) set aside, not applied: `visibility-api dead-letters --db .*a\.db` lists them; .*--from-start/, 'where to see them and how to apply them once fixed');
  tt.equal(err.length, 3);

  const strict = runCliSync(['replay', '--db', path.join(dir, 'b.db'), '--strict', file]);
  tt.equal(strict.status, 1, '--strict: exit 1');
  tt.match(strict.stderr, /events\.ndjson:18: dead-lettered/);

  const listed = runCliSync(['dead-letters', '--db', db]);
  tt.equal(listed.status, 0);
  tt.match(listed.stdout, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:18: unparseable: .*\n.*events\\.ndjson:20: unknown_type \\(event ${UNKNOWN}, account\\.renamed\\): .*\n$`));
  tt.match(listed.stderr, /^2 event\(s\) set aside in /);
  const json = runCliSync(['dead-letters', '--db', db, '--json']);
  tt.equal(json.status, 0);
  const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
  tt.match(rows, [{ file, line: 18, reason: 'unparseable', raw: 'this is not json', event_id: null }, { file, line: 20, reason: 'unknown_type', event_id: UNKNOWN, type: 'account.renamed' }]);
});

t.test('past 20 dead letters: the first 20 named, then a count', async (tt) => {
  const dir = tmpDir('dead-');
  const file = writeNdjson(path.join(dir, 'events.ndjson'), [...world(), ...Array.from({ length: 25 }, (_, i) => `bad line ${i}`)]);
  const r = runCliSync(['replay', '--db', path.join(dir, 'a.db'), '--batch-size', '7', file]);
  tt.equal(r.status, 0);
  const err = r.stderr.split('\n').filter((l) => l !== '');
  tt.equal(err.filter((l) => / dead-lettered: unparseable: /.test(l)).length, 20, 'twenty named');
  tt.match(err[20], /^visibility-api replay: 5 more line\(s\) dead-lettered/);
});

t.test('a re-run over a file whose applied part changed says so, and --from-start applies it', async (tt) => {
  const dir = tmpDir('dead-');
  const file = writeNdjson(path.join(dir, 'events.ndjson'), lines());
  const db = path.join(dir, 'a.db');
  tt.equal(runCliSync(['replay', '--db', db, file]).status, 0);
  const same = runCliSync(['replay', '--db', db, file]);
  tt.equal(same.stderr, '', 'the same file again: nothing to say');
  // The bad line fixed in place.
  const fixed = lines();
  fixed[17] = run({ n: 3, brand: 1 });
  writeNdjson(file, fixed);
  const again = runCliSync(['replay', '--db', db, file]);
  tt.equal(again.status, 0);
  tt.match(again.stdout, /0 applied, .* 20 lines skipped/);
  tt.match(again.stderr, /events\.ndjson changed in its first 20 line\(s\) since they were applied; they were skipped as already applied: run replay again with --from-start/);
  tt.equal(runCliSync(['replay', '--db', db, '--strict', file]).status, 1, 'said again on every run until applied; --strict fails on it');
  const applied = runCliSync(['replay', '--db', db, '--from-start', file]);
  tt.match(applied.stdout, /1 applied, .* 1 dead-lettered/, 'the fixed line applied; the unknown type still set aside');
  tt.match(applied.stderr, /events\.ndjson:20: dead-lettered/);
  tt.notMatch(applied.stderr, /changed in its first/);
  const listed = runCliSync(['dead-letters', '--db', db]);
  tt.notMatch(listed.stdout, /:18:/, 'the fixed line is no longer listed');
  tt.match(listed.stdout, /:20: unknown_type/);
  tt.equal(runCliSync(['replay', '--db', db, file]).stderr, '', 'then quiet again');
});
