// Where a measured child's threads spent its wall time, from what bench/lib/thread-probe.ts wrote while
// it ran: per role (writer, preparer, main) the CPU, the run-queue wait (ready, no core free: the host
// is busy) and the event loop's idle time (waiting for the other thread's message, or for I/O);
// V8's platform threads and libuv's (garbage collection, compiling, file reads) as "other", CPU only.
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../src/lib/root';
import type { ProbedThread } from './thread-probe';

export interface RoleTimes { threads: number; cpuMs: number; runQueueMs: number; loopIdleMs: number }

export interface ThreadTimes {
  /** writer, preparer, main (and worker: a thread of no known part). */
  roles: Map<string, RoleTimes>;
  /** Every thread not running JavaScript: CPU and run-queue only. */
  other: RoleTimes;
}

/** The probe's directory to pass a child (BENCH_THREAD_DIR), and its node options. */
export function probeEnv(dir: string): NodeJS.ProcessEnv {
  const probe = path.join(packageRoot(), 'dist', 'bench', 'lib', 'thread-probe.js'); // compiled: the child is plain node
  return { ...process.env, BENCH_THREAD_DIR: dir, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(probe)}`.trim() };
}

export function readThreadTimes(dir: string): ThreadTimes {
  const probed = fs.readdirSync(dir).filter((f) => /^\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as ProbedThread);
  const roles = new Map<string, RoleTimes>();
  for (const t of probed) {
    const r = roles.get(t.role) ?? { threads: 0, cpuMs: 0, runQueueMs: 0, loopIdleMs: 0 };
    roles.set(t.role, { threads: r.threads + 1, cpuMs: r.cpuMs + t.cpuMs, runQueueMs: r.runQueueMs + t.runQueueMs, loopIdleMs: r.loopIdleMs + t.loopIdleMs });
  }
  const js = new Set(probed.map((t) => t.tid));
  const alive = JSON.parse(fs.readFileSync(path.join(dir, 'threads.json'), 'utf8')) as Array<{ tid: number; cpuMs: number; runQueueMs: number }>;
  const other: RoleTimes = { threads: 0, cpuMs: 0, runQueueMs: 0, loopIdleMs: 0 };
  for (const t of alive.filter((a) => !js.has(a.tid))) {
    other.threads += 1;
    other.cpuMs += t.cpuMs;
    other.runQueueMs += t.runQueueMs;
  }
  return { roles, other };
}
