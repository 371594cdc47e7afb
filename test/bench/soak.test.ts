// The soak in CI: bench/soak/soak.ts for 60 s (through tsx, serving from source), against a broker of this
// file's own. It runs the `serve` CLI as a child process under the mixed read load while 1,000 new
// prompt runs a second are produced to its topic. Asserted: what a user depends on (no failed
// request, every event applied and served, exit 0 on SIGTERM, nothing left behind); the figures are
// printed, never asserted. And the soak itself, interrupted, stops everything it started.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import t from 'tap';
import { testBroker, type TestBroker } from '../helpers/broker';
import { tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';
import { sleep } from '../helpers/wait';

// A world of 60 projects over 5 days: many aggregate buckets, so the live stream drains in minutes.
const WORLD = ['--accounts', '30', '--days', '5', '--prompts', '14'];

interface Soak { code: number | null; signal: NodeJS.Signals | null; output: string }

/** bench/soak/soak.ts in a child process; `onOutput` sees its output as it comes. Killed if it overruns. */
function soak(args: string[], brokers: string, timeoutMs: number, onOutput?: (all: string, child: ReturnType<typeof spawn>) => void): Promise<Soak> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('KAFKA_')) env[k] = v;
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'soak', 'soak.ts'), '--from-source', ...args], {
      cwd: ROOT, env: { ...env, KAFKA_BROKERS: brokers }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const take = (c: Buffer): void => {
      output += c.toString();
      onOutput?.(output, child);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** Whether `pid` still runs (a zombie not reaped yet counts as gone); polled a few seconds. */
async function running(pid: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    let state: string;
    try {
      state = /^State:\s+(\S)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
    } catch {
      return false;
    }
    if (state === 'Z') return false;
    await sleep(200);
  }
  return true;
}

async function soakTopics(brokers: string): Promise<string[]> {
  const admin = new Kafka({ clientId: 'soak-test', brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return (await admin.listTopics()).filter((x) => x.startsWith('soak-'));
  } finally {
    await admin.disconnect();
  }
}

let broker: TestBroker;
const dir = tmpDir('soak-');
t.before(async () => {
  broker = await testBroker();
});
t.teardown(async () => {
  await broker?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Summary {
  requests: number; errors: number; statuses: Record<string, number>; failures: string[]; warnings: string[];
  service: { pid: number };
  load: { target_rate: number; achieved_rate: number };
  latency_ms: { p50: number; p99: number; max: number };
  event_loop_delay_ms: { p99_median_of_intervals: number | null; max: number | null };
  rss_mib: { at_from: number | null; at_end: number | null; drift_pct: number | null };
  events: { produced: number; applied: number; dead_lettered: number; lag_max: number | null; drain_s: number | null; last_group: { id: string; runs: number } | null };
  visible: boolean; visible_detail: string;
  sigterm: { code: number | null; signal: string | null; seconds: number | null };
}

t.test('60 s at 80% of the top hot rate with 1,000 events/s: no error, every event served, a clean stop', async (t) => {
  const json = path.join(dir, 'soak.json');
  const r = await soak(['--duration', '60', ...WORLD, '--probe-seconds', '3', '--drain-timeout', '600', '--timeout', '60', '--out-dir', dir, '--json', json],
    broker.brokers, 20 * 60_000);
  t.equal(r.code, 0, `the soak exits 0\n${r.output.slice(-3000)}`);
  const s = JSON.parse(fs.readFileSync(json, 'utf8')) as Summary;
  t.same(s.failures, [], 'no failure reported');
  t.ok(s.requests > 0, `${s.requests} requests`);
  t.equal(s.errors, 0, `0 errors (statuses ${JSON.stringify(s.statuses)})`);
  t.same(Object.keys(s.statuses), ['200'], 'every answer a 200');
  t.ok(s.events.produced > 0 && s.events.last_group !== null, `${s.events.produced} events produced`);
  t.equal(s.events.applied, s.events.produced, 'every event produced is applied');
  t.equal(s.events.dead_lettered, 0, 'none dead-lettered');
  t.ok(s.visible, `the last group is served with all its runs, and today is in its project's window: ${s.visible_detail}`);
  t.equal(s.sigterm.code, 0, `SIGTERM: exit 0 (${JSON.stringify(s.sigterm)})`);
  t.notOk(await running(s.service.pid), 'the service is gone');
  t.same(await soakTopics(broker.brokers), [], 'its topics are deleted');
  t.comment(`figures (not asserted): ${Math.round(s.load.achieved_rate)} req/s of ${s.load.target_rate} targeted; latency p50 ${s.latency_ms.p50} ms, ` +
    `p99 ${s.latency_ms.p99} ms, max ${s.latency_ms.max} ms; event-loop delay p99 ${s.event_loop_delay_ms.p99_median_of_intervals?.toFixed(1)} ms; ` +
    `RSS ${s.rss_mib.at_from?.toFixed(0)} -> ${s.rss_mib.at_end?.toFixed(0)} MiB (${s.rss_mib.drift_pct?.toFixed(1)} %); ` +
    `lag max ${s.events.lag_max}, drained ${s.events.drain_s?.toFixed(0)} s after the load`);
});

t.test('interrupted (SIGINT) during the load: exits 130 and leaves no process or topic behind', async (t) => {
  let pid = 0;
  let sent = false;
  const r = await soak(['--duration', '600', ...WORLD, '--hot-rate', '500', '--out-dir', dir, '--json', path.join(dir, 'interrupted.json')], broker.brokers, 5 * 60_000,
    (out, child) => {
      pid ||= Number(/service pid (\d+)/.exec(out)?.[1] ?? 0);
      // Once a sample shows the load and the stream running.
      if (!sent && /t=\d+ s: /.test(out)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
  t.ok(sent, `interrupted during the load\n${r.output.slice(-2000)}`);
  t.equal(r.code, 130, 'exit status 130');
  t.ok(pid > 0, `the service had pid ${pid}`);
  t.notOk(await running(pid), 'the service is gone');
  t.same(await soakTopics(broker.brokers), [], 'its topics are deleted');
});
