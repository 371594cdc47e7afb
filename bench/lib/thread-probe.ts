// Loaded into every JavaScript thread of a measured child (NODE_OPTIONS=--require, which threads
// inherit) when BENCH_THREAD_DIR is set: where each thread's time goes, for bench/lib/thread-times.ts.
// Each thread writes <tid>.json there at start, every 100 ms and at its exit (a thread that is
// terminated misses its last < 100 ms): its role (told by its start data), its CPU and run-queue
// times (/proc/thread-self/schedstat: on a core, and ready with no core free), and its event
// loop's idle time (performance.eventLoopUtilization: waiting for a message or for I/O, i.e. for
// the other thread). The main thread, at its exit, also writes every thread still alive (V8's
// platform threads, libuv's) to threads.json.
// `workerData` is read through the module object: this file runs in every thread, it is no thread pair.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import threads from 'node:worker_threads';

/** One thread's times (ms), as the probe last wrote them. */
export interface ProbedThread { tid: number; role: string; cpuMs: number; runQueueMs: number; loopIdleMs: number; loopActiveMs: number }

/** On-CPU and run-queue ms of a thread (/proc/.../schedstat: ns on a core, ns waiting on a run queue, slices). */
export function schedstat(file: string): { cpuMs: number; runQueueMs: number } {
  const [cpu, queue] = fs.readFileSync(file, 'utf8').trim().split(' ').map(Number);
  return { cpuMs: cpu! / 1e6, runQueueMs: queue! / 1e6 };
}

/** The thread's part, from its start data: replay's writer (ReplayJob), replay's file thread (FileJob), the floor's preparer (FloorJob). */
function roleOf(data: unknown): string {
  if (threads.isMainThread) return 'main';
  const has = (key: string): boolean => typeof data === 'object' && data !== null && key in data;
  if (has('dbFile')) return 'writer';
  if (has('source') || has('perTransaction')) return 'preparer';
  return 'worker';
}

function probe(dir: string): void {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  const role = roleOf(threads.workerData);
  const write = (): void => {
    const elu = performance.eventLoopUtilization();
    const t: ProbedThread = { tid, role, ...schedstat('/proc/thread-self/schedstat'), loopIdleMs: elu.idle, loopActiveMs: elu.active };
    fs.writeFileSync(path.join(dir, `${tid}.json`), JSON.stringify(t));
  };
  write();
  setInterval(write, 100).unref();
  process.on('exit', () => {
    write();
    if (!threads.isMainThread) return;
    const alive: Array<{ tid: number; cpuMs: number; runQueueMs: number }> = [];
    for (const t of fs.readdirSync('/proc/self/task')) {
      try {
        alive.push({ tid: Number(t), ...schedstat(`/proc/self/task/${t}/schedstat`) });
      } catch {
        // ended between the listing and the read
      }
    }
    fs.writeFileSync(path.join(dir, 'threads.json'), JSON.stringify(alive));
  });
}

const dir = process.env.BENCH_THREAD_DIR;
if (dir) probe(dir);
