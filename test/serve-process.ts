// `visibility-api serve` in a child process, as users run it (from the TypeScript sources, through tsx).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const CLI = "require('./src/cli/main').main(process.argv.slice(1)).then((c) => process.exit(c), " +
  "(e) => { console.error('visibility-api: ' + (e && e.message ? e.message : String(e))); process.exit(1); })";

export interface Exit { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export interface ServeProcess {
  child: ChildProcess;
  /** http://127.0.0.1:PORT/v1/public */
  base: string;
  ops: string;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
}

/** Runs the CLI with `args`; resolves when it exits (within `ms`, else it is killed and the promise rejects). */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, ms = 60_000): Promise<Exit> {
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', CLI, ...args], { cwd: ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, ms);
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  // The flags' environment twins must not leak in from the test's environment.
  for (const k of ['VISIBILITY_DB', 'PORT', 'OPS_PORT', 'HOST', 'OPS_HOST', 'KAFKA_BROKERS', 'BUILD_THREADS', 'RATE_LIMIT', 'LOG_LEVEL', 'LOG_FORMAT', 'LOG_HIT_SAMPLE']) delete env[k];
  return env;
}

function collect(child: ChildProcess, ms: number): Promise<Exit> & { out: () => string; err: () => string } {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Exit>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after ${ms / 1000} s\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, ms);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      // stdio may still hold the last lines: wait for the streams to end.
      let open = 2;
      const end = (): void => {
        if (--open === 0) resolve({ code, signal, stdout, stderr });
      };
      if (child.stdout!.readableEnded) end();
      else child.stdout!.once('end', end);
      if (child.stderr!.readableEnded) end();
      else child.stderr!.once('end', end);
    });
  });
  return Object.assign(done, { out: () => stdout, err: () => stderr });
}

/** `serve --port 0 --ops-port 0 --host 127.0.0.1 ARGS...` (later flags win), not waiting for anything. */
export function spawnServe(args: string[], env: NodeJS.ProcessEnv = {}, ms = 120_000): { child: ChildProcess; exited: ReturnType<typeof collect> } {
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', CLI, 'serve', '--port', '0', '--ops-port', '0', '--host', '127.0.0.1', ...args],
    { cwd: ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = collect(child, ms);
  exited.catch(() => undefined);
  return { child, exited };
}

/**
 * `serve --db FILE --port 0 --ops-port 0 ARGS...`; resolves once it prints where it listens.
 * The child is SIGKILLed when `ms` pass (a test that forgot it cannot hang the suite).
 */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = {}, ms = 120_000): Promise<ServeProcess> {
  const { child, exited } = spawnServe(args, env, ms);
  const listening = await new Promise<RegExpExecArray>((resolve, reject) => {
    const poll = setInterval(() => {
      const m = /listening on (http:\/\/[^ ]+) \(ops on (http:\/\/[^ )]+)\)/.exec(exited.out());
      if (m) {
        clearInterval(poll);
        resolve(m);
      }
    }, 20);
    exited.then((e) => {
      clearInterval(poll);
      reject(new Error(`serve exited (${e.code ?? e.signal}) before listening:\n${e.stdout}${e.stderr}`));
    }, reject);
  });
  return { child, base: listening[1]!, ops: listening[2]!, stdout: exited.out, stderr: exited.err, exited };
}
