import os from 'node:os';

/**
 * Build threads when none are configured: every core the process may use but one, at least two. The
 * event loop keeps a core for the hot path (cache hits, ~90 % of a dashboard's requests), and the
 * threads take the rest: after a commit, each key's rebuild is one build, so builds scale with keys
 * asked for, not requests. A Kafka writer thread in the same process shares the cores with them; its
 * batches are short, and the operating system interleaves them. At least 2, even on 2 cores: an
 * account builds on all threads but one (serve/builders.ts runningCap), so with one thread another
 * account's build would wait for the flooder's build in hand, up to seconds (docs/decisions.md,
 * "Fair sharing between accounts").
 */
export function defaultBuildThreads(): number {
  return Math.max(2, os.availableParallelism() - 1);
}
