import { StartError } from '../errors';
import { DbOpenError } from '../store';
import { UsageError } from './args';

type Command = { usage: string; load: () => Promise<(argv: string[]) => Promise<number>> };

// Commands load on demand: `replay` and `digest` never pay for the HTTP stack.
const COMMANDS: Record<string, Command> = {
  replay: { usage: 'replay --db FILE [--batch-size N] [--from-start] [--quiet] EVENTS.ndjson[.gz]...', load: async () => (await import('./replay.js')).replayCommand },
  digest: { usage: 'digest --db FILE', load: async () => (await import('./digest.js')).digestCommand },
  serve: {
    usage: 'serve (--db FILE | --demo) [--port N] [--ops-port N] [--host H] [--window-days N] [--cache-max-bytes N] [--rate-limit N] [--build-threads N] [--log-hit-sample N] [--ops-host H] [--ops-token T] [--bootstrap-from OPS_URL [--bootstrap-timeout S] [--bootstrap-idle-timeout S]] [--max-ready-lag N] [--max-staleness MS] [--cursor-secret S] [--kafka-brokers B] [--kafka-topics T] [--kafka-group-id G]',
    load: async () => (await import('./serve.js')).serveCommand,
  },
  produce: { usage: 'produce --brokers B --topic T [--batch-size N] [--quiet] EVENTS.ndjson[.gz]...', load: async () => (await import('./produce.js')).produceCommand },
  mcp: { usage: 'mcp --db FILE [--api-key KEY] [--window-days N] (key also from VISIBILITY_API_KEY; MCP over stdio)', load: async () => (await import('./mcp.js')).mcpCommand },
  snapshot: { usage: 'snapshot --db FILE [--force] [--quiet] OUT', load: async () => (await import('./snapshot.js')).snapshotCommand },
  'cache-stats': { usage: 'cache-stats [--ops-url URL] [--ops-token T] [--json]', load: async () => (await import('./cache-stats.js')).cacheStatsCommand },
};

function usage(): string {
  return ['usage: visibility-api <command> [flags]', ...Object.values(COMMANDS).map((c) => `  visibility-api ${c.usage}`)].join('\n');
}

/** Entry point; returns the exit code. Bad flags or config: one line on stderr, exit 2. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`visibility-api: unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(', ')})`);
    return 2;
  }
  try {
    return await (await command.load())(rest);
  } catch (e) {
    // A person has to fix these (a flag, a port, the database file): one line, exit 2, no stack trace.
    if (e instanceof UsageError || e instanceof StartError || e instanceof DbOpenError) {
      console.error(`visibility-api ${name}: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
