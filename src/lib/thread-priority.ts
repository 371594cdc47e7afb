import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Gives the calling thread the nice value `nice` unless it is already that low in priority, on
 * Linux (elsewhere nothing changes). Linux keeps a nice value per thread: /proc/thread-self names
 * this thread's id, and setpriority on a thread id changes that thread alone (threads it starts later
 * inherit it). Returns the thread's nice value after the call, or null where none was set.
 */
export function lowerThreadPriority(nice: number): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const tid = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
    return os.getPriority(tid);
  } catch {
    return null; // no /proc, or not allowed: the thread keeps its priority
  }
}
