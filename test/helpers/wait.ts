// Waiting in tests: for a time, or for a condition with a deadline (never a timed assertion).
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Checks `check` every `every` ms until it holds (a check that throws counts as not yet); false
 * once `ms` have passed without it holding.
 */
export async function until(check: () => boolean | Promise<boolean>, ms: number, every = 20): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return true;
    if (Date.now() >= end) return false;
    await sleep(every);
  }
}
