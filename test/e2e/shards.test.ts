// Sharded writers, on loopback: one broker, the demo world produced with its catalog facts
// in a topic of their own, two shards (`serve --shard K/2`) of two replicas each, and one unsharded
// service fed the same topics as the reference. Checks: each shard holds exactly its projects and
// answers every endpoint of them with the unsharded service's bytes; `/projects` is the same
// everywhere for every key; a project of the other shard is the plain 404 with the reason on the
// ops side; a new event reaches only its shard; a replica of a shard bootstraps only from a snapshot
// that holds its partitions.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import autocannon from 'autocannon';
import { Kafka, logLevel } from 'kafkajs';
import t from 'tap';
import { ENDPOINTS } from '../../src/readmodels';
import { kafkaConnectionFromEnv, produceFiles } from '../../src/ingest/kafka';
import { partitionOf } from '../../src/lib/partition';
import { openDb } from '../../src/store';
import { testBroker } from '../helpers/broker';
import { tmpDir } from '../helpers/db';
import { activeKeys, DEMO_FILE } from '../helpers/demo';
import { request, withKey } from '../helpers/http';
import { runCli, startServe, type ServeProcess } from '../helpers/processes';
import { postMcp, toolCall } from '../helpers/mcp';
import { startShardRouter, type RouterReplica as Replica } from '../helpers/shard-router';
import { sleep, until } from '../helpers/wait';

const PARTITIONS = 6;
const SHARDS = 2;
const LOAD_SECONDS = 12;
const KILL_AFTER_MS = 3000;

interface Node { name: string; db: string; shard: string | null; proc?: ServeProcess; ports?: Replica }

