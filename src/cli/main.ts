import { UsageError } from './args';
import { digestCommand, DIGEST_USAGE } from './digest';
import { replayCommand, REPLAY_USAGE } from './replay';

type Command = { run: (argv: string[]) => Promise<number>; usage: string };

const COMMANDS: Record<string, Command> = {
  replay: { run: replayCommand, usage: REPLAY_USAGE },
  digest: { run: digestCommand, usage: DIGEST_USAGE },
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
    return await command.run(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`visibility-api ${name}: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
