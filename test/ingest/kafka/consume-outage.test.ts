// Kafka ingestion through outages, against a real broker of this file's own (test/helpers/kafka-ingest.ts):
//   a member leaves the group while another is catching up: the other applies every record once;
//   the disk filling up mid-stream: once there is room, every record applied once;
//   broker stopped for 30 s under read load on `serve`: every read served, /readyz says why;
//   broker back: ingestion resumes, the digest of a replay of everything produced.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import zlib from 'node:zlib';
import path from 'node:path';
import t from 'tap';
import { INGEST_NICE } from '../../../src/lib/worker';
import { eventKey, produceFiles } from '../../../src/ingest/kafka';
import { digest, openDb } from '../../../src/store';
import { DEMO_FILE } from '../../helpers/demo';
import { ev, id, run, W, world, writeNdjson } from '../../helpers/events';
import { tmpDir } from '../../helpers/db';
import { request, withKey } from '../../helpers/http';
import { sleep } from '../../helpers/wait';
import { conn, testLog, consume, generatedStream, settled, type Consumer, alive, BROKER, broker, caughtUp, dbDigest, endOffsets, freshTopic, lines, produceMessages, replayDigest, startService, terminate, threadNices, useTestBroker, waitFor } from '../../helpers/kafka-ingest';

useTestBroker();

t.test('a member leaves the group while another is catching up: the other applies every record once', async (t) => {
  // A rebalance drops what a member has fetched but not yet written (its queue), and every partition
  // it is given resumes at the offset its own SQLite holds: nothing applied twice, nothing skipped.
  // Large enough that both members are still catching up when the group is shared, and often when
  // the member that stays learns of the leave (its next heartbeat, up to 2 s later).
  const { stream, total, clean } = await generatedStream(t, 'kafka-rebalance-', 6, 4);
  const topic = await freshTopic();
  t.equal((await produceFiles(conn, topic, [stream], { log: testLog })).sent, total, `${total} events produced`);
  const ends = await endOffsets(topic);
  const members = await Promise.all([consume(t, topic), consume(t, topic)]);
  const assigned = (c: Consumer): number[] => c.ingest.status().partitions.filter((p) => p.assigned).map((p) => p.partition);
  // Each member's own view: the one assigned first sees the new split at its next heartbeat.
  const shared = (): boolean => members.every((m) => assigned(m).length > 0) && assigned(members[0]!).length + assigned(members[1]!).length === 3;
  await waitFor('the partitions shared by the two members', 30_000, shared, 20);
  // The member with the largest partition stays (keyed by project, the partitions are uneven).
  const largest = ends.indexOf(Math.max(...ends));
  const [stays, leaves] = assigned(members[0]!).includes(largest) ? members : [members[1]!, members[0]!];
  t.same([...assigned(stays!), ...assigned(leaves!)].sort(), [0, 1, 2], `shared: ${assigned(stays!).join(',')} and ${assigned(leaves!).join(',')}`);
  await leaves!.ingest.stop();
  await waitFor('the member that stays to have every partition', 30_000, () => assigned(stays!).length === 3, 20);
  await waitFor('the member that stays to catch up and settle', 120_000, () => settled(stays!.db, topic, ends), 100);
  const e = stays!.ingest.status().counters.events;
  t.equal(e.applied + e.duplicate + e.stale + e.dead_lettered, total, `each of the ${total} records applied once`);
  t.equal(digest(stays!.db), clean, 'the digest of a clean file replay');
});

t.test('the disk filling up under Kafka ingestion: once there is room, every record applied once', async (t) => {
  // A failed transaction drops what was fetched and restarts the consumer at SQLite's offsets. Until
  // then nothing fetched after the failure may be written: that would leave a gap behind the offset.
  const dir = tmpDir('kafka-full-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const demo = zlib.gunzipSync(fs.readFileSync(DEMO_FILE)).toString('utf8').split('\n').filter((l) => l !== '');
  const half = Math.floor(demo.length / 2);
  const [before, after] = [writeNdjson(path.join(dir, 'a.ndjson'), demo.slice(0, half)), writeNdjson(path.join(dir, 'b.ndjson'), demo.slice(half))];
  const topic = await freshTopic();
  await produceFiles(conn, topic, [before], { log: testLog });
  const c = await consume(t, topic);
  // Room for about a third of the first half, then SQLITE_FULL as from a full disk (a limit of the
  // consumer's connection: the test shares it).
  c.db.pragma('max_page_count = 400');
  await waitFor('a transaction to fail: the disk is full', 60_000, () => /full/.test(c.ingest.status().last_error ?? ''), 20);
  c.db.pragma('max_page_count = 1073741823'); // room again
  await produceFiles(conn, topic, [after], { log: testLog });
  const ends = await endOffsets(topic);
  await waitFor('the consumer to catch up and settle', 120_000, () => settled(c.db, topic, ends), 100);
  const e = c.ingest.status().counters.events;
  t.equal(e.applied + e.duplicate + e.stale + e.dead_lettered, demo.length, `each of the ${demo.length} records applied once`);
  t.equal(digest(c.db), await replayDigest(DEMO_FILE), 'the digest of a clean file replay');
});

interface Got { status: number; etag: string | undefined; body: string }

/** GET over a keep-alive agent, the body read whole (a read only counts once it has arrived). */
function get(url: string, agent: http.Agent, headers: Record<string, string>): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
  });
}

