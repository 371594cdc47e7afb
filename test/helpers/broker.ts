// A Kafka broker of the calling test file's own (scripts/kafka-start.sh with KAFKA_RUN_DIR), so tests
// neither depend on nor disturb a broker at 127.0.0.1:9092 or anything else running on the machine:
//  - its own run directory under os.tmpdir() (config, data, logs), removed by close();
//  - its own ports (listener and controller), free when chosen, below the kernel's ephemeral range so
//    that no outgoing connection of any process can take them while the broker is stopped;
//  - start() after stop() binds the same ports again (clients know them), waiting until they are free;
//  - no JVM outlives the test process: close() in a teardown, a process 'exit' hook, and a watchdog
//    started by kafka-start.sh (KAFKA_OWNER_PID) that kills the broker once this process is gone,
//    even after a SIGKILL.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './paths';
import { sleep } from './wait';

export interface TestBroker {
  /** "127.0.0.1:PORT": the same for the broker's whole life, across stop() and start(). */
  brokers: string;
  /** Stops the broker (SIGTERM, then SIGKILL after a grace period); its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same ports, over the same data; resolves once it answers metadata requests. */
  start(): Promise<void>;
  /** Stops it and removes its directory. Safe to call more than once. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
/** Modest: several JVMs share a 2-core machine, and a test topic holds at most a few hundred MB. */
const HEAP = '-Xmx384m -Xms64m';
const START_TIMEOUT_S = 90;
/** How long start() waits for its ports to be released (by the broker that had them, or anything else). */
const PORT_WAIT_MS = 60_000;

/**
 * Closes every inherited descriptor above stderr, then runs the script. The broker outlives the
 * script: it must not hold a descriptor of the test runner open (tap hands one down to track
 * descendant processes and waits for it to close).
 */
const CLOSE_FDS_THEN_RUN = 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec bash "$@"';

interface ScriptResult { code: number | null; output: string }

function runScript(name: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', CLOSE_FDS_THEN_RUN, 'bash', path.join(ROOT, 'scripts', name)], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Whether `port` can be bound on 127.0.0.1 right now (the way Kafka binds it: SO_REUSEADDR, as Node does). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: HOST, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The low end of the kernel's ephemeral port range (outgoing connections take their local ports there). */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch {
    // not Linux: keep the usual default
  }
  return 32_768;
}

/** Two distinct ports that are free now, picked at random between 10000 and the ephemeral range. */
async function pickPorts(): Promise<[number, number]> {
  const low = 10_000;
  const high = ephemeralLow() - 1;
  const picked: number[] = [];
  for (let attempt = 0; attempt < 500 && picked.length < 2; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (!picked.includes(port) && (await bindable(port))) picked.push(port);
  }
  if (picked.length < 2) throw new Error(`testBroker: no free port found between ${low} and ${high}`);
  return [picked[0]!, picked[1]!];
}

function tail(file: string, lines: number): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** The broker's pid if it is alive and is a broker (a pid file can outlive its process). */
function brokerPid(runDir: string): number | null {
  try {
    const pid = Number(fs.readFileSync(path.join(runDir, 'kafka.pid'), 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return null;
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka') ? pid : null;
  } catch {
    return null;
  }
}

/** Run dirs of this process's brokers not closed yet: killed and removed when the process exits. */
const open = new Set<string>();
let exitHook = false;
function killAllOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const dir of open) {
      const pid = brokerPid(dir);
      if (pid !== null) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      // The directory goes too once the broker is dead; the watchdog removes it if the JVM is slower.
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** Starts a broker of this test file's own; call close() when done (e.g. in t.teardown). */
export async function testBroker(): Promise<TestBroker> {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vis-kafka-'));
  fs.writeFileSync(path.join(runDir, '.ephemeral'), 'removed by the owner watchdog of scripts/kafka-start.sh\n');
  open.add(runDir);
  killAllOnExit();

  let ports: [number, number] | null = null;
  let everStarted = false;
  let closed = false;
  const env = (): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('KAFKA_')) base[k] = v; // a developer's KAFKA_* must not leak in
    return {
      ...base, KAFKA_RUN_DIR: runDir, KAFKA_PORT: String(ports![0]), KAFKA_CONTROLLER_PORT: String(ports![1]),
      KAFKA_HEAP_OPTS: HEAP, KAFKA_START_TIMEOUT: String(START_TIMEOUT_S), KAFKA_OWNER_PID: String(process.pid), KAFKA_STOP_TIMEOUT: '20',
    };
  };

  const start = async (): Promise<void> => {
    if (closed) throw new Error('testBroker: start() after close()');
    const deadline = Date.now() + PORT_WAIT_MS + 2 * START_TIMEOUT_S * 1000;
    let lastFailure = '';
    for (let attempt = 1; Date.now() < deadline; attempt++) {
      if (ports === null) {
        ports = await pickPorts();
      } else {
        // The ports clients know: wait (bounded) until whatever holds them lets go.
        const portsDeadline = Date.now() + PORT_WAIT_MS;
        while (!((await bindable(ports[0])) && (await bindable(ports[1])))) {
          if (Date.now() > portsDeadline) throw new Error(`testBroker: 127.0.0.1:${ports[0]}/${ports[1]} still in use after ${PORT_WAIT_MS / 1000} s`);
          await sleep(200);
        }
      }
      const r = await runScript('kafka-start.sh', env(), (START_TIMEOUT_S + 60) * 1000);
      if (r.code === 0) {
        everStarted = true;
        return;
      }
      lastFailure = `scripts/kafka-start.sh (attempt ${attempt}, ports ${ports.join('/')}) exited ${r.code}:\n${r.output}`;
      // A port taken between the check and the bind: a first start moves to other ports, a restart waits.
      const lost = /Address already in use|BindException/.test(r.output + tail(path.join(runDir, 'server.log'), 60) + tail(path.join(runDir, 'kafka.out'), 20));
      if (!lost) break;
      const pid = brokerPid(runDir);
      if (pid !== null) await runScript('kafka-stop.sh', env(), 60_000);
      if (!everStarted) ports = null;
    }
    throw new Error(`testBroker: the broker did not start.\n${lastFailure}`);
  };

  const stop = async (): Promise<void> => {
    if (ports === null) return;
    const r = await runScript('kafka-stop.sh', env(), 60_000);
    if (r.code !== 0 || brokerPid(runDir) !== null) throw new Error(`testBroker: scripts/kafka-stop.sh exited ${r.code}:\n${r.output}`);
  };

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    try {
      await stop();
    } finally {
      const pid = brokerPid(runDir);
      if (pid !== null) {
        process.kill(pid, 'SIGKILL');
        for (let i = 0; i < 50 && brokerPid(runDir) !== null; i++) await sleep(100); // dead before its files go
      }
      fs.rmSync(runDir, { recursive: true, force: true });
      open.delete(runDir);
    }
  };

  try {
    await start();
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
  return { brokers: `${HOST}:${ports![0]}`, start, stop, close };
}
