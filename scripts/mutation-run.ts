// `npm run mutate`: seeds one-line bugs in scoping, windows, orderings and de-duplication, one at a
// time, into a private copy of the committed tree, and checks that the value tests catch each one.
// A mutation is caught when a named test file fails an assertion that did not fail on the unmutated
// copy (so a test kept failing on purpose, for a known bug, cannot make a mutation look caught).
// Never touches the checkout it runs from: the copy is `git archive HEAD` in a temp dir, with
// node_modules linked. Exits 1 when any mutation survives or cannot be applied.
//
//   npm run mutate                    every mutation
//   npm run mutate -- --only forum    mutations whose name contains "forum"
//   npm run mutate -- --keep          leave the temp copy for a look
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

interface Mutation {
  name: string;
  kind: 'scoping' | 'window' | 'threshold' | 'ordering' | 'de-duplication';
  file: string;
  original: string;
  replacement: string;
  /** Which occurrence of `original` to change (1-based) when the file holds it more than once. */
  nth?: number;
  catchers: string[];
}

const EVIDENCE = 'test/readmodels/evidence-oracle.test.ts';   // endpoints 12-22
const CATALOG = 'test/readmodels/catalog-oracle.test.ts';     // endpoints 1-11

export const MUTATIONS: Mutation[] = [
  // ---- Scoping
  {
    name: 'a revoked share still counts as access (per-project check)', kind: 'scoping', file: 'src/readmodels/access.ts', nth: 2,
    original: 'g.account_id = @account AND g.granted = 1))`;', replacement: 'g.account_id = @account AND g.granted IN (0, 1)))`;',
    catchers: [EVIDENCE, CATALOG],
  },
  {
    name: 'a revoked share still lists the project (/projects)', kind: 'scoping', file: 'src/readmodels/access.ts', nth: 1,
    original: 'g.account_id = @account AND g.granted = 1))`;', replacement: 'g.account_id = @account AND g.granted IN (0, 1)))`;',
    catchers: [CATALOG, EVIDENCE],
  },
  {
    name: 'another account\'s project is visible', kind: 'scoping', file: 'src/readmodels/access.ts',
    original: 'WHERE p.id = @project AND p.deleted = 0 AND p.name IS NOT NULL AND (p.company_id = @account',
    replacement: 'WHERE p.id = @project AND p.deleted = 0 AND p.name IS NOT NULL AND (p.company_id IS NOT NULL',
    catchers: [EVIDENCE, CATALOG],
  },
  {
    name: 'a run group is served without checking its project', kind: 'scoping', file: 'src/serve/http/responder.ts',
    original: 'if (projectId === null || !this.access.canSee(accountId, projectId)) throw notFound();',
    replacement: 'if (projectId === null) throw notFound();',
    catchers: [EVIDENCE],
  },
  {
    name: 'mentions: failed runs in the feed', kind: 'scoping', file: 'src/readmodels/endpoints/mentions.ts',
    original: "WHERE a.project = ${KEY_OF} AND a.status = 'succeeded'`;", replacement: 'WHERE a.project = ${KEY_OF}`;',
    catchers: [EVIDENCE],
  },
  {
    name: 'runs of a deleted prompt still count', kind: 'scoping', file: 'src/readmodels/formulas.ts',
    original: "const COUNTED_PROMPTS = 'SELECT id FROM prompts WHERE project_id = ? AND deleted = 0';", replacement: "const COUNTED_PROMPTS = 'SELECT id FROM prompts WHERE project_id = ?';",
    catchers: [EVIDENCE, CATALOG],
  },
  // ---- Windows
  {
    name: 'window one day too long (D-7..D)', kind: 'window', file: 'src/readmodels/formulas.ts',
    original: 'return { start: addDays(end, -(days - 1)), end };', replacement: 'return { start: addDays(end, -days), end };',
    catchers: [EVIDENCE, CATALOG],
  },
  {
    name: 'window one day too short (D-5..D)', kind: 'window', file: 'src/readmodels/formulas.ts',
    original: 'return { start: addDays(end, -(days - 1)), end };', replacement: 'return { start: addDays(end, -(days - 2)), end };',
    catchers: [EVIDENCE, CATALOG],
  },
  {
    name: 'cited URLs: the window\'s last day left out', kind: 'window', file: 'src/readmodels/endpoints/citations.ts',
    original: "const pieces = rangePieces(window.start, window.end, 'total', stalePeriods(store, args.projectId));",
    replacement: "const pieces = rangePieces(window.start, new Date(Date.parse(window.end) - 86_400_000).toISOString().slice(0, 10), 'total', stalePeriods(store, args.projectId));",
    catchers: [EVIDENCE, CATALOG],
  },
  // ---- Thresholds (the edge of a definition, like a window's edge)
  {
    name: 'forum: relevance exactly 0.7 is no lead', kind: 'threshold', file: 'src/readmodels/forum.ts',
    original: "return intent === 'high' || relevance >= LEAD_RELEVANCE;", replacement: "return intent === 'high' || relevance > LEAD_RELEVANCE;",
    catchers: [EVIDENCE],
  },
  {
    name: 'warm leads: a page cited exactly twice left out', kind: 'threshold', file: 'src/readmodels/endpoints/warm-leads.ts',
    original: 'if (!platform || u.citation_count < MIN_CITATIONS) continue;', replacement: 'if (!platform || u.citation_count <= MIN_CITATIONS) continue;',
    catchers: [EVIDENCE],
  },
  // ---- Orderings
  {
    name: 'forum leads: final tie-break (id) reversed', kind: 'ordering', file: 'src/readmodels/endpoints/forum-leads.ts',
    original: 'compareStrings(String(b[1]), String(a[1])) || compareStrings(String(a[2]), String(b[2]));',
    replacement: 'compareStrings(String(b[1]), String(a[1])) || compareStrings(String(b[2]), String(a[2]));',
    catchers: [EVIDENCE],
  },
  {
    name: 'mentions: answer order reversed within a run', kind: 'ordering', file: 'src/readmodels/endpoints/mentions.ts',
    original: 'storedMentions(run.mentions).forEach((m, idx) => {',
    replacement: 'storedMentions(run.mentions).reverse().forEach((m, idx) => {',
    catchers: [EVIDENCE],
  },
  {
    name: 'mentions: runs completed at the same instant by id descending', kind: 'ordering', file: 'src/readmodels/endpoints/mentions.ts',
    original: "const NEWEST_FIRST = ' ORDER BY a.completed_at DESC, a.id';", replacement: "const NEWEST_FIRST = ' ORDER BY a.completed_at DESC, a.id DESC';",
    catchers: [EVIDENCE],
  },
  {
    name: 'cited URLs: equal counts ordered by URL descending (citations, warm leads)', kind: 'ordering', file: 'src/readmodels/endpoints/citations.ts',
    original: 'return b.citation_count - a.citation_count || compareStrings(a.url, b.url);',
    replacement: 'return b.citation_count - a.citation_count || compareStrings(b.url, a.url);',
    catchers: [EVIDENCE, CATALOG],
  },
  {
    name: 'run groups: equal start times by id descending', kind: 'ordering', file: 'src/readmodels/endpoints/runs.ts',
    original: "const NEWEST_FIRST = ' ORDER BY g.started_at DESC, g.id LIMIT ?';", replacement: "const NEWEST_FIRST = ' ORDER BY g.started_at DESC, g.id DESC LIMIT ?';",
    catchers: [EVIDENCE],
  },
  {
    name: 'engines: equal names by id descending', kind: 'ordering', file: 'src/readmodels/endpoints/engines.ts',
    original: 'ORDER BY e.name, e.id`;', replacement: 'ORDER BY e.name, e.id DESC`;',
    catchers: [EVIDENCE],
  },
  {
    name: 'top competitors: equal rates and names by id descending', kind: 'ordering', file: 'src/readmodels/endpoints/visibility.ts',
    original: '|| compareStrings(a.name, b.name) || compareStrings(a.competitor_id, b.competitor_id))',
    replacement: '|| compareStrings(a.name, b.name) || compareStrings(b.competitor_id, a.competitor_id))',
    catchers: [CATALOG],
  },
  {
    name: 'competitor rankings: equal scores by name descending', kind: 'ordering', file: 'src/readmodels/endpoints/competitor-rankings.ts',
    original: "return compareStrings(a.name, b.name) || compareStrings(a.competitor_id ?? '', b.competitor_id ?? '');",
    replacement: "return compareStrings(b.name, a.name) || compareStrings(a.competitor_id ?? '', b.competitor_id ?? '');",
    catchers: [CATALOG],
  },
  // ---- De-duplication
  {
    name: 'a URL cited twice in one answer counts twice', kind: 'de-duplication', file: 'src/store/run-store.ts',
    original: 'urls: urlsOf(run.citations),', replacement: 'urls: run.citations.map((c) => ({ url: c.url, domain: citedDomain(c.url), title: c.title || null })),',
    catchers: [EVIDENCE, CATALOG],
  },
  {
    name: 'an older version of a run replaces the newer one', kind: 'de-duplication', file: 'src/store/run-store.ts',
    original: 'if (!isNewer(v, cur.version.at, cur.version.id)) {', replacement: 'if (isSame(v, cur.version.at, cur.version.id)) {',
    catchers: [EVIDENCE, CATALOG],
  },
  {
    name: 'an older forum post update replaces a newer field', kind: 'de-duplication', file: 'src/store/facts.ts',
    original: 'if (cur && !isNewer(v, cur.v_at, cur.v_id)) {', replacement: 'if (cur && isSame(v, cur.v_at, cur.v_id)) {',
    catchers: [EVIDENCE],
  },
  {
    name: 'the brand counts at its worst position in a run, not its best', kind: 'de-duplication', file: 'src/store/run-store.ts',
    original: "for (const m of mentions) if (m.entity_type === 'brand' && (!best || m.position < best.position)) best = m;",
    replacement: "for (const m of mentions) if (m.entity_type === 'brand' && (!best || m.position > best.position)) best = m;",
    catchers: [EVIDENCE, CATALOG],
  },
];

