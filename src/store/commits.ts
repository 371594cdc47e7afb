/**
 * Batches this process has committed, on any of its threads: a counter in shared memory that the
 * projector bumps after each commit and readers load for a few nanoseconds. A thread that writes
 * adopts the counter of the thread that reads (commitCounter -> adoptCommitCounter), so the
 * serving thread sees the writer's commits on its next request without asking SQLite.
 */
let counter = new Int32Array(new SharedArrayBuffer(4));

export function commitCounter(): SharedArrayBuffer {
  return counter.buffer as SharedArrayBuffer;
}

export function adoptCommitCounter(shared: SharedArrayBuffer): void {
  counter = new Int32Array(shared);
}

export function noteCommit(): void {
  Atomics.add(counter, 0, 1);
}

export function localCommitCount(): number {
  return Atomics.load(counter, 0);
}
