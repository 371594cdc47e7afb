// Read replicas behind a real load balancer: HAProxy (Debian's package) on loopback in
// front of 3 `serve` processes that consume the same Kafka topic with group ids of their own.
// Replica 1 loads the topic from the start; replicas 2 and 3 bootstrap from its ops port's snapshot
// (--bootstrap-from) and resume from the offsets inside it. Under read load through HAProxy,
// replica 2 is killed with SIGKILL and a new one takes its place (same ports, bootstrapped from
// replica 1) while more events are produced. Checks: no failed request, every replica ends with the
// same digest, and every demo endpoint answers the same bytes on each. Figures go to the TAP
// comments (docs/benchmarks.md quotes them). Skips where HAProxy is not installed.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { Kafka, logLevel } from 'kafkajs';
import t from 'tap';
import { DEMO_OPTIONS, generateWorld } from '../../fixtures/world';
import { ENDPOINTS } from '../../src/readmodels';
import { kafkaConnectionFromEnv, kafkaReadiness, produceFiles } from '../../src/ingest/kafka';
import { digest, openDb } from '../../src/store';
import { testBroker } from '../helpers/broker';
import { activeKeys, DEMO_FILE } from '../helpers/demo';
import { tmpDir } from '../helpers/db';
import { request, withKey } from '../helpers/http';
import { freePort, onFreePorts, runCli, spawnServeOnFreePorts, startServe, TAKEN, type ServeProcess } from '../helpers/processes';
import { ROOT } from '../helpers/paths';
import { sleep, until } from '../helpers/wait';

const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => fs.existsSync(p));
const skip = HAPROXY ? false : 'HAProxy is not installed (apt-get install haproxy; .ci/run installs it)';
const LOAD_SECONDS = 16;
const KILL_AFTER_MS = 4000;

interface Replica { name: string; db: string; port: number; opsPort: number; proc?: ServeProcess }

