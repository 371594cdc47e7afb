// The image, as far as it can be checked without a Docker engine: the final stage runs as a
// non-root user on a maintained Node LTS, node itself is the entrypoint (so docker stop's SIGTERM
// reaches the graceful stop), and the HEALTHCHECK command, run here exactly as written, passes
// against a running service and fails against a stopped one.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { start } from '../../src/index';
import { openDb, Projector } from '../../src/store';
import { asSource, world } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { silentLogger } from '../../src/lib/log';
import { request } from '../helpers/http';
import { runCli, startServe } from '../helpers/processes';
import { ROOT } from '../helpers/paths';

interface Instruction { op: string; args: string }

/** Dockerfile instructions of the final stage, with line continuations joined and comments dropped. */
function finalStage(text: string): Instruction[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const all = lines.map((l) => {
    const m = /^(\S+)\s+(.*)$/.exec(l)!;
    return { op: m[1]!.toUpperCase(), args: m[2]!.trim() };
  });
  const from = all.map((i) => i.op).lastIndexOf('FROM');
  return all.slice(from);
}

const stage = finalStage(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
const one = (op: string): string => {
  const found = stage.filter((i) => i.op === op);
  if (found.length !== 1) throw new Error(`expected one ${op} in the final stage, found ${found.length}`);
  return found[0]!.args;
};

t.test('the final stage: a maintained Node LTS, a non-root user, node as the entrypoint', async (t) => {
  const base = /^node:(\d+)(?:\.\d+)*-/.exec(one('FROM'));
  t.ok(base, `FROM an official node image (${one('FROM')})`);
  // Node 20 left support in April 2026; 22 and 24 are maintained LTS lines.
  t.ok(Number(base?.[1]) >= 22 && Number(base?.[1]) % 2 === 0, `an even (LTS) major of 22 or later (${base?.[1]})`);
  const user = one('USER');
  t.notMatch(user, /^(root|0)(:|$)/, `runs as ${user}, not root`);
  const userAt = stage.findIndex((i) => i.op === 'USER');
  t.ok(stage.slice(userAt).every((i) => i.op !== 'RUN'), 'nothing runs as root after USER');
  const entry = JSON.parse(one('ENTRYPOINT')) as string[];
  t.equal(entry[0], 'node', 'exec form with node first: node is PID 1 and gets SIGTERM itself');
  t.notMatch(one('STOPSIGNAL'), /KILL/, 'stops with a signal the service handles');
});

/** A database file of the test world in a folder of its own, removed when the test ends. */
function worldDb(t: Test, prefix: string): string {
  const dir = tmpDir(prefix);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'c.db');
  const db = openDb(file);
  new Projector(db).applyBatch(asSource(world()));
  db.close();
  return file;
}

t.test('the HEALTHCHECK command, run as written: 0 while the service is up, 1 once it is stopped', async (t) => {
  const m = /^(?:--\S+\s+)*CMD\s+(\[.*\])$/.exec(one('HEALTHCHECK'));
  t.ok(m, 'HEALTHCHECK CMD in exec form');
  const argv = JSON.parse(m![1]!) as string[];
  t.match(argv.join(' '), /\/livez/, 'probes /livez');
  const file = worldDb(t, 'container-');
  const running = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', logger: silentLogger });
  // Asynchronous: the service answers from this very process.
  const probe = (): Promise<number | null> => new Promise((resolve) => {
    const child = spawn(argv[0] === 'node' ? process.execPath : argv[0]!, argv.slice(1), { env: { ...process.env, OPS_PORT: String(running.opsPort) }, timeout: 10_000 });
    child.on('exit', (code) => resolve(code));
  });
  t.equal(await probe(), 0, 'healthy while serving');
  await running.close();
  t.equal(await probe(), 1, 'unhealthy once stopped');
});

// The image listens on every interface for the ops port too: it must not start without a token, and
// must start with one; compose asks the operator for it and writes none itself.
t.test('the image\'s environment: serve refuses to start without OPS_TOKEN and starts with one; compose sets none', async (t) => {
  const env: NodeJS.ProcessEnv = {};
  for (const m of one('ENV').matchAll(/(\w+)=(\S+)/g)) env[m[1]!] = m[2]!;
  t.equal(env.OPS_HOST, '0.0.0.0', 'the image binds the ops port beyond loopback');
  const file = worldDb(t, 'container-env-');
  const refused = await runCli(['serve', '--db', file, '--port', '0', '--ops-port', '0'], env);
  t.equal(refused.code, 2, 'without a token: exit 2');
  t.match(refused.stderr, /set OPS_TOKEN/);
  const token = 'a-token-of-the-operators-own-0123';
  const s = await startServe(['--db', file], { ...env, OPS_TOKEN: token });
  t.teardown(() => void (s.child.exitCode === null && s.child.kill('SIGKILL')));
  t.match(s.stdout(), /ops on 0\.0\.0\.0:\d+/, 'with a token it starts, the ops port on every interface');
  t.equal((await request(`${s.ops}/livez`)).status, 200, '/livez needs no token (the HEALTHCHECK)');
  t.equal((await request(`${s.ops}/snapshot`, { method: 'HEAD' })).status, 401, '/snapshot does');
  s.child.kill('SIGTERM');
  t.equal((await s.exited).code, 0);

  const compose = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
  t.match(compose, /^\s+OPS_TOKEN: \$\{OPS_TOKEN:\?[^}]+\}$/m, 'compose takes OPS_TOKEN from the operator\'s environment, and stops without it');
});

/** The instructions of the first stage (the build), with line continuations joined and comments dropped. */
function buildStage(text: string): Instruction[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const all = lines.map((l) => {
    const m = /^(\S+)\s+(.*)$/.exec(l)!;
    return { op: m[1]!.toUpperCase(), args: m[2]!.trim() };
  });
  return all.slice(0, all.map((i) => i.op).lastIndexOf('FROM'));
}

// What the image's build sees is only what its COPY lines bring in: a directory the build reads and
// the Dockerfile forgets fails `docker build` (web/ and clients/ once did). Without a Docker engine,
// the same context is made here from the tracked files those lines name, and the build runs in it.
t.test('the build stage copies everything `npm run build` reads', async (t) => {
  const dir = tmpDir('docker-context-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const copies = buildStage(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')).filter((i) => i.op === 'COPY' && !i.args.startsWith('--'));
  t.ok(copies.length > 0, 'the build stage copies the sources');
  for (const c of copies) {
    const parts = c.args.split(/\s+/);
    const dest = parts.pop()!;
    for (const src of parts) {
      const tracked = execFileSync('git', ['ls-files', '-z', '--', src], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter((f) => f !== '');
      for (const file of tracked) {
        // "COPY a b ./" keeps the names; "COPY src src" puts src's files under src.
        const target = dest.endsWith('/') ? path.join(dir, dest, file) : path.join(dir, dest, path.relative(src, file));
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.copyFileSync(path.join(ROOT, file), target);
      }
    }
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const build = spawnSync('npm', ['run', 'build'], { cwd: dir, encoding: 'utf8', timeout: 300_000 });
  t.equal(build.status, 0, `npm run build in the image's build context: ${(build.stdout + build.stderr).slice(-3000)}`);
  t.ok(fs.existsSync(path.join(dir, 'dist', 'src', 'cli', 'main.js')), 'the CLI is built');
  t.ok(fs.existsSync(path.join(dir, 'dist', 'web')), 'the pages are built');
});
