// Pushed signals end to end in one process: events -> the projector -> the deliverer -> a receiver
// over loopback that verifies each signature with the standardwebhooks package. The numbers sent are
// GET /signals's for the same dates; a message is queued once; retries keep the webhook-id; what the
// account cannot see is never sent; addresses outside the allowed ones are refused.
import t, { type Test } from 'tap';
import { Registry } from 'prom-client';
import { Deliverer, planFeed, retryDelay } from '../../src/deliver';
import { openReadStore, WebhookStore } from '../../src/store';
import { asSource, ev, id, run, W } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { startApi, request } from '../helpers/http';
import { capturedLogger } from '../helpers/log';
import { until } from '../helpers/wait';
import { HOOK, newSecret, OTHER_HOOK, periods, plantedWorld, Receiver, subscribed } from '../helpers/webhooks';

type Env = ReturnType<typeof freshDb> & { logger: ReturnType<typeof capturedLogger> };

function setup(t: Test, before: number, after: number): Env {
  const env = freshDb(t);
  env.projector.applyBatch(asSource(plantedWorld(before, after)));
  return { ...env, logger: capturedLogger('debug') };
}

function deliverer(t: Test, env: Env, o: Partial<ConstructorParameters<typeof Deliverer>[0]> = {}): Deliverer {
  const d = new Deliverer({ dbFile: env.file, logger: env.logger.logger, allowLoopback: true, graceMs: 0, planEveryMs: 0, retryBaseMs: 50, ...o });
  t.teardown(() => d.stop());
  return d;
}

let position = 1000;
function apply(env: Env, ...events: ReturnType<typeof ev>[]): void {
  env.projector.applyBatch(asSource(events, 'test', (position += 100)));
}

async function apiSignals(env: Env, key = W.key): Promise<{ signals: Array<Record<string, unknown>>; version: string | undefined }> {
  const api = await startApi({ db: env.db, buildThreads: 0 });
  try {
    const p = periods();
    const r = await request(`${api.base}/projects/${W.project}/signals?start_date=${p.start}&end_date=${p.end}`, { headers: { 'x-api-key': key } });
    return { signals: (r.json as { signals: Array<Record<string, unknown>> }).signals, version: r.headers['x-data-version'] as string | undefined };
  } finally {
    await api.close();
  }
}

t.test('a planted change is delivered once, signed, with the numbers GET /signals shows for the period', async (t) => {
  const env = setup(t, 2, 18);
  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  t.teardown(() => rx.close());
  // The other account asks for a project it does not see: it gets nothing of it.
  const otherSecret = newSecret();
  const other = await new Receiver(otherSecret).listen();
  t.teardown(() => other.close());
  apply(env, subscribed(HOOK, W.account, rx.url, secret), subscribed(OTHER_HOOK, W.otherAccount, other.url, otherSecret, ['signal.detected', 'data.changed'], [W.project]));

  const d = deliverer(t, env);
  await d.tick();
  const api = await apiSignals(env);
  t.ok(api.signals.length >= 1, `the API shows signals for the period (${api.signals.length})`);
  t.equal(rx.received.length, api.signals.length, 'one message per signal');
  t.equal(rx.ids().size, api.signals.length, 'each with its own webhook-id');
  t.same(rx.unverified, [], 'every signature verifies');
  const p = periods();
  for (const [i, m] of rx.received.entries()) {
    t.equal(m.body.type, 'signal.detected');
    t.same(m.body.data.signal, api.signals[i], 'the signal is the API\'s, field for field, in its order');
    t.match(m.body.data, { project_id: W.project, start_date: p.start, end_date: p.end, compare_start_date: p.prevStart, compare_end_date: p.prevEnd, false_discovery_rate: 0.05, subscription_id: HOOK });
    t.equal(String(m.body.data.data_version), api.version, 'the data version the API answers with');
    t.type(m.body.data.data_as_of, 'string');
  }
  t.same(other.received, [], 'nothing of another account\'s project');

  await d.tick();
  await d.tick();
  t.equal(rx.received.length, api.signals.length, 'the period is tested once: later looks send nothing more');
  t.equal(d.outcomes.delivered, api.signals.length);
  const registry = new Registry();
  d.register(registry);
  const metrics = await registry.metrics();
  t.match(metrics, new RegExp(`visibility_webhook_deliveries_total\\{outcome="delivered"\\} ${api.signals.length}`));
  t.match(metrics, new RegExp(`visibility_webhook_outbox\\{status="delivered"\\} ${api.signals.length}`));
  const logged = JSON.stringify(env.logger.lines);
  t.notOk(logged.includes(secret.slice(6)) || logged.includes(otherSecret.slice(6)), 'no secret in any log line');
});