t.test('3 replicas behind HAProxy: one killed and replaced under load, no failed request, same bytes everywhere', { skip }, async (t) => {
  const broker = await testBroker();
  t.teardown(() => broker.close());
  const topic = `replicas-${Date.now()}`;
  const admin = new Kafka({ brokers: [broker.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const conn = kafkaConnectionFromEnv({ KAFKA_BROKERS: broker.brokers, KAFKA_LOG_LEVEL: 'error' });
  const produced = (await produceFiles(conn, topic, [DEMO_FILE])).sent;

  const dir = tmpDir('replicas-');
  // Port 0: the OS gives each replica free ports, which its listening line tells (none is picked
  // beforehand for another test's process to take); the replacement then reuses replica 2's.
  const replica = (name: string): Replica => ({ name, db: path.join(dir, `${name}.db`), port: 0, opsPort: 0 });
  const env = (name: string): NodeJS.ProcessEnv => ({
    KAFKA_BROKERS: broker.brokers, KAFKA_TOPICS: topic, KAFKA_GROUP_ID: `${topic}-${name}`, KAFKA_DLQ_TOPIC: '',
    KAFKA_LOG_LEVEL: 'error', LOG_LEVEL: 'warn', MAX_READY_LAG: '0',
  });
  const serve = async (r: Replica, name: string, extra: string[] = []): Promise<ServeProcess> => {
    // No rate limit: the load below is one key's, far past serve's default per-key rate, and counts every non-2xx.
    const p = await startServe(['--db', r.db, '--port', String(r.port), '--ops-port', String(r.opsPort), '--rate-limit', '0', ...extra], { ...env(name), LOG_LEVEL: 'info' });
    [r.port, r.opsPort] = [Number(new URL(p.base).port), Number(new URL(p.ops).port)];
    return p;
  };
  const ready = (r: Replica): Promise<boolean> => request(`http://127.0.0.1:${r.opsPort}/readyz`).then((x) => x.status === 200);
  const kill = (p: ChildProcess): void => void (p.exitCode === null && p.signalCode === null && p.kill('SIGKILL'));

  const [r1, r2, r3] = [replica('r1'), replica('r2'), replica('r3')];
  r1.proc = await serve(r1, 'r1');
  t.teardown(() => kill(r1.proc!.child));
  const lag = async (r: Replica): Promise<number | null> => ((await request(`http://127.0.0.1:${r.opsPort}/readyz`)).json as { kafka?: { lag: number | null } }).kafka?.lag ?? null;
  t.ok(await until(async () => (await ready(r1)) && (await lag(r1)) === 0, 120_000, 100), `replica 1 consumed the ${produced} demo events`);

  const peer = `http://127.0.0.1:${r1.opsPort}`;
  for (const r of [r2, r3]) {
    r.proc = await serve(r, r.name, ['--bootstrap-from', peer]);
    t.teardown(() => kill(r.proc!.child));
    t.match(r.proc.stdout(), /bootstrapped .* from http:\/\/127\.0\.0\.1/, `${r.name} bootstrapped from replica 1`);
  }
  t.ok(await until(async () => (await ready(r2)) && (await ready(r3)), 60_000, 100), 'replicas 2 and 3 ready');

  // HAProxy binds a port picked free beforehand; picked again if another test's process took it meanwhile.
  const startHaproxy = (): Promise<{ lbPort: number; out: () => string }> => onFreePorts(1, async ([lbPort]) => {
    const haproxy = spawn(HAPROXY!, ['-db', '-f', path.join(ROOT, 'deploy', 'haproxy.cfg')], {
      env: {
        ...process.env, HAPROXY_BIND: `127.0.0.1:${lbPort}`,
        R1_API: `127.0.0.1:${r1.port}`, R2_API: `127.0.0.1:${r2.port}`, R3_API: `127.0.0.1:${r3.port}`,
        R1_OPS: String(r1.opsPort), R2_OPS: String(r2.opsPort), R3_OPS: String(r3.opsPort),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    haproxy.stdout.on('data', (c: Buffer) => (out += c.toString()));
    haproxy.stderr.on('data', (c: Buffer) => (out += c.toString()));
    t.teardown(() => kill(haproxy));
    const exited = (): boolean => haproxy.exitCode !== null || haproxy.signalCode !== null;
    await until(async () => exited() || (await request(`http://127.0.0.1:${lbPort}/v1/public/openapi.json`)).status === 200, 10_000, 100);
    if (exited() && /Address already in use/.test(out)) return TAKEN;
    return { lbPort: lbPort!, out: () => out };
  });
  const { lbPort, out: haproxyOut } = await startHaproxy();
  const lb = `http://127.0.0.1:${lbPort}/v1/public`;
  t.ok((await request(`${lb}/openapi.json`).catch(() => null))?.status === 200, `HAProxy answers ${haproxyOut()}`);

  // The read mix: every demo endpoint of every project the active demo keys see.
  const urls = await demoUrls(lb);
  t.ok(urls.length > 50, `${urls.length} demo endpoint URLs`);
  const load = autocannon({
    url: `http://127.0.0.1:${lbPort}`, connections: 16, duration: LOAD_SECONDS,
    requests: urls.map((u) => ({ method: 'GET', path: new URL(u.url).pathname + new URL(u.url).search, headers: { 'x-api-key': u.key } })),
  });

  // Under load: kill replica 2, start its replacement on the same ports from replica 1's snapshot,
  // and produce more events (new projects) that every replica must end up with.
  await sleep(KILL_AFTER_MS);
  const killedAt = performance.now();
  r2.proc!.child.kill('SIGKILL');
  await r2.proc!.exited.catch(() => undefined);
  for (const s of ['', '-wal', '-shm']) fs.rmSync(r2.db + s, { force: true }); // a new machine: no file
  const more = path.join(dir, 'more.ndjson');
  fs.writeFileSync(more, [...generateWorld({ ...DEMO_OPTIONS, seed: 4242, accounts: 2, projectsPerAccount: 1, sharedProjects: 0, days: 10 })].join('\n') + '\n');
  const producing = produceFiles(conn, topic, [more]);
  const r4: Replica = { ...r2, name: 'r4' };
  r4.proc = await serve(r4, 'r4', ['--bootstrap-from', peer]);
  t.teardown(() => kill(r4.proc!.child));
  t.ok(await until(() => ready(r4), 60_000, 100), 'the replacement is ready');
  const readySeconds = (performance.now() - killedAt) / 1000;
  const bootstrapLine = /bootstrapped .*: ([\d.]+) MiB in ([\d.]+) s/.exec(r4.proc.stdout());
  const extra = (await producing).sent;
  const result = await load;
  t.equal(result.non2xx, 0, 'no request through HAProxy failed with a non-2xx');
  t.equal(result.errors, 0, 'none failed at the connection (HAProxy retried the ones the killed replica dropped)');
  t.equal(result.timeouts, 0, 'none timed out');

  // Every replica consumes the extra events; then all have the same data and answer the same bytes.
  const live = [r1, r3, r4];
  const digestOf = (r: Replica): string => {
    const db = openDb(r.db, { readonly: true });
    try {
      return digest(db);
    } finally {
      db.close();
    }
  };
  const converged = await until(async () => {
    for (const r of live) if ((await lag(r)) !== 0) return false;
    const d = live.map(digestOf);
    return d.every((x) => x === d[0]);
  }, 90_000, 100);
  t.ok(converged, 'replicas 1, 3 and the replacement end with the same digest');
  const digests = live.map(digestOf);
  t.same(digests, [digests[0], digests[0], digests[0]], 'the digests');

  let compared = 0;
  const differing: string[] = [];
  for (const u of await demoUrls(`http://127.0.0.1:${r1.port}/v1/public`)) {
    const pathAndQuery = u.url.slice(`http://127.0.0.1:${r1.port}/v1/public`.length);
    const answers = await Promise.all(live.map((r) => request(`http://127.0.0.1:${r.port}/v1/public${pathAndQuery}`, withKey(u.key))));
    compared += 1;
    if (!answers.every((a) => a.status === answers[0]!.status && a.text === answers[0]!.text)) differing.push(pathAndQuery);
  }
  t.same(differing, [], `every one of ${compared} demo endpoint answers is byte-identical on the three replicas`);

  t.comment(`replicas: ${fmt(result.requests.total)} requests through HAProxy in ${LOAD_SECONDS} s (${fmt(result.requests.average)} req/s), ` +
    `${result.non2xx + result.errors + result.timeouts} failed; replica 2 SIGKILLed at ${KILL_AFTER_MS / 1000} s; ` +
    `its replacement bootstrapped ${bootstrapLine?.[1] ?? '?'} MiB in ${bootstrapLine?.[2] ?? '?'} s and was ready ${readySeconds.toFixed(1)} s after the kill; ` +
    `${produced} + ${extra} events; ${compared} endpoint URLs compared`);
});

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Every endpoint URL of every project each active demo key sees (run-group routes with the project's latest group). */
async function demoUrls(base: string): Promise<Array<{ url: string; key: string }>> {
  const out: Array<{ url: string; key: string }> = [];
  for (const k of activeKeys) {
    out.push({ url: `${base}/projects`, key: k.key });
    for (const p of (await request(`${base}/projects`, withKey(k.key))).json as Array<{ id: string }>) {
      const runs = (await request(`${base}/projects/${p.id}/runs`, withKey(k.key))).json as Array<{ id: string }>;
      for (const e of ENDPOINTS) {
        if (e.scope === 'project') out.push({ url: base + e.path.replace(':project_id', p.id), key: k.key });
        else if (e.scope === 'run_group' && runs[0]) out.push({ url: base + e.path.replace(':project_id', p.id).replace(':run_group_id', runs[0].id), key: k.key });
      }
    }
  }
  return out;
}

t.test('--bootstrap-from: /readyz says bootstrapping meanwhile; a bad snapshot or peer is one line, exit 2, nothing left behind', async (t) => {
  // A peer that sends a snapshot slowly, with a checksum that does not match: the replica is live
  // and not ready while it downloads, then refuses the file.
  const body = Buffer.alloc(256 * 1024, 7);
  const peer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-length': String(body.length), 'x-snapshot-sha256': '0'.repeat(64), 'x-snapshot-schema-version': '1' });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(body.subarray(sent, sent + 8192));
      sent += 8192;
      if (sent >= body.length) {
        clearInterval(timer);
        res.end();
      }
    }, 100);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => peer.close());
  const dir = tmpDir('bootstrap-');
  const db = path.join(dir, 'new.db');
  // The ops port is picked beforehand: the listening line comes only after the bootstrap.
  let seen: { status: number; json: unknown } | null = null;
  const { child, exited, opsPort } = await spawnServeOnFreePorts(['--db', db, '--bootstrap-from', `http://127.0.0.1:${(peer.address() as net.AddressInfo).port}`], {},
    async ({ opsPort }) => {
      const r = await request(`http://127.0.0.1:${opsPort}/readyz`);
      seen = { status: r.status, json: r.json };
      return true;
    });
  t.teardown(() => void child.kill('SIGKILL'));
  t.match(seen, { status: 503, json: { ready: false, reasons: [/^bootstrapping: downloading a snapshot from http:\/\/127\.0\.0\.1:\d+/] } }, '/readyz: 503 bootstrapping');
  t.equal((await request(`http://127.0.0.1:${opsPort}/livez`)).status, 200, '/livez: 200');
  const exit = await exited;
  t.equal(exit.code, 2, 'a checksum mismatch exits 2');
  t.match(exit.stderr, /^visibility-api serve: snapshot checksum mismatch: got [0-9a-f]{64}, the peer sent 0{64}\n$/, 'one line saying why');
  t.same(fs.readdirSync(dir), [], 'no database and no partial download left');

  const nobody = await freePort();
  const r = await runCli(['serve', '--db', db, '--port', '0', '--ops-port', '0', '--bootstrap-from', `http://127.0.0.1:${nobody}`]);
  t.equal(r.code, 2, 'an unreachable peer exits 2');
  t.match(r.stderr, /^visibility-api serve: cannot reach http:\/\/127\.0\.0\.1:\d+\/snapshot: [^\n]+\n$/);
  const bad = await runCli(['serve', '--db', db, '--bootstrap-from', 'ftp://x']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^visibility-api serve: --bootstrap-from must be an http\(s\) URL, got "ftp:\/\/x"\n$/);
});

t.test('/readyz with Kafka: not ready while the known lag is above MAX_READY_LAG; an unknown lag (Kafka down) does not block', (t) => {
  type Status = Parameters<typeof kafkaReadiness>[0];
  const status = (lag: number | null): Status => ({
    state: 'consuming', since: '2026-11-24T00:00:00.000Z', last_error: null, lag, partitions: [], dlq: null, brokers: ['127.0.0.1:9092'],
  }) as unknown as Status; // only the fields readiness reads
  t.equal(kafkaReadiness(status(10_001), true, 10_000).ready, false, '10,001 behind with a threshold of 10,000: not ready');
  t.match(kafkaReadiness(status(10_001), true, 10_000).reasons, [/^lagging 10001 events behind Kafka \(more than MAX_READY_LAG=10000\)$/]);
  t.equal(kafkaReadiness(status(10_000), true, 10_000).ready, true, 'at the threshold: ready');
  t.equal(kafkaReadiness(status(null), true, 10_000).ready, true, 'lag unknown: serves what it has');
  t.equal(kafkaReadiness(status(5_000_000), true, 0).ready, true, 'threshold 0: lag never blocks');
  t.equal(kafkaReadiness(status(0), false, 10_000).ready, false, 'no read model yet: not ready whatever the lag');
  t.end();
});
