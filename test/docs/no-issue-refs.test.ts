// Comments, docs and test names say why in their own words: a newcomer has no tracker to look a
// number up in. No tracked file may name an issue by its number ("issue 41", "Issue #12", "issues
// 40-42"); a decision that needs its history has a record in docs/decisions.md. This file keeps the
// pattern, so it is the one file left out.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/paths';

const ISSUE_REF = /\bissues?\b[\s#:-]*\d+/i;
const SELF = path.relative(ROOT, __filename).split(path.sep).join('/');

t.test('the pattern finds every way of naming an issue by number, and only those', async (t) => {
  for (const s of ['see issue 41', 'Issue #12 asks', '(issues 40-42)', 'ISSUE-7', 'issue: 3']) t.match(s, ISSUE_REF, s);
  for (const s of ['api_key.issued 4 times', 'keys are issued upstream', 'a known issue', 'tissue 5']) t.notMatch(s, ISSUE_REF, s);
});

t.test('no tracked file names an issue by its number', async (t) => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter((f) => f !== '' && f !== SELF);
  t.ok(files.length > 100, 'git lists the tracked files');
  const found: string[] = [];
  for (const file of files) {
    const full = path.join(ROOT, file);
    if (!fs.existsSync(full) || !fs.statSync(full).isFile()) continue; // deleted in the work tree, or a submodule
    const bytes = fs.readFileSync(full);
    if (bytes.includes(0)) continue; // binary
    bytes.toString('utf8').split('\n').forEach((line, i) => {
      if (ISSUE_REF.test(line)) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
    });
  }
  t.same(found, [], 'say why in words (or add a record to docs/decisions.md) instead of an issue number');
});