t.test('a steady world delivers nothing', async (t) => {
  const env = setup(t, 10, 10);
  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  t.teardown(() => rx.close());
  apply(env, subscribed(HOOK, W.account, rx.url, secret));
  const d = deliverer(t, env);
  await d.tick();
  await d.tick();
  t.same((await apiSignals(env)).signals, [], 'the API shows no signal either');
  t.same(rx.received, []);
  const hooks = new WebhookStore(env.db);
  t.same(hooks.counts(), { pending: 0, delivered: 0, dead: 0, cancelled: 0 });
  t.ok(hooks.isTested(HOOK, W.project, periods().end), 'the period was tested');
});

t.test('a receiver that is down gets the delivery on a retry, with the same webhook-id', async (t) => {
  const env = setup(t, 2, 18);
  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  const port = rx.port;
  await rx.close(); // nothing listens: connections are refused
  t.teardown(() => rx.close());
  apply(env, subscribed(HOOK, W.account, `http://127.0.0.1:${port}/hook`, secret));
  const d = deliverer(t, env, { retryBaseMs: 200 }).start();
  const hooks = new WebhookStore(env.db);
  t.ok(await until(() => hooks.recent(100).some((r) => r.attempts >= 2), 10_000), 'retried while down');
  const queued = hooks.recent(100).map((r) => r.message_id).sort();
  t.ok(queued.length >= 1);
  await rx.listen(port);
  // A 503 is a failure too: retried.
  rx.mode = 'fail';
  t.ok(await until(() => rx.received.length >= queued.length, 10_000), 'the failing receiver is retried');
  rx.mode = 'ok';
  t.ok(await until(() => hooks.counts().delivered === queued.length, 10_000), 'delivered once it answers 2xx');
  t.same([...rx.ids()].sort(), queued, 'the same webhook-ids as queued, on every attempt');
  t.ok(rx.received.length > queued.length, 'some ids came more than once (the 503s): a receiver deduplicates by id');
  t.ok(d.outcomes.failed >= queued.length * 2, `failed attempts counted (${d.outcomes.failed})`);
  const attempts = hooks.recent(100).map((r) => r.attempts);
  t.ok(attempts.every((a) => a >= 3), `attempts recorded: ${attempts}`);
});

t.test('retries back off exponentially with jitter, up to an hour', async (t) => {
  t.equal(retryDelay(1, 1000, () => 0), 500);
  t.equal(retryDelay(1, 1000, () => 0.999999), 1000);
  t.equal(retryDelay(4, 1000, () => 0), 4000);
  t.equal(retryDelay(40, 1000, () => 0), 1800_000, 'capped at an hour, before the jitter');
  const jittered = new Set(Array.from({ length: 20 }, () => retryDelay(3, 1000)));
  t.ok(jittered.size > 1 && [...jittered].every((d) => d >= 2000 && d <= 4000), 'jittered within [half, whole] of the delay');
});

t.test('a delivery that never succeeds is dead-lettered after the retry period', async (t) => {
  const env = setup(t, 2, 18);
  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  t.teardown(() => rx.close());
  rx.mode = 'fail';
  apply(env, subscribed(HOOK, W.account, rx.url, secret));
  const d = deliverer(t, env, { retryBaseMs: 100, retryForMs: 1000 }).start();
  const hooks = new WebhookStore(env.db);
  t.ok(await until(() => hooks.counts().pending === 0 && hooks.counts().dead > 0, 15_000), 'every message ended dead');
  const dead = hooks.recent(100);
  t.ok(dead.every((r) => r.status === 'dead' && r.attempts >= 2 && /HTTP 503/.test(r.last_result ?? '')), 'dead-lettered with the last answer');
  t.equal(d.outcomes.dead, dead.length);
});

