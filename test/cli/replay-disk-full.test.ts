// The disk filling up under replay, simulated with SQLite's max_page_count (replay reads
// VISIBILITY_MAX_PAGE_COUNT): one clear line and a non-zero exit; a consistent database holding
// exactly the lines committed, as a clean replay of those lines leaves it; still full, the same
// failure and nothing half-written; once there is room, a re-run completes with the clean digest.
import path from 'node:path';
import t from 'tap';
import { clean, cleanReplay, committed, dir, EVENTS, finish, LINES, replay, sameAsClean } from '../helpers/replay-crash';

t.test('the disk filling up: one clear line, a consistent database, and a re-run once there is room completes', async (tt) => {
  const want = await clean();
  const db = path.join(dir, 'full.db');
  // Room for about half of the data: the replay fails part way through.
  const cap = Math.floor(want.pages / 2);
  const r = await replay(db, 500, { VISIBILITY_MAX_PAGE_COUNT: String(cap) }).done;
  tt.ok(r.code !== 0 && r.code !== null, `exits non-zero (got ${r.code})`);
  tt.equal(r.stdout, '', 'no summary');
  const next = committed(db);
  tt.ok(next > 1 && next <= LINES.length, `part of the file was committed (up to line ${next - 1})`);
  tt.equal(r.stderr, `visibility-api replay: database or disk is full: ${db}; line ${next} of ${EVENTS} is next: re-run to continue once resolved\n`,
    'one line naming the database and where a re-run continues');

  // Consistent: exactly the lines committed, as a clean replay of those lines would leave them.
  const part = await cleanReplay('clean-part', LINES.slice(0, next - 1));
  await sameAsClean(tt, db, part, 'after the failure', true);

  // Still full: the same clear failure, nothing lost or half-written.
  const again = await replay(db, 500, { VISIBILITY_MAX_PAGE_COUNT: String(cap) }).done;
  tt.ok(again.code !== 0, 'still full: fails again');
  tt.match(again.stderr, /^visibility-api replay: database or disk is full: /);
  await sameAsClean(tt, db, await cleanReplay('clean-part-2', LINES.slice(0, committed(db) - 1)), 'after the second failure', true);

  // Room again (no cap): the re-run continues and completes.
  await finish(tt, db);
  await sameAsClean(tt, db, want, 'after the re-run with room');
});
