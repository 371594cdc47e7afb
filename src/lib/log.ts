// Every log line of the service goes through pino: one JSON object per line when the output is a
// file or a pipe (a collector), pino-pretty's coloured lines when it is a terminal (a person);
// LOG_FORMAT=json|pretty decides instead when set, LOG_LEVEL sets the level.
// Command output that is the result of a command (replay's summary, digest, snapshot) is not a log
// line and stays plain.
import tty from 'node:tty';
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  /** Where lines go (default stdout, fd 1); a stream for tests. */
  fd?: number;
  stream?: DestinationStream;
}

/** A bad LOG_LEVEL or LOG_FORMAT: the CLI exits non-zero with this one line. */
export class LogConfigError extends Error {}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value.trim() === '') return fallback;
  const v = value.trim().toLowerCase();
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new LogConfigError(`${name} must be one of ${allowed.join(', ')} (got "${value}")`);
}

/**
 * LOG_FORMAT when set; otherwise pretty for a terminal and JSON for anything else, as pino users
 * expect: a person reads a terminal, a collector reads a pipe or a file.
 */
export function chooseLogFormat(value: string | undefined, isTTY: boolean): LogFormat {
  return oneOf('LOG_FORMAT', value, LOG_FORMATS, isTTY ? 'pretty' : 'json');
}

/**
 * LOG_LEVEL (default info) and LOG_FORMAT (default: by whether `fd`, where the lines go, is a
 * terminal) from the environment; throws LogConfigError on a bad value.
 */
export function logOptionsFromEnv(env: NodeJS.ProcessEnv, fd = 1): Pick<LoggerOptions, 'level' | 'format'> {
  return {
    level: oneOf('LOG_LEVEL', env.LOG_LEVEL, LOG_LEVELS, 'info'),
    format: chooseLogFormat(env.LOG_FORMAT, tty.isatty(fd)),
  };
}

/**
 * The destination writes asynchronously (sonic-boom): under load, lines written while a write is in
 * flight leave together in the next one, so a busy server makes one write per batch of lines, not
 * one per request. flushLogger() before the process exits.
 */
export function createLogger(o: LoggerOptions = {}): Logger {
  const options: pino.LoggerOptions = { level: o.level ?? 'info', base: { pid: process.pid } };
  if (o.stream) return jsonTo(pino(options, o.stream), o.stream);
  if (o.format === 'pretty') {
    // Loaded only for a terminal or when asked for: synchronous and slower, for a person to read.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pretty = require('pino-pretty') as typeof import('pino-pretty');
    const look = { destination: o.fd ?? 1, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' };
    // One line per info line: its message says it all for a person (the start-up URLs, each request's
    // route, status and time); the fields under it (one line each) scrolled the start-up lines away.
    // Warnings and errors keep their fields (an error's stack), and so does debug, asked for detail.
    // JSON lines carry every field either way.
    return pino(options, pino.multistream([
      { level: 'trace', stream: pretty(look) },
      { level: 'info', stream: pretty({ ...look, hideObject: true }) },
      { level: 'warn', stream: pretty(look) },
    ], { dedupe: true }));
  }
  const destination = pino.destination({ dest: o.fd ?? 1, sync: false });
  return jsonTo(pino(options, destination), destination);
}

/** Loggers that write pino's JSON lines, and where. */
const JSON_DESTINATIONS = new WeakMap<Logger, DestinationStream>();

function jsonTo(logger: Logger, destination: DestinationStream): Logger {
  JSON_DESTINATIONS.set(logger, destination);
  return logger;
}

/**
 * Where a logger made by createLogger writes its JSON lines; null for pretty output. For a writer of
 * lines in the same format that must cost less than pino's own path (src/ops/access-log.ts).
 */
export function jsonDestination(logger: Logger): DestinationStream | null {
  return JSON_DESTINATIONS.get(logger) ?? null;
}

/** sonic-boom's state, which it does not expose: whether a write is in flight or lines wait. */
interface SonicState { _writing?: boolean; _len?: number; once?: (event: 'drain', listener: () => void) => unknown }

/**
 * Resolves once the destination has written every line it holds (at most `timeoutMs`: a stdout that
 * nobody reads must not hold up an exit). pino's flush() calls back at once when nothing is
 * buffered, even with a write still in flight; the flushSync pino runs at exit then wrote the last
 * lines before that write landed ("stopped" before "stopping", seen in test/e2e/service-lifecycle.test.ts).
 */
export function flushLogger(logger: Logger, timeoutMs = 2000): Promise<void> {
  const d = JSON_DESTINATIONS.get(logger) as SonicState | undefined;
  const busy = d !== undefined && typeof d.once === 'function' && (d._writing === true || (d._len ?? 0) > 0);
  if (!busy) return new Promise((resolve) => logger.flush(() => resolve()));
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    d.once!('drain', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Writes out what the logger still holds before a process.exit() that cannot wait (sonic-boom's flushSync). */
export function flushLoggerSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void }>)[pino.symbols.streamSym];
  try {
    stream?.flushSync?.();
  } catch {
    // Not ready yet (nothing written) or stdout closed: nothing more can be done on the way out.
  }
}

/** A logger that drops everything: for library callers and tests that did not ask for lines. */
export const silentLogger: Logger = pino({ level: 'silent' });
