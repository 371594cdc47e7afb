// The benches' flags: node:util's parseArgs and a checked number per flag. A bench is a command
// people type, so a bad flag or value ends it with one line naming it (exit 2), not a stack trace.
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** What the bench is called in its error line: its file's name (`kafka`, `builds-ab`, ...). */
const benchName = (): string => `bench ${path.basename(process.argv[1] ?? 'bench').replace(/\.[jt]s$/, '')}`;

/** `read()`'s result, or its error as one line on stderr and exit 2. */
export function orExit<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    // One line: some of parseArgs's messages have a hint on a line of its own.
    const message = (e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ');
    process.stderr.write(`${benchName()}: ${message}\n`);
    process.exit(2);
  }
}

/** parseArgs(config), or one line naming the unknown flag or missing value and exit 2. */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  return orExit(() => parseArgs(config));
}

export type NumberKind = 'positive integer' | 'non-negative integer' | 'positive number' | 'non-negative number';

const fits: Record<NumberKind, (n: number) => boolean> = {
  'positive integer': (n) => Number.isSafeInteger(n) && n >= 1,
  'non-negative integer': (n) => Number.isSafeInteger(n) && n >= 0,
  'positive number': (n) => Number.isFinite(n) && n > 0,
  'non-negative number': (n) => Number.isFinite(n) && n >= 0,
};

/** A number flag's value (`fallback` when absent), or one line naming it and exit 2 when it is not a `kind`. */
export function numberFlag(name: string, raw: string | undefined, fallback: number, kind: NumberKind): number {
  return orExit(() => {
    const n = raw === undefined ? fallback : Number(raw);
    if (raw === '' || !fits[kind](n)) throw new Error(`--${name}: "${raw}" is not a ${kind}`);
    return n;
  });
}

/** A comma-separated list of numbers (`fallback` when absent), each a `kind`. */
export function numberListFlag(name: string, raw: string | undefined, fallback: string, kind: NumberKind): number[] {
  return (raw ?? fallback).split(',').map((part) => numberFlag(name, part.trim(), 0, kind));
}
