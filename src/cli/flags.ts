// The one way every command reads its flags and explains them: a command declares a table (each
// flag's type, environment twin, default and one line on what it does); parse() reads argv and the
// twins from it, intFlag()/stringFlag() read values with the table's bounds and defaults, and
// helpText() prints the same table for `--help`. Nothing about a flag is written twice.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createLogger, LogConfigError, LOG_FORMATS, LOG_LEVELS, logOptionsFromEnv, type Logger } from '../lib/log';

/** A problem with the command line or configuration: reported as one line, exit code 2. */
export class UsageError extends Error {}

interface FlagBase {
  /** What the flag does, in one line for --help. */
  help: string;
  /** The environment variable read when the flag is absent (or empty), so containers need no command line. */
  env?: string;
  /**
   * The twin is read with the rest of its family by the code that parses the setting (the Kafka
   * settings, src/ingest/kafka/config.ts), not by parse(): --help still names it.
   */
  envReadByOwner?: true;
  /** How --help states the default when it is not a plain value ("required", "the cores but one"). */
  shows?: string;
}
export interface BooleanFlag extends FlagBase { type: 'boolean' }
export interface StringFlag extends FlagBase { type: 'string'; /** The placeholder in --help: FILE, URL. */ value: string; default?: string }
export interface IntFlag extends FlagBase {
  type: 'int';
  value: string;
  min: number;
  max: number;
  /** A function for a default that depends on the machine (the cores). */
  default: number | (() => number);
}
export type Flag = BooleanFlag | StringFlag | IntFlag;
export type FlagTable = Record<string, Flag>;

/** A setting read from the environment only: listed by --help after the flags. */
export interface EnvSetting { env: string; default: string; help: string }

/** One command: its flag table, what --help shows besides it, and what it runs. */
export interface Command<T extends FlagTable = FlagTable> {
  /** The usage after `visibility-api NAME`: the flags that must be given and the operands. */
  synopsis: string;
  flags: T;
  /** Settings read from the environment only. */
  env?: EnvSetting[];
  /** Lines after the tables (where more settings are documented). */
  notes?: string[];
  run(p: Parsed<T>): Promise<number>;
}

export interface Parsed<T extends FlagTable = FlagTable> {
  flags: T;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** The flags whose value came from their environment twin (not the command line), by name. */
  fromEnv: Set<string>;
  /** --help or -h was given: main() prints the help and runs nothing. */
  help: boolean;
}

type NamesOf<T extends FlagTable, F extends Flag> = { [K in keyof T]: T[K] extends F ? K : never }[keyof T] & string;

const HELP = 'help';

