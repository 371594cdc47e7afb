// Pieces several benches share.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEMO_OPTIONS, generateWorld, type WorldOptions } from '../../fixtures/world';
import { packageRoot } from '../../src/lib/root';

/** The CLI a user runs (bin/visibility-api.js, on the compiled dist/). */
export const CLI = path.join(packageRoot(), 'bin', 'visibility-api.js');

/** The build benches' world (and the export bench's): 2 accounts with 1 project each, 5 engines, 15 prompts, 1 run per prompt and engine a day. */
export function buildsWorldOptions(days: number): WorldOptions {
  return {
    ...DEMO_OPTIONS, seed: 365, accounts: 2, projectsPerAccount: 1, sharedProjects: 0, engines: 5, enginesPerProject: 5,
    promptsPerProject: 15, runsPerPromptPerDay: 1, days,
  };
}

/** VmHWM of a live process in kB, or null once it has exited (a zombie has no memory lines). */
export function highWaterKb(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Runs the CLI as a child; resolves with its stdout, wall seconds and the largest VmHWM seen (polled every 50 ms). */
export function runCliMeasured(args: string[], env?: NodeJS.ProcessEnv): Promise<{ stdout: string; seconds: number; peakKb: number }> {
  return runNodeMeasured(CLI, args, env);
}

/** runCliMeasured for any node script: `node SCRIPT ARGS...`, measured from spawn to exit. */
export function runNodeMeasured(script: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ stdout: string; seconds: number; peakKb: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    let stdout = '';
    let stderr = '';
    let peakKb = 0;
    child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
    const poll = (): void => { peakKb = Math.max(peakKb, highWaterKb(child.pid!) ?? 0); };
    const timer = setInterval(poll, 50);
    child.once('error', (e) => { clearInterval(timer); reject(e); });
    child.once('exit', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      clearInterval(timer);
      if (code !== 0) reject(new Error(`${script === CLI ? 'visibility-api' : path.basename(script)} ${args[0] ?? ''} exited ${code ?? signal}: ${stderr.trim() || stdout.trim()}`));
      else resolve({ stdout, seconds, peakKb });
    });
  });
}

/** A port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The middle value (the upper one of an even count): what the A/B benches compare across rounds. */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Writes a generated world as NDJSON, once: same options, same bytes; kept (bench/out is gitignored). */
export async function writeLog(file: string, opts: WorldOptions): Promise<void> {
  if (fs.existsSync(file)) return;
  const tmp = `${file}.tmp`;
  const out = fs.createWriteStream(tmp);
  for (const line of generateWorld(opts)) if (!out.write(line + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((resolve, reject) => out.end(() => resolve()).once('error', reject));
  fs.renameSync(tmp, file);
}

type Data = Record<string, unknown>;

/** One project's latest generated run group: what a live stream replays under new ids, dated now. */
export interface GroupTemplate { project_id: string; started: Data; runs: Data[]; completed: Data }

/**
 * Each project's latest complete run group, followed line by line as a log is generated (the
 * generator emits a group's events in order). Only run-group lines are parsed: the type is near
 * the start of every line.
 */
export class LatestGroups {
  readonly latest = new Map<string, GroupTemplate>();
  private readonly building = new Map<string, GroupTemplate>();

  observe(line: string): void {
    const head = line.slice(0, 120);
    if (!head.includes('"type":"run_group.') && !head.includes('"type":"prompt_run.completed"')) return;
    const e = JSON.parse(line) as { type: string; data: Data };
    const project = e.data.project_id as string;
    if (e.type === 'run_group.started') this.building.set(project, { project_id: project, started: e.data, runs: [], completed: {} });
    else if (e.type === 'prompt_run.completed') this.building.get(project)?.runs.push(e.data);
    else {
      const g = this.building.get(project);
      if (g) this.latest.set(project, { ...g, completed: e.data });
    }
  }
}

/** Runs a bench's main, then its cleanup (the processes and broker it started) whether it failed or not, and exits 0 or 1. */
export function runBench(main: () => Promise<void>, cleanup: () => Promise<void>): void {
  main().then(
    async () => {
      await cleanup();
      process.exit(0);
    },
    async (e: unknown) => {
      console.error(e);
      await cleanup();
      process.exit(1);
    },
  );
}
