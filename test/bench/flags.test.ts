// The benches are commands people type: a bad flag or value ends one with a single line naming it
// and exit code 2, before it generates, spawns or writes anything (bench/lib/bench-flags.ts).
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';


/** `bench/SUITE/NAME.ts`: each bench lives in its suite's folder, and a file name is used once. */
function benchFile(name: string): string {
  const dirs = fs.readdirSync(path.join(ROOT, 'bench'), { withFileTypes: true }).filter((e) => e.isDirectory());
  const found = dirs.map((d) => path.join(ROOT, 'bench', d.name, `${name}.ts`)).filter((f) => fs.existsSync(f));
  if (found.length !== 1) throw new Error(`bench ${name}: ${found.length} files named ${name}.ts under bench/*/`);
  return found[0]!;
}

/** `bench/SUITE/NAME.ts ARGS...` from the sources, as `npm run bench...` runs the built file. */
const spawnBench = (name: string, args: string[], stdio: StdioOptions): ChildProcess =>
  spawn(process.execPath, ['--import', 'tsx', benchFile(name), ...args], { cwd: ROOT, stdio });

function bench(name: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnBench(name, args, ['ignore', 'pipe', 'pipe']);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const CASES: Array<[string, string[], RegExp]> = [
  ['ingest', ['--no-such-flag'], /^bench ingest: Unknown option '--no-such-flag'$/],
  ['ingest', ['--days', '1.5'], /^bench ingest: --days: "1\.5" is not a positive integer$/],
  ['bucket-growth', ['--max', '0'], /^bench bucket-growth: --max: "0" is not a positive integer$/],
  ['builds', ['--days', '365,x'], /^bench builds: --days: "x" is not a positive integer$/],
  ['builds', ['--tier', 'huge'], /^bench builds: --tier: "huge" is not one of small, medium, large, large-4x$/],
  ['builds', ['--tier', 'large', '--days', '0'], /^bench builds: --days: "0" is not a positive integer$/],
  ['builds', ['--tier', 'small', '--case-seconds', 'x'], /^bench builds: --case-seconds: "x" is not a positive number$/],
  ['builds-ab', [], /^bench builds-ab: --base DIR is required/],
  ['builds-ab', ['--cpu=yes'], /^bench builds-ab: Option '--cpu' does not take an argument/],
  ['cited-rows', [], /^bench cited-rows: --db FILE \(a tier database\) is required$/],
  ['kafka', ['--events'], /^bench kafka: Option '--events <value>' argument missing$/],
  ['kafka', ['--rates', '1000,-5'], /^bench kafka: --rates: "-5" is not a positive number$/],
  ['kafka', ['--concentrated=yes'], /^bench kafka: Option '--concentrated' does not take an argument/],
  ['shards', ['--projects', '5'], /^bench shards: --projects: "5" is not even \(2 projects per account\)$/],
  ['shards', ['--partitions', '1'], /^bench shards: --partitions: "1" is below 2 \(2 shards\)$/],
  ['serve', ['--rounds', 'two'], /^bench serve: --rounds: "two" is not a positive integer$/],
  ['soak', ['--duration=-1'], /^bench soak: --duration: "-1" is not a non-negative number$/],
  ['soak', ['--duration', '-1'], /^bench soak: Option '--duration' argument is ambiguous\. .*'--duration=-XYZ'\.$/],
  ['server', ['other', '--db', 'x.db'], /^bench server: the server is service, bare or naive, not "other"$/],
  ['mcp-abuse', ['--ids', '0'], /^bench mcp-abuse: --ids: "0" is not a positive integer$/],
  ['raw-floor', ['--db'], /^bench raw-floor: Option '--db <value>' argument missing$/],
  ['raw-floor', ['--db', 'x.db'], /^bench raw-floor: usage: raw-floor --db FILE LOG \(one log\)$/],
];

t.test('a bad flag or value: one line naming it, exit 2, nothing on stdout', async (t) => {
  const results = await Promise.all(CASES.map(([name, args]) => bench(name, args)));
  CASES.forEach(([name, args, line], i) => {
    const r = results[i]!;
    t.equal(r.code, 2, `${name} ${args.join(' ')}: exit 2`);
    t.equal(r.stdout, '', `${name} ${args.join(' ')}: nothing on stdout`);
    t.match(r.stderr, /^[^\n]*\n$/, `${name} ${args.join(' ')}: one line`);
    t.match(r.stderr.trim(), line, `${name} ${args.join(' ')}: names the problem`);
  });
});

t.test("the serving bench's cold phase starts its server with no cache (--cache-max-bytes 0): accepted, and it serves", async (t) => {
  const dir = tmpDir('vis-bench-server-');
  const child = spawnBench('server', ['service', '--db', path.join(dir, 'b.db'), '--cache-max-bytes', '0'], ['ignore', 'ignore', 'pipe', 'ipc']);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<number>((resolve) => child.on('message', (m: { type: string; port: number }) => m.type === 'ready' && resolve(m.port)));
  const port = await Promise.race([ready, exited.then(() => null)]);
  t.not(port, null, `ready, not exited (stderr: ${stderr.trim()})`);
  if (port === null) return;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v1/public/projects`);
    t.equal(res.status, 401, 'answers a request (no key: 401)');
  } finally {
    child.kill('SIGTERM'); // whatever happened: a server left running would keep this test open
  }
  t.equal(await exited, 0, 'stops on SIGTERM');
});
