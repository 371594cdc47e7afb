// Contract fuzzing: schemathesis (pinned, from PyPI, in .venv-fuzz/ via scripts/schemathesis.sh)
// against the OpenAPI document that `visibility-api serve --demo` serves, every operation, every
// check, a fixed seed and a bounded number of examples; the run must end with 0 failures.
//
// So that the fuzzing reaches past the 400/404 gates, it is given real identifiers (fetched from the
// running service, nothing hard-coded): project and run-group ids the key can see, and ids of another
// account that it must not see (404 is the contract for those, byte-identical to an unknown id), as
// schemathesis "dictionaries" drawn for 90 % of path parameters; and real engine ids for engine_ids
// through a hook (dictionaries only hold scalars, engine_ids is an array). A second account is
// declared as a peer, so object_level_authorization replays what the first read as the second.
//
// No check is excluded: all of them apply to a read-only API (those about writes, e.g. use_after_free,
// find nothing to act on, which is not a failure).
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import t from 'tap';
import { DEMO_KEYS } from '../../fixtures/world';
import { ENDPOINTS } from '../../src/readmodels';
import { tmpDir } from '../helpers/db';
import { startServe } from '../helpers/processes';
import { ROOT } from '../helpers/paths';

/** Fixed, so a failure reproduces: `st run ... --seed SEED` with the same arguments. */
const SEED = 20261123;
/** Per operation and phase. About 1-2 minutes for all of it on 2 cores. */
const MAX_EXAMPLES = 100;
/** Hard bound for the whole schemathesis run (it is killed after it). */
const RUN_MS = 480_000;

interface JsonReport {
  schemathesis_version: string;
  seed: number;
  running_time: number;
  complete: boolean;
  exit_code: number;
  operations: { total: number; selected: number; tested: number; errored: number; skipped: number };
  test_cases: { generated: number; with_failures: number; unique_failures: number };
  failures: Array<{ code: string; title: string; operations: string[] }>;
  errors: unknown[];
  warnings: Record<string, unknown[]>;
  valid_rates: Record<string, Record<string, { accepted: number; unreachable: number; rejected: number }>>;
}

async function getJson<T>(url: string, key: string): Promise<T> {
  const r = await fetch(url, { headers: { 'x-api-key': key } });
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

/** Runs scripts/schemathesis.sh ARGS (installing the pinned venv if needed); bounded by RUN_MS. */
function schemathesis(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path.join(ROOT, 'scripts', 'schemathesis.sh'), ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`schemathesis still running after ${RUN_MS / 1000} s:\n${out}`));
    }, RUN_MS);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

const toml = (v: unknown): string => JSON.stringify(v); // uuids, keys and paths: JSON strings are TOML strings

