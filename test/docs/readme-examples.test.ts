// Every shell example of the README (and of docs/ where it can run here) run as written, against a
// live `serve --demo` on a free port (the examples' http://127.0.0.1:8080 is rewritten to it): each
// block exits 0, every curl in it answers 2xx with data (not an empty list, not a range without
// runs), and nothing is written into the checkout. The blocks that cannot run here are listed below,
// each with why, and each entry must still name a block (so the list cannot rot).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';
import { cleanEnv, startServe } from '../helpers/processes';

interface Block { file: string; line: number; text: string }

const FILES = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** The fenced shell blocks (```sh, bash, shell) of a markdown file. */
function shellBlocks(file: string): Block[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  let open: { line: number; text: string[] } | null = null;
  lines.forEach((l, i) => {
    if (open === null && /^```(sh|bash|shell)\s*$/.test(l)) open = { line: i + 1, text: [] };
    else if (open !== null && /^```/.test(l)) {
      blocks.push({ file, line: open.line, text: open.text.join('\n') });
      open = null;
    } else if (open !== null) open.text.push(l);
  });
  return blocks;
}

/** The blocks not run, by file and first line, and why. */
const NOT_RUN: Array<{ file: string; first: RegExp; why: string }> = [
  { file: 'README.md', first: /^npm ci\b/, why: 'the quick start itself: this test serves the demo as `npm start` does, and `npm test` runs this test' },
  { file: 'README.md', first: /^pip install \.\/clients\/python/, why: "installs into the user's Python; test/clients/python-client.test.ts runs the client from the pinned venv" },
  { file: 'docs/export.md', first: /^visibility-api export --db data\//, why: "an operator's paths and project ids; the README's Parquet example runs the same commands" },
  { file: 'docs/kafka-dev.md', first: /^npm run kafka:start/, why: 'starts a Kafka broker on 9092 (the Kafka tests start their own on free ports)' },
  { file: 'docs/kafka-dev.md', first: /^scripts\/kafka-topics\.sh/, why: 'needs the broker on 9092' },
  { file: 'docs/kafka-dev.md', first: /^CP=/, why: 'needs the broker on 9092' },
  { file: 'docs/kafka.md', first: /^KAFKA_BROKERS=/, why: 'needs a Kafka broker' },
  { file: 'docs/mutation-run.md', first: /^npm run mutate/, why: 'about 15 minutes of mutation runs' },
  { file: 'docs/operations.md', first: /^SHARD=/, why: 'a sharded fleet: Kafka and a peer replica' },
];

// Every curl's headers and body are kept (CURL_LOG) for the checks; a curl cut by its own -m/--max-time
// after a 2xx (a stream: the change feed) counts as answered.
const PREAMBLE = `set -euo pipefail
curl() {
  local f rc=0
  f=$(mktemp "$CURL_LOG/curl.XXXXXX")
  command curl -D "$f.h" -o "$f.b" "$@" || rc=$?
  cat "$f.b"
  if [ "$rc" -eq 28 ] && [ -s "$f.b" ]; then rc=0; fi
  return "$rc"
}
`;

interface Answer { status: number; type: string; body: string; where: string }

/** The last response of each curl the block ran (a curl follows no redirects here). */
function answers(dir: string): Answer[] {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.h')).map((f) => {
    const head = fs.readFileSync(path.join(dir, f), 'utf8');
    const status = [...head.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].map((m) => Number(m[1])).at(-1) ?? 0;
    const type = /^content-type: *([^\r\n;]+)/im.exec(head)?.[1] ?? '';
    const bodyFile = path.join(dir, f.replace(/\.h$/, '.b'));
    return { status, type, body: fs.existsSync(bodyFile) ? fs.readFileSync(bodyFile, 'utf8') : '', where: head.split('\n')[0]!.trim() };
  });
}

/** Why a JSON body is not data (an empty list, a range with no runs or slices, every change null), or null. */
function emptiness(body: unknown): string | null {
  if (Array.isArray(body)) return body.length === 0 ? 'an empty list' : null;
  if (body === null || typeof body !== 'object') return null;
  const o = body as Record<string, unknown>;
  if (o.slices_tested === 0) return 'no slice tested (a range outside the data)';
  if (o.run_count === 0) return 'no runs in the range';
  const changes = Object.keys(o).filter((k) => k.endsWith('_change'));
  if (changes.length > 0 && changes.every((k) => o[k] === null)) return 'every change null (a previous period outside the data)';
  return null;
}

function run(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    // A group of its own: an example that does not end (a server) is killed with everything it started.
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => {
      out += '\n(killed: still running after 180 s)';
      process.kill(-child.pid!, 'SIGKILL');
    }, 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

t.test('the README and docs examples run as written against serve --demo', async (t) => {
  const blocks = FILES.flatMap(shellBlocks);
  t.ok(blocks.filter((b) => b.file === 'README.md').length >= 5, 'the README has its examples');
  for (const skip of NOT_RUN) {
    t.equal(blocks.filter((b) => b.file === skip.file && skip.first.test(b.text)).length, 1, `${skip.file}: one block starts like ${skip.first} (not run: ${skip.why})`);
  }
  const toRun = blocks.filter((b) => !NOT_RUN.some((s) => s.file === b.file && s.first.test(b.text)));

  const srv = await startServe(['--demo', '--host', '127.0.0.1'], {}, 900_000);
  t.teardown(() => {
    srv.child.kill('SIGTERM');
    return srv.exited.then(() => undefined, () => undefined);
  });
  const origin = new URL(srv.base).origin;
  const before = new Set(fs.readdirSync(ROOT));

  for (const b of toRun) {
    await t.test(`${b.file}:${b.line}`, async (tt) => {
      const work = tmpDir('examples-');
      const log = path.join(work, 'curl');
      fs.mkdirSync(log);
      const text = b.text.replaceAll('http://127.0.0.1:8080', origin);
      tt.notMatch(text, /:8080\b/, 'every URL of the example is the live one');
      // TMPDIR: the example's mktemp lands in this test's folder. npx must not fetch a package of that name from the registry.
      const env = { ...cleanEnv(), TMPDIR: work, CURL_LOG: log, npm_config_offline: 'true', npm_config_update_notifier: 'false' };
      const r = await run(PREAMBLE + text, env);
      tt.equal(r.code, 0, r.code === 0 ? 'exits 0' : `exits 0; it printed:\n${r.out.slice(-3000)}`);
      const got = answers(log);
      for (const a of got) {
        tt.ok(a.status >= 200 && a.status < 300, `${a.where}: 2xx (${a.status})`);
        if (a.type === 'application/json') {
          let parsed: unknown;
          try {
            parsed = JSON.parse(a.body);
          } catch {
            continue; // headers included (curl -i): the status says enough
          }
          tt.equal(emptiness(parsed), null, `${a.where}: data, not an empty answer`);
        }
      }
      if (/\bcurl\b/.test(b.text)) tt.ok(got.length > 0, 'its curls ran');
    });
  }
  const added = fs.readdirSync(ROOT).filter((f) => !before.has(f));
  t.strictSame(added, [], 'nothing written into the checkout');
});
