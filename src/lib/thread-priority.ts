import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Gives the calling thread the nice value `nice` unless it is already that low in priority, on
 * Linux (elsewhere nothing changes). Linux keeps a nice value per thread: /proc/thread-self names
 * this thread's id, and setpriority on a thread id changes that thread alone (threads it starts later
 * inherit it).
 */
export function lowerThreadPriority(nice: number): void {
  if (process.platform !== 'linux') return;
  try {
    const tid = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
  } catch {
    // no /proc, or not allowed: the thread keeps its priority
  }
}