t.test('revoking access, or unsubscribing, stops what is still queued', async (t) => {
  const env = setup(t, 2, 18);
  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  const port = rx.port;
  await rx.close();
  t.teardown(() => rx.close());
  // The other account sees the project through a share, and subscribes to it.
  apply(env, ev('project.access_granted', { project_id: W.project, account_id: W.otherAccount }, '2026-01-02T00:00:00Z'),
    subscribed(OTHER_HOOK, W.otherAccount, `http://127.0.0.1:${port}/hook`, secret, ['signal.detected'], [W.project]));
  const d = deliverer(t, env, { retryBaseMs: 100 });
  await d.tick(); // queued, and refused by the closed port
  const hooks = new WebhookStore(env.db);
  const queued = hooks.counts().pending;
  t.ok(queued >= 1, 'queued for the shared project');
  apply(env, ev('project.access_revoked', { project_id: W.project, account_id: W.otherAccount }, '2026-01-03T00:00:00Z'));
  await rx.listen(port);
  t.ok(await until(async () => {
    await d.tick();
    return hooks.counts().pending === 0;
  }, 10_000));
  t.same(rx.received, [], 'nothing sent after the access was revoked');
  t.equal(hooks.counts().cancelled, queued);

  // An unsubscribed subscription: its tombstone keeps no secret.
  apply(env, ev('webhook.unsubscribed', { id: OTHER_HOOK, account_id: W.otherAccount }, '2026-01-04T00:00:00Z'));
  t.equal(hooks.subscription(OTHER_HOOK), undefined);
  t.same(hooks.listed().find((s) => s.id === OTHER_HOOK), { id: OTHER_HOOK, account_id: W.otherAccount, project_ids: null, url: null, events: [], deleted: true });
});

t.test('addresses outside the allowed ones are refused, after DNS too', async (t) => {
  const env = setup(t, 2, 18);
  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  t.teardown(() => rx.close());
  const urls = ['https://10.1.2.3/hook', 'https://169.254.169.254/latest/meta-data', 'https://[fd00:ec2::254]/', 'https://[::ffff:192.168.1.1]/',
    `http://localhost:${rx.port}/hook`, `https://localhost:${rx.port}/hook`, 'http://example.com/hook'];
  apply(env, ...urls.map((url, i) => subscribed(id(10 + i, '12121212'), W.account, url, secret)));
  // Loopback is not allowed by default: localhost is refused once it resolves to 127.0.0.1.
  const d = deliverer(t, env, { allowLoopback: false });
  await d.tick();
  const hooks = new WebhookStore(env.db);
  const rows = hooks.recent(1000);
  t.ok(rows.length >= urls.length);
  t.ok(rows.every((r) => r.status === 'dead' && r.attempts === 1 && /^refused: /.test(r.last_result ?? '')), 'every one refused and dead-lettered at once');
  const results = new Set(rows.map((r) => r.last_result));
  t.ok([...results].some((r) => /localhost: (127\.0\.0\.1|::1) is a loopback address/.test(r ?? '')), 'localhost refused after its lookup');
  t.ok([...results].some((r) => /169\.254\.169\.254 is a private, link-local or reserved address/.test(r ?? '')), 'the metadata address refused');
  t.ok([...results].some((r) => /http: URLs are not allowed/.test(r ?? '')), 'plain http refused');
  t.same(rx.received, [], 'no connection reached the receiver');
  t.equal(d.outcomes.refused, rows.length);
});

t.test('data.changed follows the change feed, at most once a minute a project', async (t) => {
  const env = setup(t, 10, 10);
  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  t.teardown(() => rx.close());
  apply(env, subscribed(HOOK, W.account, rx.url, secret, ['data.changed']));
  const hooks = new WebhookStore(env.db);
  const read = openReadStore(env.file);
  t.teardown(() => read.close());
  const start = Date.now();
  t.equal(planFeed(read, hooks, start), 0, 'the start sends nothing');
  const day = periods().end;
  apply(env, run({ n: 900, day, brand: 1 }));
  t.equal(planFeed(read, hooks, start + 1000), 1, 'a change is queued');
  apply(env, run({ n: 901, day, brand: 1 }));
  apply(env, run({ n: 902, day, brand: 1 }));
  t.equal(planFeed(read, hooks, start + 30_000), 0, 'held back within the minute');
  t.equal(planFeed(read, hooks, start + 62_000), 1, 'then one message for both changes');
  t.equal(planFeed(read, hooks, start + 200_000), 0, 'nothing more changed');
  const d = deliverer(t, env, { planEveryMs: 3600_000 });
  await d.tick(start + 200_000);
  t.equal(rx.received.length, 2);
  const [a, b] = rx.received.map((r) => r.body);
  t.equal(a!.type, 'data.changed');
  t.match(b!.data, { project_id: W.project, previous_data_version: a!.data.data_version, kinds: ['runs'] });
  t.ok((b!.data.data_version as number) > (a!.data.data_version as number));
});
