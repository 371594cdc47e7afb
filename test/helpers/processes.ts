// `visibility-api serve` in a child process, as users run it (from the TypeScript sources, through tsx).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { ROOT } from './paths';
import { sleep } from './wait';

/**
 * The CLI as bin/visibility-api.js runs it, from the sources (node -e, cwd ROOT): a rejected command
 * prints `visibility-api: MESSAGE`. CLI_STACK prints the stack instead, for tests that hold a
 * failure to one line: an error the CLI did not turn into its own line then fails them.
 */
export const CLI = "require('./src/cli/main').main(process.argv.slice(1)).then((c) => process.exit(c), " +
  "(e) => { console.error('visibility-api: ' + (e && e.message ? e.message : String(e))); process.exit(1); })";
export const CLI_STACK = "require('./src/cli/main').main(process.argv.slice(1)).then((c) => process.exit(c), " +
  "(e) => { console.error('visibility-api: ' + (e && e.stack ? e.stack : String(e))); process.exit(1); })";

/** The arguments of node for `visibility-api ARGS...` from the sources. */
export function cliArgv(args: string[], script = CLI): string[] {
  return ['--import', 'tsx', '-e', script, ...args];
}

export interface SyncExit { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Runs the CLI with `args` and waits for it (SIGKILLed after `timeout` ms); the flags' environment twins do not leak in. */
export function runCliSync(args: string[], opts: { env?: NodeJS.ProcessEnv; timeout?: number; script?: string } = {}): SyncExit {
  const r = spawnSync(process.execPath, cliArgv(args, opts.script), { cwd: ROOT, env: { ...cleanEnv(), ...opts.env }, encoding: 'utf8', timeout: opts.timeout ?? 60_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

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
  const child = spawn(process.execPath, cliArgv(args), { cwd: ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, ms);
}

/** This process's environment without the flags' environment twins, which must not leak in from the test's. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  // The flags' environment twins must not leak in from the test's environment.
  for (const k of ['VISIBILITY_DB', 'PORT', 'OPS_PORT', 'HOST', 'OPS_HOST', 'KAFKA_BROKERS', 'BUILD_THREADS', 'RATE_LIMIT', 'LOG_LEVEL', 'LOG_FORMAT', 'LOG_HIT_SAMPLE', 'CURSOR_SECRET', 'BATCH_SIZE', 'VISIBILITY_MAX_PAGE_COUNT', 'EXPORT_OUT', 'EXPORT_PROJECTS']) delete env[k];
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
  const child = spawn(process.execPath, cliArgv(['serve', '--port', '0', '--ops-port', '0', '--host', '127.0.0.1', ...args]),
    { cwd: ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = collect(child, ms);
  exited.catch(() => undefined);
  return { child, exited };
}

/** A port the OS says is free at the moment of asking (another process may take it before the caller binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    }).on('error', reject);
  });
}

/**
 * `serve ARGS... --port P --ops-port O` on ports picked free beforehand, for a test that must know
 * them before serve can say (at LOG_LEVEL=warn no listening line is written; while it bootstraps it
 * has not listened yet). Resolves once `started(ports)` holds, polled every 50 ms. A port picked free
 * can be taken by another test file's process before serve binds it: serve then exits 2 with
 * "cannot listen on ...: EADDRINUSE", and it is started again on new ports (3 tries). Any other exit
 * before `started` rejects with what it wrote.
 */
export async function spawnServeOnFreePorts(args: string[], env: NodeJS.ProcessEnv, started: (ports: { port: number; opsPort: number }) => Promise<boolean>,
  ms = 120_000): Promise<ReturnType<typeof spawnServe> & { port: number; opsPort: number }> {
  return onFreePorts(2, async ([port, opsPort]) => {
    const ports = { port: port!, opsPort: opsPort! };
    const s = spawnServe([...args, '--port', String(ports.port), '--ops-port', String(ports.opsPort)], env, ms);
    let exited = false;
    s.exited.then(() => (exited = true), () => (exited = true));
    while (!exited && !(await started(ports).catch(() => false))) await sleep(50);
    if (!exited) return { ...s, ...ports };
    const e = await s.exited.catch((err: Error) => ({ code: null, stdout: '', stderr: err.message }));
    if (/EADDRINUSE/.test(e.stderr)) return TAKEN;
    throw new Error(`serve exited (${e.code}) before it started:\n${e.stdout}${e.stderr}`);
  });
}

/** What a launch of onFreePorts answers when one of its ports was taken before it could bind it. */
export const TAKEN = Symbol('a port was taken');

/**
 * Runs `launch` on `count` ports picked free just before; again on fresh ones (3 tries in all) while
 * it answers TAKEN: another test's process may bind a port between the pick and the launch.
 */
export async function onFreePorts<T>(count: number, launch: (ports: number[]) => Promise<T | typeof TAKEN>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePort());
    const r = await launch(ports);
    if (r !== TAKEN) return r;
    if (attempt >= 3) throw new Error(`a port picked free was taken before it was bound, ${attempt} times in a row`);
  }
}

/**
 * `serve --db FILE --port 0 --ops-port 0 ARGS...`; resolves once it prints where it listens.
 * The child is SIGKILLed when `ms` pass (a test that forgot it cannot hang the suite). The default
 * is tap's own per-file timeout: a long test on a loaded machine (the sharded fleet's takes 2-3
 * minutes there) must not lose its services halfway, which showed only as ECONNREFUSED.
 */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = {}, ms = 600_000): Promise<ServeProcess> {
  const { child, exited } = spawnServe(args, env, ms);
  const listening = await new Promise<RegExpExecArray>((resolve, reject) => {
    const poll = setInterval(() => {
      const m = /listening on \S+ \((http:\/\/[^ )]+)\); ops on \S+ \((http:\/\/[^ )]+)\)/.exec(exited.out());
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
