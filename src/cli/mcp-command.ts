// `visibility-api mcp --db FILE`: the MCP tools over stdio, for an agent that starts the
// server itself. It acts for one API key (--api-key or VISIBILITY_API_KEY), refused at start when the
// database does not know it, and sees what that key sees over HTTP. stdout carries the protocol
// only: anything for a person goes to stderr.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ENDPOINTS } from '../readmodels';
import { Access } from '../serve/http/access';
import { Admission } from '../serve/http/admission';
import { keyHash } from '../serve/request/api-key';
import { BodySchemas } from '../serve/bodies/bodies';
import { InlineBuilder, ThreadBuilder, type Builder } from '../serve/bodies/builders';
import { BodyCache } from '../serve/bodies/cache';
import { createMcpServer } from '../serve/mcp/mcp';
import { Responder } from '../serve/http/responder';
import { openReadStore } from '../store';
import { flushLogger } from '../lib/log';
import { intFlag, LOG_SETTINGS, loggerFromEnv, requireString, UsageError, type Command, type FlagTable, type Parsed } from './flags';
import { onStopSignal } from './stop-signals';

const FLAGS = {
  db: { type: 'string', value: 'FILE', env: 'VISIBILITY_DB', shows: 'required', help: 'the database to serve (opened read-only)' },
  'api-key': { type: 'string', value: 'KEY', env: 'VISIBILITY_API_KEY', shows: 'required', help: 'the API key the tools act for: they see what it sees over HTTP' },
  'window-days': { type: 'int', value: 'N', env: 'WINDOW_DAYS', default: 7, min: 1, max: 365, help: 'the days a call covers when it names no start_date' },
  'cache-max-bytes': { type: 'int', value: 'N', env: 'CACHE_MAX_BYTES', default: 64 * 1024 * 1024, min: 0, max: 64 * 1024 ** 3, help: 'the bytes of response bodies the cache keeps' },
  // One agent's calls: building inline is enough by default.
  'build-threads': { type: 'int', value: 'N', env: 'BUILD_THREADS', default: 0, min: 0, max: 64, help: 'worker threads that build response bodies (0: build on the event loop)' },
} satisfies FlagTable;

/** Runs until the client closes stdin, or SIGTERM / SIGINT; exit 0. */
async function mcpCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  if (p.positionals.length > 0) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const dbFile = requireString(p, 'db');
  const key = p.values['api-key'];
  if (typeof key !== 'string' || key.trim() === '') throw new UsageError('an API key is required: --api-key KEY or VISIBILITY_API_KEY');
  const windowDays = intFlag(p, 'window-days');
  const cacheMaxBytes = intFlag(p, 'cache-max-bytes');
  const threads = intFlag(p, 'build-threads');
  if (!fs.existsSync(dbFile)) throw new UsageError(`--db ${dbFile}: no such file`);

  const store = openReadStore(dbFile);
  // stdout is the MCP channel: log lines go to stderr.
  const logger = loggerFromEnv(process.env, 2);
  // The database's cursor key; a file of a schema before 014 (opened read-only, never migrated
  // here) has none: this one process's cursors are then signed with a key of its own.
  const cursorKey = store.cursorSecret() ?? randomBytes(32);
  const builder: Builder = threads > 0 ? new ThreadBuilder(dbFile, threads, logger, cursorKey, undefined, { maxPerAccount: 0 }) /* one local user: no account to share with */ : new InlineBuilder(store, new BodySchemas(), cursorKey);
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
  const responder = new Responder(access, builder, new BodyCache(cacheMaxBytes), windowDays, cursorKey);
  // One local user: no readiness to wait for (the file is read as it is) and no rate to charge.
  const server = createMcpServer({ endpoints: ENDPOINTS, admission: new Admission({ access, responder }) }, hash);
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

export const command: Command<typeof FLAGS> = { synopsis: '--db FILE --api-key KEY [flags]', flags: FLAGS, env: LOG_SETTINGS, run: mcpCommand };