const MAIN = path.resolve(__dirname, '..');
const TEST_TIMEOUT_S = 900;

interface Outcome { failures: Map<string, number>; exit: number | null; output: string }

/** Failing assertions, keyed by their subtest path and name (numbers and times left out), counted. */
export function failingAssertions(tap: string): Map<string, number> {
  const stack: string[] = [];
  const out = new Map<string, number>();
  for (const line of tap.split('\n')) {
    const sub = /^( *)# Subtest: (.*)$/.exec(line);
    if (sub) {
      const depth = sub[1]!.length / 4;
      stack.length = depth;
      stack[depth] = sub[2]!.trim();
      continue;
    }
    const fail = /^( *)not ok \d+ - (.*?)(?: # time=[\d.]+m?s)?$/.exec(line);
    if (fail) {
      const key = [...stack.slice(0, fail[1]!.length / 4), fail[2]!.trim()].join(' > ');
      out.set(key, (out.get(key) ?? 0) + 1);
    }
  }
  return out;
}

function runTests(dir: string, files: string[]): Outcome {
  const r = spawnSync('npx', ['tap', '--reporter=tap', '--disable-coverage', '--jobs=1', `--timeout=${TEST_TIMEOUT_S}`, ...files], {
    cwd: dir, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, FORCE_COLOR: '0' },
    timeout: (TEST_TIMEOUT_S + 60) * 1000 * files.length,
  });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return { failures: failingAssertions(output), exit: r.status, output };
}

