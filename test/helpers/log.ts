// What a test reads of what the service logged.
import { createLogger, type Logger, type LogLevel } from '../../src/lib/log';

/** A logger whose JSON lines are kept in memory, parsed: what a test reads of what the service logged. */
export function capturedLogger(level: LogLevel = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  // A write may carry several lines (the access log writes in batches).
  const stream = { write: (s: string): void => void lines.push(...s.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)) };
  return { logger: createLogger({ level, stream }), lines };
}
