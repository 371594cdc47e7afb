// `visibility-api mcp --db FILE`: the MCP tools over stdio (issue 15), for an agent that starts the
// server itself. It acts for one API key (--api-key or VISIBILITY_API_KEY), refused at start when the
// database does not know it, and sees what that key sees over HTTP. stdout carries the protocol
// only: anything for a person goes to stderr.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ENDPOINTS } from '../readmodels';
import { Access } from '../serve/access';
import { keyHash } from '../serve/auth';
import { BodySchemas } from '../serve/bodies';
import { InlineBuilder, ThreadBuilder, type Builder } from '../serve/builders';
import { BodyCache } from '../serve/cache';
import { createMcpServer } from '../serve/mcp';
import { Responder } from '../serve/responder';
import { openReadStore } from '../store';
import { flushLogger } from '../lib/log';
import { intFlag, loggerFromEnv, parse, requireString, UsageError } from './args';
import { onStopSignal } from './signals';

const FLAGS = {
  db: { type: 'string' }, 'api-key': { type: 'string' }, 'window-days': { type: 'string' },
  'cache-max-bytes': { type: 'string' }, 'build-threads': { type: 'string' },
} as const;
const ENV = { db: 'VISIBILITY_DB', 'api-key': 'VISIBILITY_API_KEY', 'window-days': 'WINDOW_DAYS', 'cache-max-bytes': 'CACHE_MAX_BYTES', 'build-threads': 'BUILD_THREADS' };

/** Runs until the client closes stdin, or SIGTERM / SIGINT; exit 0. */
export async function mcpCommand(argv: string[]): Promise<number> {
  const p = parse(argv, FLAGS, ENV);
  if (p.positionals.length > 0) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const dbFile = requireString(p, 'db');
  const key = p.values['api-key'];
  if (typeof key !== 'string' || key.trim() === '') throw new UsageError('an API key is required: --api-key KEY or VISIBILITY_API_KEY');
  const windowDays = intFlag(p, 'window-days', 7, 1, 365);
  const cacheMaxBytes = intFlag(p, 'cache-max-bytes', 64 * 1024 * 1024, 0, 64 * 1024 ** 3);
  const threads = intFlag(p, 'build-threads', 0, 0, 64); // one agent's calls: building inline is enough by default
  if (!fs.existsSync(dbFile)) throw new UsageError(`--db ${dbFile}: no such file`);

  const store = openReadStore(dbFile);
  // stdout is the MCP channel: log lines go to stderr.
  const logger = loggerFromEnv(process.env, 2);
  // The database's cursor key; a file of a schema before 014 (opened read-only, never migrated
  // here) has none: this one process's cursors are then signed with a key of its own.
  const cursorKey = store.cursorSecret() ?? randomBytes(32);
  const builder: Builder = threads > 0 ? new ThreadBuilder(dbFile, threads, logger, cursorKey) : new InlineBuilder(store, new BodySchemas(), cursorKey);
  const closeAll = async (): Promise<void> => {
    await builder.close();
    store.close();
  };
  const access = new Access(store);
  const hash = keyHash(key.trim());
  if (access.account(hash) === null) {
    await closeAll();
    throw new UsageError('invalid API key (unknown or revoked)');
  }
  const server = createMcpServer({ endpoints: ENDPOINTS, responder: new Responder(access, builder, new BodyCache(cacheMaxBytes), windowDays, cursorKey) }, hash);
  const transport = new StdioServerTransport();
  let off = (): void => undefined;
  const stopped = new Promise<string>((resolve) => {
    off = onStopSignal('mcp', 'exiting now', (signal) => resolve(signal));
    process.stdin.once('end', () => resolve('stdin closed'));
    server.onclose = () => resolve('transport closed');
  });
  await server.connect(transport);
  logger.info({ db: dbFile }, `visibility-api mcp: serving ${dbFile} over stdio`);
  const why = await stopped;
  off();
  await server.close();
  await closeAll();
  logger.info(`visibility-api mcp: ${why}: stopped`);
  await flushLogger(logger);
  return 0;
}
