// Python from the project's venv (scripts/python-env.sh: pinned packages, pyarrow, pytest, ruff and
// mypy among them): the Python client's tests, and the independent reader that checks our Parquet.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './paths';

export interface PythonRun { code: number | null; stdout: string; stderr: string }

/**
 * Runs `scripts/python-env.sh ARGS` (a tool of the venv: python, pytest, ruff, mypy; or --install) in
 * `cwd`, `input` on its stdin; killed after `ms`, which rejects.
 */
export function pythonEnv(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; ms?: number; input?: string } = {}): Promise<PythonRun> {
  const ms = opts.ms ?? 300_000;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path.join(ROOT, 'scripts', 'python-env.sh'), ...args], {
      cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`scripts/python-env.sh ${args.join(' ')} still running after ${ms / 1000} s:\n${stdout}${stderr}`));
    }, ms);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs `python ARGS` in the venv with `input` as JSON on stdin; resolves with its stdout parsed as JSON. */
export async function pythonJson<T>(args: string[], input: unknown = null, ms = 300_000): Promise<T> {
  const r = await pythonEnv(['python', ...args], { input: JSON.stringify(input), ms });
  if (r.code !== 0) throw new Error(`python ${args.join(' ')} exited ${r.code}: ${r.stderr.trim().slice(-2000)}`);
  try {
    return JSON.parse(r.stdout) as T;
  } catch (e) {
    throw new Error(`python ${args.join(' ')} printed no JSON (${(e as Error).message}): ${r.stdout.slice(0, 500)}`);
  }
}
