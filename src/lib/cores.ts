import os from 'node:os';

/**
 * Build threads when none are configured: every core the process may use but one, at least one. The
 * event loop keeps a core for the hot path (cache hits, ~90 % of a dashboard's requests), and the
 * threads take the rest: after a commit, each key's rebuild is one build, so builds scale with keys
 * asked for, not requests. A Kafka writer thread in the same process shares the cores with them; its
 * batches are short, and the operating system interleaves them. On 2 cores this is 1, as before.
 */
export function defaultBuildThreads(): number {
  return Math.max(1, os.availableParallelism() - 1);
}
