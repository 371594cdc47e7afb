/**
 * How far behind the newest committed data a cached body may be served by default, in ms
 * (--max-staleness, MAX_STALENESS; cache.ts). Its own module so start() and the CLI read it without
 * loading the serving modules.
 */
export const DEFAULT_MAX_STALENESS_MS = 1000;