t.test('schemathesis finds nothing against the served document', async (t) => {
  const dir = tmpDir('contract-fuzz-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const serve = await startServe(['--demo', '--rate-limit', '0', '--db', path.join(dir, 'demo.db')], {}, RUN_MS + 120_000);
  t.teardown(async () => {
    serve.child.kill('SIGTERM');
    await serve.exited.catch(() => undefined);
  });
  const base = serve.base;

  // The main key, and a peer account that sees none of its projects.
  const active = DEMO_KEYS.filter((k) => !k.revoked);
  const projectsOf = async (key: string): Promise<string[]> => (await getJson<Array<{ id: string }>>(`${base}/projects`, key)).map((p) => p.id);
  const main = active[0]!;
  const mine = await projectsOf(main.key);
  let peer: { key: string; projects: string[] } | undefined;
  for (const k of active.slice(1)) {
    const theirs = await projectsOf(k.key);
    if (theirs.length > 0 && theirs.every((p) => !mine.includes(p))) {
      peer = { key: k.key, projects: theirs };
      break;
    }
  }
  if (!peer || mine.length === 0) throw new Error('the demo needs a key with projects and another account with disjoint ones');
  const runsOf = async (key: string, projects: string[], n: number): Promise<string[]> => {
    const out: string[] = [];
    for (const p of projects) out.push(...(await getJson<Array<{ id: string }>>(`${base}/projects/${p}/runs`, key)).slice(0, n).map((r) => r.id));
    return out;
  };
  const engines = new Set<string>();
  for (const p of mine) for (const e of await getJson<Array<{ id: string }>>(`${base}/projects/${p}/engines`, main.key)) engines.add(e.id);
  const projectIds = [...mine, ...peer.projects];
  const runGroupIds = [...(await runsOf(main.key, mine, 5)), ...(await runsOf(peer.key, peer.projects, 2))];
  t.ok(runGroupIds.length > 0 && engines.size > 0, `real ids: ${projectIds.length} projects, ${runGroupIds.length} run groups, ${engines.size} engines`);

  fs.writeFileSync(path.join(dir, 'wfc.json'), JSON.stringify({
    auth: [
      { name: 'main', fixedHeaders: [{ name: 'X-API-Key', value: main.key }] },
      // The other header form, so that one is exercised too.
      { name: 'peer', fixedHeaders: [{ name: 'Authorization', value: `ApiKey ${peer.key}` }] },
    ],
  }));
  // engine_ids: the generated value, or a non-empty subset of the project's real engines. The hook
  // only draws through hypothesis, so the seed still decides everything.
  fs.writeFileSync(path.join(dir, 'hooks.py'), [
    'import datetime, json, os, re',
    'import schemathesis',
    'from hypothesis import strategies as st',
    '',
    'ENGINES = json.loads(os.environ["FUZZ_ENGINE_IDS"])',
    '# A cursor is opaque: only the API issues valid ones (in a Link header), so a generated one that',
    '# fits the schema is rightly refused (400). Those are left out; ones that do not fit stay (400 too).',
    'CURSOR = re.compile(r"[A-Za-z0-9_-]{1,8192}")',
    '',
    '# start_date..end_date must be in order and at most 366 days long: a rule across two parameters,',
    '# which a JSON Schema cannot state, so two schema-valid dates can rightly get a 400 naming start_date',
    '# (test/readmodels/date-ranges.test.ts checks those). Such a pair keeps only start_date.',
    'def day(v):',
    '    try:',
    '        return datetime.date.fromisoformat(v) if isinstance(v, str) and re.fullmatch(r"\\d{4}-\\d{2}-\\d{2}", v) else None',
    '    except ValueError:',
    '        return None',
    '',
    '@schemathesis.hook',
    'def flatmap_query(ctx, query):',
    '    if isinstance(query, dict) and isinstance(query.get("cursor"), str) and CURSOR.fullmatch(query["cursor"]):',
    '        query = {k: v for k, v in query.items() if k != "cursor"}',
    '    if isinstance(query, dict) and day(query.get("start_date")) and day(query.get("end_date")):',
    '        span = (day(query["end_date"]) - day(query["start_date"])).days + 1',
    '        if span < 1 or span > 366:',
    '            query = {k: v for k, v in query.items() if k != "end_date"}',
    '    if not isinstance(query, dict) or "engine_ids" not in query:',
    '        return st.just(query)',
    '    real = st.lists(st.sampled_from(ENGINES), min_size=1, max_size=len(ENGINES), unique=True)',
    '    return st.one_of(st.just(query), real.map(lambda ids: {**query, "engine_ids": ids}))',
    '',
    '# The comparison period: compare_start_date and compare_end_date both or neither, in order, at most',
    '# 366 days, and not with compare=previous_period (rules across parameters too, which',
    '# test/readmodels/compare.test.ts checks). A query breaking one with well-formed dates drops the two',
    '# dates. A case hook, so the coverage phase (which draws through no query hook) keeps the rule too.',
    '@schemathesis.hook',
    'def map_case(ctx, case):',
    '    query = case.query',
    '    if isinstance(query, dict) and ("compare_start_date" in query or "compare_end_date" in query):',
    '        given = [query[k] for k in ("compare_start_date", "compare_end_date") if k in query]',
    '        if all(day(v) for v in given):',
    '            s, e = day(query.get("compare_start_date")), day(query.get("compare_end_date"))',
    '            if "compare" in query or not (s and e) or not (1 <= (e - s).days + 1 <= 366):',
    '                case.query = {k: v for k, v in query.items() if k not in ("compare_start_date", "compare_end_date")}',
    '    # A list parameter takes at most 64 distinct values (repeats count once: a rule over the values,',
    '    # which a JSON Schema cannot state, so the document gives no maxItems; test/serve/request-params.test.ts',
    '    # checks the bound). A longer list keeps its first 64 distinct values.',
    '    query = case.query',
    '    if isinstance(query, dict):',
    '        for k, v in list(query.items()):',
    '            if isinstance(v, list) and len(set(map(str, v))) > 64:',
    '                kept = []',
    '                for x in v:',
    '                    if str(x) in set(map(str, kept)) or len(set(map(str, kept))) < 64:',
    '                        kept.append(x)',
    '                query[k] = kept',
    '    return case',
    '',
  ].join('\n'));
  fs.writeFileSync(path.join(dir, 'schemathesis.toml'), [
    `hooks = ${toml(path.join(dir, 'hooks.py'))}`,
    'request-timeout = 10.0', // a hung request is a failure, not a hung run
    '',
    '[auth.wfc]',
    `path = ${toml(path.join(dir, 'wfc.json'))}`,
    'user = "main"',
    'peers = ["main", "peer"]',
    '',
    '[dictionaries.project_ids]',
    `values = ${toml(projectIds)}`,
    '[dictionaries.run_group_ids]',
    `values = ${toml(runGroupIds)}`,
    '',
    '[parameters]',
    '"path.project_id" = { dictionary = "project_ids", probability = 0.9 }',
    '"path.run_group_id" = { dictionary = "run_group_ids", probability = 0.9 }',
    '',
    // The coverage phase's boundary values of cursor (e.g. "0") fit its schema and are rightly refused;
    // it draws no data through the hook above, so it skips the five lists that page (the fuzzing and
    // stateful phases still test them, and test/serve/cursor.test.ts the cursors themselves).
    '[[operations]]',
    'include-path-regex = "/(mentions|citations|runs|forum/leads|forum/opportunities)$"',
    'phases.coverage.enabled = false',
    '',
    // The change feed is an endless text/event-stream (test/serve/change-feed.test.ts drives it with a real
    // EventSource client): a fuzzer's request would only end by its timeout.
    '[[operations]]',
    'include-path-regex = "/changes$"',
    'enabled = false',
    '',
  ].join('\n'));

  const args = ['--config-file', path.join(dir, 'schemathesis.toml'), 'run', `${base}/openapi.json`,
    '--checks', 'all', '--seed', String(SEED), '--max-examples', String(MAX_EXAMPLES),
    '--generation-database', 'none', // nothing remembered between runs: the seed alone decides the cases
    '--no-color', '--report', 'json', '--report-dir', path.join(dir, 'report')];
  t.comment(`schemathesis ${args.join(' ')}`);
  const run = await schemathesis(args, dir, { FUZZ_ENGINE_IDS: JSON.stringify([...engines]) });
  const summary = run.out.slice(Math.max(0, run.out.lastIndexOf('=== SUMMARY ===') - 40));
  t.comment(summary.trimEnd());

  const reports = fs.existsSync(path.join(dir, 'report')) ? fs.readdirSync(path.join(dir, 'report')).filter((f) => f.endsWith('.json')) : [];
  if (reports.length !== 1) {
    t.fail(`one JSON report expected, got ${reports.length}; exit ${run.code}:\n${run.out.slice(-20_000)}`);
    return;
  }
  const report = JSON.parse(fs.readFileSync(path.join(dir, 'report', reports[0]!), 'utf8')) as JsonReport;
  t.equal(report.seed, SEED, 'the fixed seed was used');
  t.ok(report.complete, 'the run completed');
  // Every failure, with how to reproduce it, is in the output above the summary.
  t.same(report.failures.map((f) => `${f.code} ${f.title}: ${f.operations.join(', ')}`), [], `0 failures${report.failures.length ? `\n${run.out.slice(0, run.out.lastIndexOf('=== SUMMARY ==='))}` : ''}`);
  t.same(report.errors, [], '0 errors');
  t.equal(run.code, 0, 'schemathesis exits 0');
  // The endpoints, /methodology and the change feed (schemathesis leaves out the document itself);
  // every one but the feed (disabled above) is tested.
  t.equal(report.operations.total, ENDPOINTS.length + 2, 'the document has every endpoint');
  t.equal(report.operations.tested, ENDPOINTS.length + 1, 'every operation but the change feed was tested');
  t.same(report.warnings.missing_test_data ?? [], [], 'no operation was starved of real data (only 404s)');
  // Each operation got answers that were accepted (2xx), not only 400s and 404s.
  for (const [op, phases] of Object.entries(report.valid_rates)) {
    t.ok((phases.fuzzing?.accepted ?? 0) > 0, `${op}: ${phases.fuzzing?.accepted ?? 0} accepted requests while fuzzing`);
  }
  t.comment(`schemathesis ${report.schemathesis_version}, seed ${report.seed}, ${MAX_EXAMPLES} examples per operation and phase: ` +
    `${report.test_cases.generated} test cases in ${report.running_time.toFixed(0)} s`);
});
