import { serviceVersion } from '../lib/version';
import { StartError } from '../start-error';
import { DbOpenError } from '../store';
import { helpText, parse, UsageError, type Command } from './flags';

interface Entry { summary: string; load: () => Promise<Command> }

// Commands load on demand: `replay` and `digest` never pay for the HTTP stack, and the list below
// (what `visibility-api help` prints) loads none of them.
export const COMMANDS: Readonly<Record<string, Entry>> = {
  serve: { summary: 'Serves a database over HTTP (the API and the ops port); with Kafka settings it also consumes the topics into it.', load: async () => (await import('./serve-command.js')).command },
  replay: { summary: 'Applies NDJSON event files (gzip too) to a database, resuming after the lines already applied, and prints the counts.', load: async () => (await import('./replay-command.js')).command },
  'dead-letters': { summary: 'Lists the events a replay or the Kafka consumer set aside (dead letters): where each came from and why.', load: async () => (await import('./dead-letters-command.js')).command },
  digest: { summary: 'Prints the read-model digest of a database: equal data, equal digest.', load: async () => (await import('./digest-command.js')).command },
  snapshot: { summary: 'Writes a consistent copy of a live database (offsets included) that another replica can start from.', load: async () => (await import('./snapshot-command.js')).command },
  produce: { summary: 'Publishes NDJSON event files (gzip too) to a Kafka topic, keyed by project id.', load: async () => (await import('./produce-command.js')).command },
  export: { summary: 'Writes Parquet files of a database (runs, mentions, citations, daily visibility, forum posts) by project and month; a second run writes only what changed.', load: async () => (await import('./export-command.js')).command },
  'cache-stats': { summary: "Prints what a running service's ops /cache endpoint shows, for a person.", load: async () => (await import('./cache-stats-command.js')).command },
  webhooks: { summary: 'Lists the webhook subscriptions of a database (never their secrets) and its recent and dead-lettered deliveries.', load: async () => (await import('./webhooks-command.js')).command },
  mcp: { summary: 'Serves the MCP tools over stdio for one API key (stdout is the protocol; log lines go to stderr).', load: async () => (await import('./mcp-command.js')).command },
};

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length)) + 2;
  return [
    'usage: visibility-api <command> [flags]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`),
    '',
    "Every command's flags, their environment variables and defaults: visibility-api help <command> (or <command> --help).",
    `visibility-api --version: the version (${serviceVersion()}).`,
  ].join('\n');
}

/** `help` or `help CMD`: what to print, or null for an unknown command. */
async function help(name: string | undefined): Promise<string | null> {
  if (name === undefined) return overview();
  const entry = COMMANDS[name];
  return entry ? helpText(name, entry.summary, await entry.load()) : null;
}

function unknownCommand(name: string): number {
  console.error(`visibility-api: unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(', ')})`);
  return 2;
}

/** Entry point; returns the exit code. Help: stdout, exit 0. Bad flags or config: one line on stderr, exit 2. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    // No command is a mistake: the list goes where errors go, and the exit is non-zero.
    console.error(overview());
    return 2;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    console.log(`visibility-api ${serviceVersion()}`);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const text = await help(rest[0]);
    if (text === null) return unknownCommand(rest[0]!);
    console.log(text);
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) return unknownCommand(name);
  try {
    const command = await entry.load();
    let p;
    try {
      p = parse(rest, command.flags);
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(`${e.message} (visibility-api ${name} --help lists the flags)`);
      throw e;
    }
    if (p.help) {
      console.log(helpText(name, entry.summary, command));
      return 0;
    }
    return await command.run(p);
  } catch (e) {
    // A person has to fix these (a flag, a port, the database file): one line, exit 2, no stack trace.
    if (e instanceof UsageError || e instanceof StartError || e instanceof DbOpenError) {
      console.error(`visibility-api ${name}: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