/** Resolves with `p`, or fails after `ms` saying what it waited for. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

interface ReadyzBody { status: string; ready: boolean; reasons: string[]; kafka: { state: string; last_error: string | null; partitions: unknown[] } }

t.test('broker stopped for 30 s under read load: every read served, /readyz says why; broker back: ingestion resumes', async (t) => {
  const OUTAGE_MS = 30_000;
  const CLIENTS = 4;
  const topic = await freshTopic();
  const dir = tmpDir('kafka-outage-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const before = [...world(), run({ n: 1, brand: 1, sentiment: 0.5, competitor: 2, citations: ['https://acme.com/a'] }), run({ n: 2, engine: W.engineB, brand: 2 })];
  await produceMessages(topic, lines(before).map((l) => ({ key: eventKey(l), value: l })));
  const ends = await endOffsets(topic);

  const dbFile = path.join(dir, 'service.db');
  const s = startService(t, dbFile, topic);
  const urls = await within(Promise.race([s.urls, s.exited.then(() => alive(s) && s.urls)]), 60_000, 'the service to listen');
  const readyz = async (): Promise<{ status: number; body: ReadyzBody }> => {
    const r = await request(`${urls.ops}/readyz`);
    return { status: r.status, body: r.json as ReadyzBody };
  };
  const reader = await waitFor('the database', 30_000, () => alive(s) && fs.existsSync(dbFile) && openDb(dbFile, { readonly: true }));
  t.teardown(() => reader.close());
  await waitFor('the first events to be applied', 60_000, () => alive(s) && caughtUp(reader, topic, ends), 200);
  const ready = await waitFor('/readyz ready', 30_000, async () => {
    const r = await readyz();
    return r.body.status === 'ready' && r;
  }, 200);
  t.match(ready, { status: 200, body: { ready: true, reasons: [], kafka: { state: 'consuming' } } }, '/readyz before the outage');
  // The serving thread keeps the default priority; the Kafka thread and its preparing thread run below it.
  const nices = threadNices(s.child.pid!);
  const own = os.getPriority(); // the service inherits this process's nice value (0 unless the tests run niced)
  t.equal(nices.get(s.child.pid!), own, `the serving (main) thread at nice ${own}`);
  const lowered = [...nices.values()].filter((n) => n === INGEST_NICE).length;
  if (own < INGEST_NICE) t.equal(lowered, 2, `two threads (Kafka, preparing) at nice ${INGEST_NICE}`);
  else t.equal(lowered, own === INGEST_NICE ? nices.size : 0, `tests run at nice ${own}: no thread is raised or lowered`);
  const projectsBefore = (await request(`${urls.api}/projects`, withKey(W.key))).json;

  // The read load: a few keep-alive clients, each request after the previous answer and a short pause
  // (bounded: ~100 requests/s at most, and never past loadDeadline).
  const paths = ['/projects', `/projects/${W.project}`, `/projects/${W.project}/visibility`, `/projects/${W.project}/runs`,
    `/projects/${W.project}/mentions`, `/projects/${W.project}/citations`, `/projects/${W.project}/competitor-rankings`, `/runs/${W.group}`];
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  t.teardown(() => agent.destroy());
  type Phase = 'before' | 'outage' | 'after';
  let phase: Phase = 'before';
  const served: Record<Phase, { 200: number; 304: number }> = { before: { 200: 0, 304: 0 }, outage: { 200: 0, 304: 0 }, after: { 200: 0, 304: 0 } };
  const errors: string[] = [];
  let errorCount = 0;
  let stopLoad = false;
  const loadDeadline = Date.now() + 240_000;
  const etags = new Map<string, string>();
  const client = async (i: number): Promise<void> => {
    for (let n = i; !stopLoad && Date.now() < loadDeadline; n++) {
      const p = paths[n % paths.length]!;
      const etag = etags.get(p);
      const conditional = etag !== undefined && n % 2 === 0; // half of them revalidate: 304 while nothing changed
      const at = phase;
      try {
        const r = await get(`${urls.api}${p}`, agent, { 'x-api-key': W.key, 'accept-encoding': 'gzip', ...(conditional ? { 'if-none-match': etag } : {}) });
        if (r.status === 200 || r.status === 304) {
          served[at][r.status] += 1;
          if (r.status === 200 && r.etag) etags.set(p, r.etag);
        } else {
          errorCount += 1;
          if (errors.length < 10) errors.push(`${at}: ${r.status} ${p} ${r.body.slice(0, 200)}`);
        }
      } catch (e) {
        errorCount += 1;
        if (errors.length < 10) errors.push(`${at}: ${p}: ${(e as Error).message}`);
      }
      await sleep(40);
    }
  };
  const load = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  t.teardown(async () => {
    stopLoad = true;
    await load;
  });
  await waitFor('reads before the outage', 30_000, () => served.before[200] + served.before[304] >= 20, 100);

  // /readyz sampled twice a second through the outage.
  const samples: Array<{ phase: Phase; at: number; status: number; body: ReadyzBody }> = [];
  let stopSampling = false;
  const sampling = (async () => {
    while (!stopSampling && Date.now() < loadDeadline) {
      const at = phase;
      const r = await readyz();
      samples.push({ phase: at, at: Date.now(), ...r });
      await sleep(500);
    }
  })();
  t.teardown(async () => {
    stopSampling = true;
    await sampling;
  });

  phase = 'outage';
  await broker!.stop();
  const down = Date.now();
  const degraded = await waitFor('/readyz to report the outage', 30_000, () => samples.find((x) => x.body.status === 'degraded'), 100);
  t.equal(degraded.status, 200, '/readyz: 200 while the API serves data');
  t.equal(degraded.body.ready, true);
  const reason = degraded.body.reasons.join(' | ');
  // Whichever notices first words it: the lag probe (cannot reach Kafka) or kafkajs (No broker available, ...).
  t.match(reason, new RegExp(`Kafka (disconnected|restarting) \\(${BROKER.replace(/\./g, '\\.')}\\) since \\S+: \\S.*serving the last data applied`), `reason: ${reason}`);
  t.ok(['disconnected', 'restarting'].includes(degraded.body.kafka.state), `state ${degraded.body.kafka.state}`);
  t.equal(degraded.body.kafka.partitions.length, 3, 'partitions still listed');
  const during = await request(`${urls.api}/projects`, withKey(W.key));
  t.equal(during.status, 200, 'the API still answers');
  t.same(during.json, projectsBefore, 'with the last data');
  await sleep(Math.max(0, down + OUTAGE_MS - Date.now()));
  const outageMs = Date.now() - down;

  phase = 'after';
  await broker!.start();
  const outage = samples.filter((x) => x.at >= degraded.at && x.at <= down + outageMs);
  t.ok(outage.length >= 10, `${outage.length} /readyz samples during the outage`);
  t.same(outage.filter((x) => x.status !== 200 || x.body.status !== 'degraded' || x.body.reasons.length === 0).map((x) => [x.status, x.body.status]), [],
    'every /readyz answer during the outage: 200, degraded, with a reason');

  // Produced after the broker is back: a new project and a new run of the first one.
  const added = id(3, 'bbbbbbbb');
  const later = [
    ev('project.upserted', { id: added, company_id: W.account, name: 'Acme Two', status: 'active', created_at: '2026-02-01T00:00:00Z', updated_at: '2026-02-01T00:00:00Z' }, '2026-02-01T00:00:00.000Z'),
    run({ n: 3, prompt: W.prompt2, day: '2026-01-06', brand: 3, citations: ['https://acme.com/b'] }),
  ];
  await produceMessages(topic, lines(later).map((l) => ({ key: eventKey(l), value: l })));
  const after = await waitFor('the new project to be served', 120_000, async () => {
    alive(s);
    const r = await request(`${urls.api}/projects`, withKey(W.key));
    const list = r.status === 200 ? (r.json as Array<{ id: string; name: string }>) : [];
    return list.some((p) => p.id === added) && list;
  }, 250);
  t.ok(after.some((p) => p.id === added && p.name === 'Acme Two'), 'ingestion resumed: an event produced after the restart is served');
  const back = await waitFor('/readyz to be ready again', 60_000, async () => {
    const r = await readyz();
    return r.body.status === 'ready' && r;
  }, 250);
  t.match(back, { status: 200, body: { reasons: [], kafka: { state: 'consuming' } } }, '/readyz after the outage');
  await waitFor('reads after the outage', 30_000, () => served.after[200] + served.after[304] >= 20, 100);

  stopLoad = true;
  stopSampling = true;
  await Promise.all([load, sampling]);
  t.comment(`reads served: ${JSON.stringify(served)}; outage ${(outageMs / 1000).toFixed(1)} s`);
  t.same(errors, [], 'no read failed');
  t.equal(errorCount, 0, '0 errors');
  t.ok(served.outage[200] + served.outage[304] >= 50, `${served.outage[200] + served.outage[304]} reads during the outage`);
  t.ok(served.before[304] + served.outage[304] > 0 && served.after[200] > 0, 'both 200 and 304 answers');

  t.equal(await terminate(s), 0, 'SIGTERM: clean exit');
  const all = writeNdjson(path.join(dir, 'all.ndjson'), [...before, ...later]);
  const final = dbDigest(dbFile);
  t.equal(final.deadLetters, 0, 'no dead letters');
  t.equal(final.digest, await replayDigest(all), 'the digest of a replay of everything produced, before and after the outage');
});
