import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createLogger, LogConfigError, logOptionsFromEnv, type Logger } from '../lib/log';

/** A problem with the command line or configuration: reported as one line, exit code 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * Strict flag parsing. Every flag listed in `env` has an environment-variable twin, used when the
 * flag is absent, so containers can be configured without a command line.
 */
export function parse(argv: string[], options: Options, env: Record<string, string> = {}): Parsed {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]!.replace(/^Unknown option/, 'unknown flag'));
  }
  const values = { ...parsed.values } as Record<string, string | boolean | undefined>;
  for (const [flag, variable] of Object.entries(env)) {
    if (values[flag] === undefined && process.env[variable] !== undefined && process.env[variable] !== '') values[flag] = process.env[variable];
  }
  return { values, positionals: parsed.positionals };
}

export function requireString(p: Parsed, flag: string): string {
  const v = p.values[flag];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${flag} is required`);
  return v;
}

export function intFlag(p: Parsed, flag: string, fallback: number, min: number, max: number): number {
  const v = p.values[flag];
  if (v === undefined) return fallback;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`--${flag} must be an integer from ${min} to ${max}, got "${String(v)}"`);
  return n;
}

/** LOG_LEVEL and LOG_FORMAT (src/lib/log.ts); a bad value is a usage error. */
export function loggerFromEnv(env: NodeJS.ProcessEnv, fd = 1): Logger {
  try {
    return createLogger({ ...logOptionsFromEnv(env), fd });
  } catch (e) {
    if (e instanceof LogConfigError) throw new UsageError(e.message);
    throw e;
  }
}
