// Where the host's CPU goes during a bench phase (Linux /proc): the whole machine, the service's
// threads grouped by role, the broker, and the bench process itself (producer, read load, probes).
// Cores used = CPU seconds / wall seconds, from two snapshots taken at the phase's start and end.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD_NICE, INGEST_NICE } from '../../src/lib/worker';

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux builds for x86 and arm). */
const TICKS = 100;

interface Thread { tid: number; ticks: number; nice: number }

export interface CpuSnapshot {
  at: number;
  machine: { busy: number; total: number };
  service: Thread[];
  brokerTicks: number | null;
  bench: NodeJS.CpuUsage;
}

/** Cores used over a phase, by who used them. */
export interface CpuShare {
  cores: number;
  machineBusy: number;
  serving: number;
  ingest: number;
  /** The build threads (at BUILD_NICE). */
  build: number;
  otherService: number;
  broker: number | null;
  bench: number;
  rest: number;
}

/** /proc/stat's first line: busy and total ticks of every core. */
function machineTicks(): { busy: number; total: number } {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3]! - fields[4]!, total }; // idle and iowait are not busy
}

/** The fields after the command name of a /proc stat file (the name may hold spaces and parentheses). */
function statFields(file: string): string[] {
  const stat = fs.readFileSync(file, 'utf8');
  return stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
}

/** utime + stime and the nice value of each thread of `pid` (fields 14, 15 and 19 of stat). */
function threads(pid: number): Thread[] {
  const out: Thread[] = [];
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const f = statFields(`/proc/${pid}/task/${tid}/stat`);
      out.push({ tid: Number(tid), ticks: Number(f[11]) + Number(f[12]), nice: Number(f[16]) });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** The local broker's pid, from the pid file kafka-start.sh writes (null: none running here). */
export function localBrokerPid(root: string): number | null {
  const dir = process.env.KAFKA_RUN_DIR ?? path.join(root, 'kafka', 'run');
  try {
    const pid = Number(fs.readFileSync(path.join(dir, 'kafka.pid'), 'utf8').trim());
    return Number.isSafeInteger(pid) && fs.existsSync(`/proc/${pid}`) ? pid : null;
  } catch {
    return null;
  }
}

function processTicks(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const f = statFields(`/proc/${pid}/stat`);
    return Number(f[11]) + Number(f[12]);
  } catch {
    return null;
  }
}

export function cpuSnapshot(servicePid: number, brokerPid: number | null): CpuSnapshot {
  return { at: performance.now(), machine: machineTicks(), service: threads(servicePid), brokerTicks: processTicks(brokerPid), bench: process.cpuUsage() };
}

/**
 * Cores used between two snapshots. The service's threads: the serving thread (the process's main
 * thread), the ingest threads (at INGEST_NICE: the Kafka thread and its precompute thread), the build
 * threads (at BUILD_NICE), and the rest (V8's and libuv's). A thread that started in between counts from 0.
 */
export function cpuShare(a: CpuSnapshot, b: CpuSnapshot, servicePid: number): CpuShare {
  const seconds = (b.at - a.at) / 1000;
  const cores = (ticks: number): number => ticks / TICKS / seconds;
  const before = new Map(a.service.map((t) => [t.tid, t.ticks]));
  let serving = 0;
  let ingest = 0;
  let build = 0;
  let otherService = 0;
  for (const t of b.service) {
    const used = t.ticks - (before.get(t.tid) ?? 0);
    if (t.tid === servicePid) serving += used;
    else if (t.nice === INGEST_NICE) ingest += used;
    else if (t.nice === BUILD_NICE) build += used;
    else otherService += used;
  }
  const broker = a.brokerTicks === null || b.brokerTicks === null ? null : cores(b.brokerTicks - a.brokerTicks);
  const bench = (b.bench.user - a.bench.user + b.bench.system - a.bench.system) / 1e6 / seconds;
  const machineBusy = ((b.machine.busy - a.machine.busy) / (b.machine.total - a.machine.total)) * os.cpus().length;
  const known = cores(serving + ingest + build + otherService) + (broker ?? 0) + bench;
  return {
    cores: os.cpus().length, machineBusy, serving: cores(serving), ingest: cores(ingest), build: cores(build), otherService: cores(otherService),
    broker, bench, rest: Math.max(0, machineBusy - known),
  };
}
