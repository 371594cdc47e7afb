// The deliverer in `visibility-api serve`, killed with SIGKILL while a delivery is under way: the
// outbox in the database still holds what was not acknowledged, and the next start sends it, with the
// same webhook-ids. Every signal ends received (deduplicated by id), none of another account's.
import t from 'tap';
import { openDb, Projector } from '../../src/store';
import { asSource, W } from '../helpers/events';
import { tmpDir } from '../helpers/db';
import { request } from '../helpers/http';
import { runCli, startServe, type ServeProcess } from '../helpers/processes';
import { until } from '../helpers/wait';
import { HOOK, newSecret, OTHER_HOOK, periods, plantedWorld, Receiver, subscribed } from '../helpers/webhooks';

const FLAGS = ['--webhooks-allow-loopback', '--webhooks-grace', '0', '--webhooks-plan-every', '200', '--webhooks-retry-base', '200', '--build-threads', '0'];

t.test('kill -9 of the deliverer mid-delivery: the restart sends what was not acknowledged, every signal ends received', async (t) => {
  const file = `${tmpDir()}/hooks.db`;
  const secret = newSecret();
  const rx = await new Receiver(secret).listen();
  t.teardown(() => rx.close());
  const otherSecret = newSecret();
  const other = await new Receiver(otherSecret).listen();
  t.teardown(() => other.close());
  const db = openDb(file);
  new Projector(db).applyBatch(asSource([
    ...plantedWorld(2, 18),
    subscribed(HOOK, W.account, rx.url, secret),
    // Another account names a project it does not see, and has one of its own: nothing of W.project reaches it.
    subscribed(OTHER_HOOK, W.otherAccount, other.url, otherSecret, ['signal.detected'], null),
  ]));
  db.close();

  rx.mode = 'hang';
  let serve: ServeProcess = await startServe(['--db', file, ...FLAGS]);
  t.teardown(() => serve.child.kill('SIGKILL'));
  t.ok(await until(() => rx.hung.length >= 1, 60_000), 'a delivery is under way (the receiver holds it)');
  serve.child.kill('SIGKILL');
  const killed = await serve.exited;
  t.equal(killed.signal, 'SIGKILL');
  t.same(rx.received, [], 'nothing was acknowledged before the kill');

  rx.mode = 'ok';
  serve = await startServe(['--db', file, ...FLAGS]);
  const p = periods();
  const api = await request(`${serve.base}/projects/${W.project}/signals?start_date=${p.start}&end_date=${p.end}`, { headers: { 'x-api-key': W.key } });
  const expected = (api.json as { signals: unknown[] }).signals;
  t.ok(expected.length >= 1, `the API shows ${expected.length} signals`);
  t.ok(await until(() => rx.ids().size >= expected.length, 60_000), 'every signal is received after the restart');
  for (const hung of rx.hung) t.ok(rx.ids().has(hung), `the delivery cut by the kill was sent again with its id ${hung}`);
  t.equal(rx.ids().size, expected.length, 'deduplicated by id: one per signal, none lost');
  t.same(rx.received.map((r) => r.body.data.signal).filter((s, i, a) => a.findIndex((x) => JSON.stringify(x) === JSON.stringify(s)) === i)
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), [...expected].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), 'the API\'s signals');
  t.same(rx.unverified, []);
  t.same(other.received, [], 'the other account received nothing of this project');

  t.ok(await until(async () => /visibility_webhook_deliveries_total\{outcome="delivered"\} [1-9]/.test((await request(`${serve.ops}/metrics`)).text), 10_000),
    '/metrics counts the deliveries');
  serve.child.kill('SIGTERM');
  t.equal((await serve.exited).code, 0);

  const listed = await runCli(['webhooks', '--db', file, '--json']);
  t.equal(listed.code, 0, listed.stderr);
  t.notOk(listed.stdout.includes(secret.slice(6)) || listed.stdout.includes(otherSecret.slice(6)), 'no secret is printed');
  const doc = JSON.parse(listed.stdout) as { subscriptions: Array<{ id: string; url: string }>; outbox: Record<string, number>; deliveries: Array<{ status: string; message_id: string }> };
  t.same(doc.subscriptions.map((s) => s.id).sort(), [HOOK, OTHER_HOOK].sort());
  t.equal(doc.outbox.delivered, expected.length);
  t.same(new Set(doc.deliveries.map((d) => d.message_id)), rx.ids());
  const text = await runCli(['webhooks', '--db', file]);
  t.match(text.stdout, new RegExp(`outbox: 0 pending, ${expected.length} delivered, 0 dead-lettered, 0 cancelled`));
  t.notOk(text.stdout.includes(secret.slice(6)));
});
