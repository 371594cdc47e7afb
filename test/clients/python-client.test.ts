// The Python client (clients/python) as a user runs it: its pytest files against two live
// `node bin/visibility-api.js serve --demo` on free 127.0.0.1 ports (one with a small --rate-limit,
// for the 429 retries), in the pinned venv of scripts/python-env.sh (made here on first use; when it
// cannot be made this test fails with the reason, never skips). pytest writes a JUnit XML report and
// each of its cases becomes an assertion here, so a failing Python test fails `npm test` and is counted.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { activeKeys } from '../helpers/demo';
import { tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';
import { cleanEnv } from '../helpers/processes';
import { pythonEnv } from '../helpers/python';

const CLIENT = path.join(ROOT, 'clients', 'python');
/** Requests per second per key on the limited service: bursts of 2, so a few calls meet a 429. */
const RATE_LIMIT = 1;
/** Bounds the whole pytest run (about 25 s on 2 cores; the 429 tests wait out Retry-After). */
const PYTEST_MS = 300_000;

/** scripts/python-env.sh ARGS in `cwd`: its exit code and its output (stdout, then stderr). */
async function venv(args: string[], cwd: string, env: NodeJS.ProcessEnv, ms: number): Promise<{ code: number | null; out: string }> {
  const r = await pythonEnv(args, { cwd, env, ms });
  return { code: r.code, out: r.stdout + r.stderr };
}

/** `node bin/visibility-api.js serve --demo` on ports the OS picks (127.0.0.1); resolves with its origin. */
async function serveDemo(t: Test, extra: string[]): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'bin', 'visibility-api.js'), 'serve', '--demo',
    '--host', '127.0.0.1', '--port', '0', '--ops-port', '0', ...extra], { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  let out = '';
  return new Promise<string>((resolve, reject) => {
    const seen = (c: Buffer): void => {
      out += c.toString();
      const m = /listening on \S+ \((http:\/\/[^ )]+)\/v1\/public\)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    void exited.then(() => reject(new Error(`serve exited before listening:\n${out}`)));
    setTimeout(() => reject(new Error(`serve not listening after 120 s:\n${out}`)), 120_000).unref();
  });
}

interface Case { name: string; outcome: 'passed' | 'failed' | 'error' | 'skipped'; detail: string }

const unescapeXml = (s: string): string => s.replace(/&(lt|gt|quot|apos|amp|#(\d+)|#x([0-9a-f]+));/gi, (_m, name: string, dec?: string, hex?: string) =>
  dec ? String.fromCodePoint(Number(dec)) : hex ? String.fromCodePoint(parseInt(hex, 16)) : ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' } as Record<string, string>)[name]!);

/** The test cases of pytest's JUnit XML: `<testcase classname name ...>` with a failure, error or skipped child, or none. */
function junitCases(xml: string): Case[] {
  const cases: Case[] = [];
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    const attr = (n: string): string => unescapeXml(new RegExp(`\\b${n}="([^"]*)"`).exec(m![1]!)?.[1] ?? '');
    const body = m[3] ?? '';
    const child = /<(failure|error|skipped)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    const outcome = child ? (child[1] === 'failure' ? 'failed' : child[1] === 'error' ? 'error' : 'skipped') : 'passed';
    cases.push({ name: `${attr('classname')}::${attr('name')}`, outcome, detail: child ? unescapeXml(child[3] ?? child[2] ?? '') : '' });
  }
  return cases;
}

/** The test functions the pytest files define: every one must have run. */
function definedTests(): string[] {
  const dir = path.join(CLIENT, 'tests');
  return fs.readdirSync(dir).filter((f) => /^test_.*\.py$/.test(f)).sort()
    .flatMap((f) => [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/^def (test_\w+)\(/gm)].map((m) => `tests.${f.slice(0, -3)}::${m[1]}`)).sort();
}

t.test('the Python client against serve --demo (pytest, each case an assertion)', async (t) => {
  const install = await venv(['--install'], ROOT, {}, 600_000);
  if (install.code !== 0) {
    t.fail(`the Python venv could not be made (scripts/python-env.sh --install exited ${install.code}):\n${install.out}`);
    return;
  }
  t.comment(install.out.trim());

  // The hand-written layer and the tests are kept to the project's ruff settings (clients/python/pyproject.toml).
  const lint = await venv(['ruff', 'check', '--no-cache', '.'], CLIENT, {}, 60_000);
  t.equal(lint.code, 0, `ruff check clients/python\n${lint.out}`);
  const format = await venv(['ruff', 'format', '--check', '--no-cache', '.'], CLIENT, {}, 60_000);
  t.equal(format.code, 0, `ruff format --check clients/python\n${format.out}`);
  // And type-checked as a user's code would check it (mypy --strict; clients/python/pyproject.toml).
  const types = await venv(['mypy', '--cache-dir=/dev/null'], CLIENT, {}, 180_000);
  t.equal(types.code, 0, `mypy --strict visibility_api tests\n${types.out}`);

  const [main, ...others] = activeKeys;
  const [free, limited] = await Promise.all([serveDemo(t, ['--rate-limit', '0']), serveDemo(t, ['--rate-limit', String(RATE_LIMIT)])]);
  // Another account: one that sees projects, none of which the main key sees (accounts can share one).
  const projectsOf = async (key: string): Promise<string[]> => {
    const r = await fetch(`${free}/v1/public/projects`, { headers: { 'X-API-Key': key } });
    return ((await r.json()) as Array<{ id: string }>).map((p) => p.id);
  };
  const mine = await projectsOf(main!.key);
  let other: string | undefined;
  for (const k of others) {
    const theirs = await projectsOf(k.key);
    if (theirs.length > 0 && theirs.every((p) => !mine.includes(p))) {
      other = k.key;
      break;
    }
  }
  if (other === undefined) throw new Error('the demo needs another account whose projects the main key does not see');

  const dir = tmpDir('python-client-');
  const report = path.join(dir, 'junit.xml');
  const run = await venv(['pytest', '-p', 'no:cacheprovider', '-o', 'junit_family=xunit2', `--junitxml=${report}`, '-q', 'tests'], CLIENT, {
    PYTHONPATH: CLIENT, // the package as it is in the repository, not an installed copy
    PYTHONDONTWRITEBYTECODE: '1', // no __pycache__ beside the generated package (its staleness test lists files)
    VISIBILITY_API_URL: free,
    VISIBILITY_API_LIMITED_URL: limited,
    VISIBILITY_API_KEY: main!.key,
    VISIBILITY_API_OTHER_KEY: other,
  }, PYTEST_MS);
  t.comment(run.out.split('\n').slice(-3).join('\n').trim());
  t.ok(run.code === 0 || run.code === 1, `pytest ran its tests (exit ${run.code}; 0 all passed, 1 some failed)${run.code === 0 || run.code === 1 ? '' : `\n${run.out}`}`);
  if (!fs.existsSync(report)) {
    t.fail(`pytest wrote no JUnit report:\n${run.out}`);
    return;
  }
  const cases = junitCases(fs.readFileSync(report, 'utf8'));
  for (const c of cases) {
    if (c.outcome === 'passed') t.pass(c.name);
    else t.fail(`${c.name} ${c.outcome}${c.outcome === 'skipped' ? ' (the Python tests are never skipped)' : ''}`, { pytest: c.detail });
  }
  t.same(cases.map((c) => c.name).sort(), definedTests(), 'every test function of clients/python/tests ran, once');
});