/** Strict flag parsing from a command's table; every command accepts --help / -h besides its flags. */
export function parse<T extends FlagTable>(argv: string[], flags: T, env: NodeJS.ProcessEnv = process.env): Parsed<T> {
  const options: NonNullable<ParseArgsConfig['options']> = { [HELP]: { type: 'boolean', short: 'h' } };
  for (const [name, f] of Object.entries(flags)) options[name] = { type: f.type === 'boolean' ? 'boolean' : 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    // node's own words, less its hint on positionals that start with '-' (no operand here does).
    throw new UsageError((e as Error).message.split('\n')[0]!.replace(/^Unknown option ('[^']*')\..*$/, 'unknown flag $1'));
  }
  const values = { ...parsed.values } as Record<string, string | boolean | undefined>;
  const help = values[HELP] === true;
  delete values[HELP];
  const fromEnv = new Set<string>();
  for (const [name, f] of Object.entries(flags)) {
    const twin = f.env !== undefined && f.envReadByOwner !== true ? env[f.env] : undefined;
    if (values[name] === undefined && twin !== undefined && twin !== '') {
      values[name] = twin;
      fromEnv.add(name);
    }
  }
  return { flags, values, positionals: parsed.positionals, fromEnv, help };
}

/** A string flag (or its twin), else the table's default. */
export function stringFlag<T extends FlagTable>(p: Parsed<T>, name: NamesOf<T, StringFlag>): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : (p.flags[name] as StringFlag).default;
}

export function requireString<T extends FlagTable>(p: Parsed<T>, name: NamesOf<T, StringFlag>): string {
  const v = p.values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function boolFlag<T extends FlagTable>(p: Parsed<T>, name: NamesOf<T, BooleanFlag>): boolean {
  return p.values[name] === true;
}

/** An integer flag (or its twin) within the table's bounds, else the table's default. */
export function intFlag<T extends FlagTable>(p: Parsed<T>, name: NamesOf<T, IntFlag>): number {
  const f = p.flags[name] as IntFlag;
  const v = p.values[name];
  if (v === undefined) return typeof f.default === 'function' ? f.default() : f.default;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < f.min || n > f.max) throw new UsageError(`--${name} must be an integer from ${f.min} to ${f.max}, got "${String(v)}"`);
  return n;
}

/** Where a flag's value came from, for an error about the value: "--port 8080", "PORT=8080", "the default of --port (8080)". */
export function flagOrigin<T extends FlagTable>(p: Parsed<T>, name: keyof T & string): string {
  const f = p.flags[name]!;
  const v = p.values[name];
  if (v === undefined) return `the default of --${name}${f.type === 'boolean' ? '' : ` (${shownDefault(f)})`}`;
  return p.fromEnv.has(name) ? `${f.env}=${String(v)}` : `--${name} ${String(v)}`;
}

const HELP_ROW = '--help, -h';

/** How --help states a flag's default. */
function shownDefault(f: Flag): string {
  if (f.shows !== undefined) return f.shows;
  if (f.type === 'boolean') return 'off';
  if (f.type === 'int') return typeof f.default === 'function' ? String(f.default()) : String(f.default);
  return f.default ?? '(none)';
}

/**
 * `visibility-api NAME --help`: the usage, then per flag a line with the flag, its environment twin
 * and its default, and an indented line on what it does; then the environment-only settings.
 */
export function helpText(name: string, summary: string, c: Command): string {
  const rows = Object.entries(c.flags).map(([flag, f]) => ({
    head: f.type === 'boolean' ? `--${flag}` : `--${flag} ${f.value}`, env: f.env ?? '-', def: shownDefault(f), help: f.help,
  }));
  const envRows = (c.env ?? []).map((s) => ({ head: s.env, env: '', def: s.default, help: s.help }));
  const headWidth = Math.max(HELP_ROW.length, ...[...rows, ...envRows].map((r) => r.head.length)) + 2;
  const envWidth = Math.max(3, ...rows.map((r) => r.env.length)) + 2;
  const lines = [`usage: visibility-api ${name} ${c.synopsis}`, '', summary, ''];
  lines.push('flags (the environment variable is read when the flag is not given):');
  lines.push(`  ${'FLAG'.padEnd(headWidth)}${'ENV'.padEnd(envWidth)}DEFAULT`);
  for (const r of rows) lines.push(`  ${r.head.padEnd(headWidth)}${r.env.padEnd(envWidth)}${r.def}`, `      ${r.help}`);
  lines.push(`  ${HELP_ROW.padEnd(headWidth)}${'-'.padEnd(envWidth)}-`, '      print this help and exit');
  if (envRows.length > 0) {
    lines.push('', 'environment only:', `  ${'VARIABLE'.padEnd(headWidth)}DEFAULT`);
    for (const r of envRows) lines.push(`  ${r.head.padEnd(headWidth)}${r.def}`, `      ${r.help}`);
  }
  if (c.notes) lines.push('', ...c.notes);
  return lines.join('\n');
}

/** LOG_LEVEL and LOG_FORMAT, for the --help of the commands that log (src/lib/log.ts reads them). */
export const LOG_SETTINGS: EnvSetting[] = [
  { env: 'LOG_LEVEL', default: 'info', help: `the least severe log lines written: ${LOG_LEVELS.join(', ')}` },
  { env: 'LOG_FORMAT', default: 'pretty on a terminal, else json', help: `${LOG_FORMATS.join(' or ')}: one JSON object per line (for collectors), or coloured lines for a person` },
];

/** LOG_LEVEL and LOG_FORMAT (src/lib/log.ts) for a logger writing to `fd`; a bad value is a usage error. */
export function loggerFromEnv(env: NodeJS.ProcessEnv, fd = 1): Logger {
  try {
    return createLogger({ ...logOptionsFromEnv(env, fd), fd });
  } catch (e) {
    if (e instanceof LogConfigError) throw new UsageError(e.message);
    throw e;
  }
}