t.test('2 shards of the demo world answer what one unsharded service answers, each for its own projects', async (t) => {
  const broker = await testBroker();
  t.teardown(() => broker.close());
  const topic = `shards-${Date.now()}`;
  const catalog = `${topic}-catalog`;
  const admin = new Kafka({ brokers: [broker.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }, { topic: catalog, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const conn = kafkaConnectionFromEnv({ KAFKA_BROKERS: broker.brokers, KAFKA_LOG_LEVEL: 'error' });
  const produced = await produceFiles(conn, topic, [DEMO_FILE], { catalogTopic: catalog });

  const dir = tmpDir('shards-');
  const env = (name: string): NodeJS.ProcessEnv => ({
    KAFKA_BROKERS: broker.brokers, KAFKA_TOPICS: topic, KAFKA_CATALOG_TOPIC: catalog, KAFKA_GROUP_ID: `${topic}-${name}`,
    KAFKA_DLQ_TOPIC: '', KAFKA_LOG_LEVEL: 'error', LOG_LEVEL: 'info', MAX_READY_LAG: '0', LOG_HIT_SAMPLE: '1',
  });
  // When the test fails, say which process was where and whether one died early (a failure far from
  // its cause otherwise: an ECONNREFUSED names only a port).
  const started: Node[] = [];
  let ending = false;
  t.teardown(() => {
    ending = true;
    if (t.passing()) return;
    for (const n of started) {
      const p = n.proc!;
      const state = p.child.exitCode !== null || p.child.signalCode !== null ? `exited ${p.child.exitCode ?? p.child.signalCode}` : 'running';
      const warnings = p.stdout().split('\n').filter((l) => /"level":(40|50|60)|error|warn/i.test(l)).slice(-6);
      t.comment(`${n.name}: ${p.base} ops ${p.ops}, ${state}; stderr: ${p.stderr().split('\n').slice(-8).join(' | ')}; log: ${warnings.join(' | ')}`);
    }
  });
  const kill = (n: Node): void => void (n.proc && n.proc.child.exitCode === null && n.proc.child.signalCode === null && n.proc.child.kill('SIGKILL'));
  const serve = async (n: Node, extra: string[] = []): Promise<ServeProcess> => {
    const ports = ['--port', String(n.ports?.port ?? 0), '--ops-port', String(n.ports?.opsPort ?? 0)];
    // No rate limit: the load below is one key's, far past serve's default per-key rate, and counts every non-2xx.
    n.proc = await startServe(['--db', n.db, ...ports, '--rate-limit', '0', ...(n.shard ? ['--shard', n.shard] : []), ...extra], env(n.name));
    started.push(n);
    const proc = n.proc;
    void proc.exited.then((e) => { if (!ending) t.comment(`${n.name} exited (${e.code ?? e.signal}); stderr: ${e.stderr.split('\n').slice(-8).join(' | ')}`); }, () => undefined);
    t.teardown(() => kill(n));
    return n.proc;
  };
  const node = (name: string, shard: string | null): Node => ({ name, db: path.join(dir, `${name}.db`), shard });
  const readyz = async (n: Node): Promise<{ status: number; json: Record<string, unknown> }> => {
    const r = await request(`${n.proc!.ops}/readyz`);
    return { status: r.status, json: r.json as Record<string, unknown> };
  };
  const caughtUp = async (n: Node): Promise<boolean> => {
    const r = await readyz(n);
    return r.status === 200 && (r.json.kafka as { lag: number | null }).lag === 0;
  };

  const whole = node('whole', null);
  const shards = [node('s0a', '0/2'), node('s1a', '1/2')];
  await Promise.all([whole, ...shards].map((n) => serve(n)));
  t.ok(await until(async () => (await Promise.all([whole, ...shards].map(caughtUp))).every(Boolean), 120_000, 100),
    `the unsharded service and both shards consumed the ${produced.sent} demo events`);

  // What each says it is.
  for (const [k, s] of shards.entries()) {
    const r = await readyz(s);
    t.match(r.json.shard, { shard: `${k}/2`, k, n: 2, partitions: PARTITIONS, catalog_topic: catalog }, `${s.name}'s /readyz names its shard`);
    const assigned = (r.json.kafka as { partitions: Array<{ topic: string; partition: number; assigned: boolean }> }).partitions.filter((p) => p.assigned);
    t.same(assigned.filter((p) => p.topic === topic).map((p) => p.partition), [0, 1, 2, 3, 4, 5].filter((p) => p % SHARDS === k), `${s.name} consumes its partitions of the events topic`);
    t.same(assigned.filter((p) => p.topic === catalog).map((p) => p.partition), [0], `${s.name} consumes the whole catalog topic`);
    t.match((await request(`${s.proc!.ops}/metrics`)).text, new RegExp(`visibility_shard_info\\{shard="${k}/2",partitions="${PARTITIONS}"\\} 1`), `${s.name}'s /metrics names its shard`);
  }
  t.notOk('shard' in (await readyz(whole)).json, 'the unsharded service names no shard');

  // Every key's project list, and every endpoint of every project it sees.
  const base = (n: Node): string => n.proc!.base;
  const projectsOf = new Map<string, Array<{ id: string }>>();
  for (const k of activeKeys) {
    const reference = await request(`${base(whole)}/projects`, withKey(k.key));
    projectsOf.set(k.key, reference.json as Array<{ id: string }>);
    for (const s of shards) {
      const r = await request(`${base(s)}/projects`, withKey(k.key));
      t.equal(`${r.status} ${r.text}`, `${reference.status} ${reference.text}`, `/projects of key ${k.key.slice(0, 12)}… on ${s.name} equals the unsharded answer`);
    }
  }
  const allProjects = [...new Set([...projectsOf.values()].flat().map((p) => p.id))];
  const owner = (id: string): Node => shards[partitionOf(id, PARTITIONS) % SHARDS]!;
  t.same(new Set(allProjects.map((id) => owner(id).name)), new Set(['s0a', 's1a']), 'the demo projects fall in both shards');

  /** Every endpoint of every project each key sees: the owner among `nodes` answers the reference's bytes, the others the plain 404. */
  const checkAnswers = async (nodes: Node[], label: string, router?: string): Promise<void> => {
    const ownerIn = (id: string): Node => nodes[partitionOf(id, PARTITIONS) % SHARDS]!;
    const ownerBase = (id: string): string => router ?? base(ownerIn(id));
    let compared = 0;
    const differing: string[] = [];
    const leaked: string[] = [];
    for (const k of activeKeys) {
      for (const p of projectsOf.get(k.key)!) {
        const runs = (await request(`${base(whole)}/projects/${p.id}/runs`, withKey(k.key))).json as Array<{ id: string }>;
        const paths: string[] = [];
        for (const e of ENDPOINTS) {
          const filled = e.path.replace(':project_id', p.id).replace(':run_group_id', runs[0]?.id ?? '');
          if (e.scope === 'project' || (e.scope === 'run_group' && runs[0])) paths.push(filled);
        }
        for (const pth of paths) {
          const [want, got, ...others] = await Promise.all([base(whole), ownerBase(p.id), ...nodes.filter((n) => n !== ownerIn(p.id)).map(base)]
            .map((b) => request(`${b}${pth}`, withKey(k.key))));
          compared += 1;
          if (got!.status !== want!.status || got!.text !== want!.text) differing.push(`${router ? 'router' : ownerIn(p.id).name} ${pth}`);
          for (const other of others) if (other.status !== 404 || other.text !== '{"error":true,"message":"Not found"}') leaked.push(`${pth} ${other.status}`);
        }
      }
    }
    t.same(differing, [], `${label}: every one of ${compared} endpoint answers of the owning shard is byte-identical to the unsharded service's`);
    t.same(leaked, [], `${label}: the other shard answers each of them with the plain 404`);
  };
  await checkAnswers(shards, 'shards from the topics');

  // The ops side says why: the access line's reason and the misrouted counter.
  const foreign = allProjects.find((id) => owner(id) === shards[1])!;
  const key = activeKeys.find((k) => projectsOf.get(k.key)!.some((p) => p.id === foreign))!.key;
  const misrouted = await request(`${base(shards[0]!)}/projects/${foreign}/visibility`, withKey(key));
  t.equal(misrouted.status, 404);
  t.ok(await until(async () => /"status":404[^\n]*"reason":"project on shard 1\/2 \(partition \d+ of 6\), not on this shard 0\/2"/.test(shards[0]!.proc!.stdout()), 5000, 50),
    'the access line of a misrouted request says which shard holds the project');
  t.match((await request(`${shards[0]!.proc!.ops}/metrics`)).text, /visibility_shard_misrouted_total [1-9]\d*/, 'and /metrics counts it');

  // Each shard holds its projects' data and no other's (every project's catalog row, though).
  for (const s of shards) {
    const db = openDb(s.db, { readonly: true });
    try {
      const withRuns = (db.prepare('SELECT DISTINCT k.id FROM runs r JOIN keys k ON k.n = r.project').pluck().all() as string[]).sort();
      t.same(withRuns, allProjects.filter((id) => owner(id) === s).sort(), `${s.name} holds the runs of its projects only`);
      t.equal(db.prepare('SELECT count(*) FROM projects').pluck().get(), allProjects.length, `${s.name} holds every project's catalog row`);
      t.equal(db.prepare('SELECT count(*) FROM dead_letters').pluck().get(), 0, `${s.name} dead-lettered nothing`);
    } finally {
      db.close();
    }
  }

  // A new event reaches only its shard (and the unsharded service).
  const target = allProjects.find((id) => owner(id) === shards[0])!;
  const demoLines = zlib.gunzipSync(fs.readFileSync(DEMO_FILE)).toString('utf8').split('\n');
  const run = JSON.parse(demoLines.find((l) => l.includes('"prompt_run.completed"') && l.includes(target))!) as { event_id: string; data: { id: string } };
  run.event_id = randomUUID();
  run.data.id = randomUUID();
  const more = path.join(dir, 'one-more.ndjson');
  fs.writeFileSync(more, JSON.stringify(run) + '\n');
  const positionsOf = (n: Node): string => {
    const db = openDb(n.db, { readonly: true });
    try {
      return JSON.stringify(db.prepare("SELECT source, position FROM source_positions WHERE source GLOB 'kafka:*' ORDER BY source").all());
    } finally {
      db.close();
    }
  };
  const hasRun = (n: Node): boolean => {
    const db = openDb(n.db, { readonly: true });
    try {
      return db.prepare('SELECT 1 FROM runs WHERE id = ?').get(run.data.id) !== undefined;
    } finally {
      db.close();
    }
  };
  const otherBefore = positionsOf(shards[1]!);
  await produceFiles(conn, topic, [more], { catalogTopic: catalog });
  t.ok(await until(async () => hasRun(shards[0]!) && hasRun(whole), 30_000, 50), 'the new run reached its shard and the unsharded service');
  t.ok(await until(() => caughtUp(shards[1]!), 10_000, 50), 'the other shard is caught up');
  t.notOk(hasRun(shards[1]!), 'the other shard never saw it');
  t.equal(positionsOf(shards[1]!), otherBefore, 'the other shard read no record since: the run went to a partition it does not consume');

  // A replica of a shard bootstraps from a peer of the same shard, and refuses another shard's snapshot.
  const wrong = node('s1-from-s0', '1/2');
  const refused = await runCli(['serve', '--db', wrong.db, '--port', '0', '--ops-port', '0', '--shard', '1/2', '--bootstrap-from', shards[0]!.proc!.ops], env(wrong.name));
  t.equal(refused.code, 2, 'a replica of shard 1/2 refuses the snapshot of shard 0/2: exit 2');
  t.match(refused.stderr, /^visibility-api serve: http:\/\/127\.0\.0\.1:\d+\/snapshot holds shard 0\/2, which lacks partitions of shard 1\/2: bootstrap from a peer of the same shard\n$/, 'in one line saying why');
  t.notOk(fs.existsSync(wrong.db), 'and leaves no file');
  const wholeFromShard = await runCli(['serve', '--db', wrong.db, '--port', '0', '--ops-port', '0', '--bootstrap-from', shards[0]!.proc!.ops], env('whole-from-shard'));
  t.match(`${wholeFromShard.code} ${wholeFromShard.stderr}`, /^2 visibility-api serve: .* holds shard 0\/2, which lacks partitions of every partition/, 'an unsharded replica refuses a shard\'s snapshot too');

  // Resharding 1 -> 2, rehearsed: each new shard starts from the unsharded store's snapshot, cuts
  // the other shard's projects, and resumes from the offsets in it.
  const cutStarted = performance.now();
  const resharded = [node('r0', '0/2'), node('r1', '1/2')];
  await Promise.all(resharded.map((n) => serve(n, ['--bootstrap-from', whole.proc!.ops])));
  t.ok(await until(async () => (await Promise.all(resharded.map(caughtUp))).every(Boolean), 60_000, 100), 'both shards cut from the unsharded snapshot are ready and caught up');
  const reshardSeconds = (performance.now() - cutStarted) / 1000;
  for (const [k, n] of resharded.entries()) {
    t.match((await readyz(n)).json.shard, { shard: `${k}/2`, partitions: PARTITIONS }, `${n.name} holds shard ${k}/2`);
    const db = openDb(n.db, { readonly: true });
    try {
      const withRuns = (db.prepare('SELECT DISTINCT k.id FROM runs r JOIN keys k ON k.n = r.project').pluck().all() as string[]).sort();
      t.same(withRuns, allProjects.filter((id) => partitionOf(id, PARTITIONS) % SHARDS === k).sort(), `${n.name} kept the runs of its projects only`);
      const sources = db.prepare("SELECT source FROM source_positions WHERE source GLOB ?").pluck().all(`kafka:${topic}:*`) as string[];
      t.ok(sources.every((src) => Number(src.split(':').at(-1)) % SHARDS === k), `${n.name} kept the offsets of its partitions only`);
    } finally {
      db.close();
    }
  }
  await checkAnswers(resharded, 'shards cut from the unsharded snapshot');
  const bootLines = resharded.map((n) => /bootstrapped .*: ([\d.]+) MiB in ([\d.]+) s/.exec(n.proc!.stdout())?.slice(1, 3).join(' MiB in ') ?? '?');
  // Settings a shard refuses, each in one line with exit 2.
  const refusals: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [['--shard', '0/2'], { KAFKA_CATALOG_TOPIC: '' }, /^visibility-api serve: SHARD=0\/2 needs KAFKA_CATALOG_TOPIC: .*\n$/],
    [['--shard', '2/2'], {}, /^visibility-api serve: SHARD: "2\/2": K must be 0 to N-1\n$/],
    [['--shard', '0/8'], {}, /^visibility-api serve: SHARD=0\/8: shards-\d+ has 6 partitions, fewer than 8 shards\n$/],
    [['--shard', '0/2', '--db', shards[1]!.db], {}, /^visibility-api serve: SHARD=0\/2: .*s1a\.db holds shard 1\/2, which lacks partitions of 0\/2: .*\n$/],
    [['--shard', '0/2'], { KAFKA_BROKERS: '' }, /^visibility-api serve: --shard needs Kafka \(--kafka-brokers or KAFKA_BROKERS\)\n$/],
    [['--db', shards[1]!.db], {}, /^visibility-api serve: .*s1a\.db holds shard 1\/2: start it with --shard 1\/2 \(SHARD\), or start an unsharded replica on a new file\n$/],
  ];
  for (const [args, extraEnv, message] of refusals) {
    const dbArgs = args.includes('--db') ? [] : ['--db', path.join(dir, 'refused.db')];
    const r = await runCli(['serve', ...dbArgs, '--port', '0', '--ops-port', '0', ...args], { ...env('refused'), ...extraEnv });
    t.match(`${r.code} ${r.stderr}`, new RegExp(`^2 ${message.source.slice(1)}`), `refused: ${args.join(' ')} ${JSON.stringify(extraEnv)}`);
  }

  // Two replicas per shard behind the router: each shard's second replica from its first one's snapshot.
  const twins = [node('s0b', '0/2'), node('s1b', '1/2')];
  await Promise.all(twins.map((n, k) => serve(n, ['--bootstrap-from', shards[k]!.proc!.ops])));
  t.ok(await until(async () => (await Promise.all(twins.map(caughtUp))).every(Boolean), 60_000, 100), 'each shard\'s second replica bootstrapped from its first and caught up');
  const replicaOf = (n: Node): Replica => ({ port: Number(new URL(n.proc!.base).port), opsPort: Number(new URL(n.proc!.ops).port) });
  const fleet = [[shards[0]!, twins[0]!], [shards[1]!, twins[1]!]];
  const router = await startShardRouter({ shards: fleet.map((s) => ({ replicas: s.map(replicaOf) })), partitions: PARTITIONS });
  t.teardown(() => router.stop());
  const lb = `${router.base}/v1/public`;
  for (const k of activeKeys) {
    const [want, got] = await Promise.all([base(whole), lb].map((b) => request(`${b}/projects`, withKey(k.key))));
    if (got!.text !== want!.text || got!.status !== want!.status) t.fail(`/projects of ${k.key.slice(0, 12)}… through the router differs`);
  }
  t.pass(`/projects through the router equals the unsharded answer for each of the ${activeKeys.length} keys`);
  await checkAnswers(shards, 'through the router', lb);

  // MCP through the router: a tool call for a project of either shard answers what the unsharded service answers.
  for (const id of [allProjects.find((x) => owner(x) === shards[0])!, allProjects.find((x) => owner(x) === shards[1])!]) {
    const k = activeKeys.find((x) => projectsOf.get(x.key)!.some((p) => p.id === id))!.key;
    const call = JSON.stringify(toolCall(7, 'competitor_rankings', { project_id: id }));
    const [want, got] = await Promise.all([new URL(base(whole)).origin, router.base].map((o) => postMcp(o, k, call)));
    t.same([got!.status, got!.text], [want!.status, want!.text], `MCP competitor_rankings of a shard-${partitionOf(id, PARTITIONS) % SHARDS} project through the router`);
  }

  // The change feed through the router: a new run of a shard-1 project is announced on its stream.
  const fed = allProjects.find((x) => owner(x) === shards[1])!;
  const fedKey = activeKeys.find((x) => projectsOf.get(x.key)!.some((p) => p.id === fed))!.key;
  const events: string[] = [];
  const stream = http.get(`${lb}/projects/${fed}/changes`, { headers: { 'x-api-key': fedKey, accept: 'text/event-stream' } }, (res) => {
    res.on('data', (c: Buffer) => events.push(c.toString()));
  });
  t.teardown(() => stream.destroy());
  await until(async () => events.length > 0, 5000, 20); // the stream's opening comment
  const fedRun = JSON.parse(demoLines.find((l) => l.includes('"prompt_run.completed"') && l.includes(fed))!) as { event_id: string; data: { id: string } };
  fedRun.event_id = randomUUID();
  fedRun.data.id = randomUUID();
  fs.writeFileSync(more, JSON.stringify(fedRun) + '\n');
  await produceFiles(conn, topic, [more], { catalogTopic: catalog });
  t.ok(await until(async () => /event: change/.test(events.join('')), 20_000, 50), 'the change feed of a shard-1 project through the router announced its new run');
  stream.destroy();

  // Under read load through the router, one replica of each shard is SIGKILLed and replaced from its shard's peer.
  const urls: Array<{ path: string; key: string }> = [];
  for (const k of activeKeys) {
    urls.push({ path: '/v1/public/projects', key: k.key });
    for (const p of projectsOf.get(k.key)!) for (const e of ENDPOINTS) if (e.scope === 'project') urls.push({ path: `/v1/public${e.path.replace(':project_id', p.id)}`, key: k.key });
  }
  const load = autocannon({
    url: router.base, connections: 16, duration: LOAD_SECONDS,
    requests: urls.map((u) => ({ method: 'GET', path: u.path, headers: { 'x-api-key': u.key } })),
  });
  await sleep(KILL_AFTER_MS);
  const killedAt = performance.now();
  const replaced: Node[] = [];
  for (const n of twins) {
    const ports = replicaOf(n);
    n.proc!.child.kill('SIGKILL');
    await n.proc!.exited.catch(() => undefined);
    for (const x of ['', '-wal', '-shm']) fs.rmSync(n.db + x, { force: true }); // a new machine: no file
    replaced.push({ name: `${n.name}-new`, db: n.db, shard: n.shard, ports }); // on the same ports: the router's config names them
  }
  await Promise.all(replaced.map((n, k) => serve(n, ['--bootstrap-from', shards[k]!.proc!.ops])));
  t.ok(await until(async () => (await Promise.all(replaced.map(caughtUp))).every(Boolean), 60_000, 100), 'both replacements bootstrapped from their shard\'s peer and are ready');
  const readySeconds = (performance.now() - killedAt) / 1000;
  const result = await load;
  t.equal(result.non2xx, 0, 'no request through the router failed with a non-2xx');
  t.equal(result.errors + result.timeouts, 0, 'none failed at the connection or timed out');
  for (const [k, n] of replaced.entries()) t.match((await readyz(n)).json.shard, { shard: `${k}/2` }, `${n.name} holds shard ${k}/2`);
  await checkAnswers([replaced[0]!, replaced[1]!], 'the replacements');
  t.comment(`router: ${Math.round(result.requests.total)} requests in ${LOAD_SECONDS} s (${Math.round(result.requests.average)} req/s) over ${urls.length} URLs, ` +
    `${result.non2xx + result.errors + result.timeouts} failed; one replica of each shard SIGKILLed at ${KILL_AFTER_MS / 1000} s, replacements ready ${readySeconds.toFixed(1)} s after`);

  t.comment(`resharding 1 -> 2: both shards bootstrapped (${bootLines.join(' s; ')} s), cut and caught up ${reshardSeconds.toFixed(1)} s after their start`);
});
