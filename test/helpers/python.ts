// Python from the project's venv (scripts/python-env.sh: pinned packages, pyarrow among them), for
// tests that check our output with an independent reader.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './paths';

/** Runs `python ARGS` in the venv with `input` as JSON on stdin; resolves with its stdout parsed as JSON. */
export function pythonJson<T>(args: string[], input: unknown, ms = 300_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path.join(ROOT, 'scripts', 'python-env.sh'), 'python', ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`python ${args.join(' ')} exited ${code}: ${stderr.trim().slice(-2000)}`));
      try {
        resolve(JSON.parse(stdout) as T);
      } catch (e) {
        reject(new Error(`python ${args.join(' ')} printed no JSON (${(e as Error).message}): ${stdout.slice(0, 500)}`));
      }
    });
    child.stdin.end(JSON.stringify(input));
  });
}
