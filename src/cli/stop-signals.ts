import os from 'node:os';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * Calls `onStop` on the first SIGTERM or SIGINT (what systemd, Kubernetes, `docker stop` and
 * Ctrl-C send), so a long-running command can finish what it holds and exit 0. A second signal
 * means "now": one line on stderr (`visibility-api COMMAND: SIGNAL again: NOTE`), then the process
 * exits at once with 128 + the signal's number (143, 130), as a shell reports a process killed by
 * it. Returns a function that removes the handlers.
 */
export function onStopSignal(command: string, note: string, onStop: (signal: StopSignal) => void): () => void {
  let received = false;
  const handle = (signal: StopSignal): void => {
    if (received) {
      process.stderr.write(`visibility-api ${command}: ${signal} again: ${note}\n`);
      process.exit(128 + os.constants.signals[signal]);
    }
    received = true;
    onStop(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, handle);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, handle);
  };
}