/** Assertions failing now that did not fail (as often) on the unmutated copy. */
function newFailures(base: Outcome, now: Outcome): string[] {
  return [...now.failures].filter(([k, n]) => n > (base.failures.get(k) ?? 0)).map(([k]) => k);
}

/** Replaces the nth occurrence of `original`; throws when it is not there. */
export function mutate(text: string, m: Mutation): string {
  let at = -1;
  for (let i = 0; i < (m.nth ?? 1); i++) {
    at = text.indexOf(m.original, at + 1);
    if (at < 0) throw new Error(`"${m.original}" (occurrence ${m.nth ?? 1}) not found in ${m.file}`);
  }
  if (m.nth === undefined && text.indexOf(m.original, at + 1) >= 0) throw new Error(`"${m.original}" occurs more than once in ${m.file}: give nth`);
  return text.slice(0, at) + m.replacement + text.slice(at + m.original.length);
}

function main(): void {
  const args = process.argv.slice(2);
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] ?? '' : '';
  const keep = args.includes('--keep');
  const chosen = MUTATIONS.filter((m) => m.name.includes(only));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mutation-run-'));
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: MAIN, encoding: 'utf8' }).trim();
  // The committed tree, not the working tree: other people's edits in progress stay out of it.
  execFileSync('bash', ['-c', `git -C ${JSON.stringify(MAIN)} archive HEAD | tar -x -C ${JSON.stringify(dir)}`]);
  fs.symlinkSync(path.join(MAIN, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  console.log(`copy of ${commit} in ${dir}`);

  const catchers = [...new Set(chosen.flatMap((m) => m.catchers))].sort();
  const missing = catchers.filter((f) => !fs.existsSync(path.join(dir, f)));
  const baseline = new Map<string, Outcome>();
  for (const f of catchers.filter((c) => !missing.includes(c))) {
    const b = runTests(dir, [f]);
    baseline.set(f, b);
    console.log(`baseline ${f}: exit ${b.exit}, ${[...b.failures.values()].reduce((a, n) => a + n, 0)} failing assertions`);
    for (const k of b.failures.keys()) console.log(`  already failing: ${k}`);
  }

  const rows: Array<[string, string, string, string]> = [];
  let bad = 0;
  for (const m of chosen) {
    const file = path.join(dir, m.file);
    const pristine = fs.readFileSync(file, 'utf8');
    let result: string;
    const caughtBy: string[] = [];
    try {
      fs.writeFileSync(file, mutate(pristine, m));
      for (const f of m.catchers) {
        if (missing.includes(f)) continue;
        const now = runTests(dir, [f]);
        const fresh = newFailures(baseline.get(f)!, now);
        const crashed = now.exit !== 0 && baseline.get(f)!.exit === 0;
        if (fresh.length > 0 || crashed) caughtBy.push(`${path.basename(f)} (${fresh.length} new failing assertions${crashed && fresh.length === 0 ? ', exit ' + now.exit : ''})`);
      }
      result = caughtBy.length > 0 ? 'caught' : 'SURVIVED';
    } catch (err) {
      result = `NOT APPLIED: ${(err as Error).message}`;
    } finally {
      fs.writeFileSync(file, pristine);
    }
    if (result !== 'caught') bad += 1;
    rows.push([`${m.kind}: ${m.name} (${m.file})`, caughtBy.join(', ') || '-', result, m.catchers.map((c) => path.basename(c) + (missing.includes(c) ? ' (missing)' : '')).join(', ')]);
    console.log(`${result.padEnd(8)} ${m.name}`);
  }

  console.log(`\nmutation run on ${commit}, ${new Date().toISOString()}\n`);
  console.log('| mutation | caught by | result | catchers named |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  if (missing.length) console.log(`\nnot in the commit, not run: ${missing.join(', ')}`);
  console.log(`\n${rows.length - bad} of ${rows.length} caught`);
  if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  process.exitCode = bad === 0 ? 0 : 1;
}

if (require.main === module) main();
