// Who may call the ops port (src/ops/ops-access.ts): health and /metrics are open; /snapshot (every
// tenant's data and key hashes) and /cache need the ops token whenever one is set; a port that
// listens beyond loopback without one does not start. Also: the listening line says what is bound.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { start, StartError } from '../../src/index';
import { openDb, Projector } from '../../src/store';
import { asSource, world } from '../helpers/events';
import { capturedLogger } from '../helpers/log';
import { tmpDir } from '../helpers/db';
import { request } from '../helpers/http';
import { runCli, startServe } from '../helpers/processes';

const TOKEN = 'ops-token-for-the-test-0123456789abcdef';

function smallDb(): string {
  const file = path.join(tmpDir('ops-access-'), 'ops.db');
  const db = openDb(file);
  new Projector(db).applyBatch(asSource(world()));
  db.close();
  return file;
}

t.test('an ops port beyond loopback without a token does not start; a short token is refused', async (t) => {
  const file = smallDb();
  const { logger } = capturedLogger();
  for (const opsHost of ['0.0.0.0', '::', '192.0.2.1']) {
    const e: unknown = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', opsHost, logger }).then((r) => r.close(), (err: unknown) => err);
    t.ok(e instanceof StartError, `start() refuses ops host ${opsHost}`);
    t.match(String(e), /without a token/);
  }
  await t.rejects(start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', opsToken: 'short', logger }), /at least 16 characters/);

  // The image's way: OPS_HOST=0.0.0.0 from the environment. One line, exit 2, nothing listening.
  const cli = await runCli(['serve', '--db', file, '--port', '0', '--ops-port', '0'], { OPS_HOST: '0.0.0.0' });
  t.equal(cli.code, 2, 'exit status 2');
  t.equal(cli.stderr.trim().split('\n').length, 1, `one line: ${cli.stderr}`);
  t.match(cli.stderr, /ops port would listen on 0\.0\.0\.0 without a token[^\n]*OPS_TOKEN/);
  t.notMatch(cli.stdout, /listening on/);
});

t.test('with a token: /snapshot and /cache need it (401 in the API\'s error format), health and metrics do not', async (t) => {
  const file = smallDb();
  const { logger, lines } = capturedLogger('debug');
  // Beyond loopback (every interface) with a token; the test calls it on 127.0.0.1.
  const running = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', opsHost: '0.0.0.0', opsToken: TOKEN, logger });
  t.teardown(() => running.close());
  t.equal(running.opsBind, `0.0.0.0:${running.opsPort}`, 'bound to every interface');
  const ops = `http://127.0.0.1:${running.opsPort}`;

  for (const p of ['/livez', '/healthz', '/readyz', '/metrics']) t.equal((await request(`${ops}${p}`)).status, 200, `${p} without a token`);
  for (const [p, method] of [['/snapshot', 'GET'], ['/snapshot', 'HEAD'], ['/cache', 'GET'], ['/nope', 'GET']] as const) {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-of-the-same-kind-000000' }, { authorization: TOKEN }, { authorization: `Basic ${TOKEN}` }] as Array<Record<string, string>>) {
      const r = await request(`${ops}${p}`, { method, headers });
      t.equal(r.status, 401, `${method} ${p} with ${JSON.stringify(headers).slice(0, 40)}: 401`);
      t.equal(r.headers['x-error-code'], 'invalid_ops_token');
      t.equal(r.headers['www-authenticate'], 'Bearer');
      if (method === 'GET') t.same(r.json, { error: true, message: 'Missing or wrong ops token' });
    }
  }
  const ok = { authorization: `Bearer ${TOKEN}` };
  const snap = await request(`${ops}/snapshot`, { headers: ok });
  t.equal(snap.status, 200, 'GET /snapshot with the token');
  t.equal(snap.raw.subarray(0, 16).toString('latin1'), 'SQLite format 3\0');
  t.equal((await request(`${ops}/cache`, { headers: { authorization: `bearer  ${TOKEN}` } })).status, 200, '/cache with the token (scheme in any case)');
  t.equal((await request(`${ops}/nope`, { headers: ok })).status, 404, 'an unknown path with the token: 404');

  // cache-stats sends the token it is given, and says what is missing without it.
  const withToken = await runCli(['cache-stats', '--ops-url', ops], { OPS_TOKEN: TOKEN });
  t.equal(withToken.code, 0, withToken.stderr);
  t.match(withToken.stdout, /entries \d+ +bytes/);
  const without = await runCli(['cache-stats', '--ops-url', ops]);
  t.equal(without.code, 2);
  t.match(without.stderr, /answered 401: it needs the ops token \(--ops-token or OPS_TOKEN\)/);

  await running.close();
  t.notMatch(JSON.stringify(lines), TOKEN, 'the token is in no log line');
});

t.test('a token, when set, is required on loopback too', async (t) => {
  const running = await start({ dbFile: smallDb(), port: 0, opsPort: 0, host: '127.0.0.1', opsToken: TOKEN, logger: capturedLogger().logger });
  t.teardown(() => running.close());
  t.equal((await request(`${running.opsUrl}/snapshot`, { method: 'HEAD' })).status, 401);
  t.equal((await request(`${running.opsUrl}/snapshot`, { method: 'HEAD', headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
});

t.test('the listening line says what is bound, and a URL to click', async (t) => {
  const file = smallDb();
  const s = await startServe(['--db', file, '--host', '0.0.0.0']);
  t.teardown(() => void (s.child.exitCode === null && s.child.kill('SIGKILL')));
  const port = new URL(s.base).port;
  t.match(s.stdout(), new RegExp(`listening on 0\\.0\\.0\\.0:${port} \\(http://127\\.0\\.0\\.1:${port}/v1/public\\); ops on 127\\.0\\.0\\.1:\\d+ \\(http://127\\.0\\.0\\.1:\\d+\\)`));
  const line = s.stdout().split('\n').find((l) => l.includes('listening on'))!;
  t.match(JSON.parse(line), { bind: `0.0.0.0:${port}`, url: `http://127.0.0.1:${port}/v1/public` }, 'the JSON fields too');
  t.equal((await request(`${s.base}/openapi.json`)).status, 200, 'the URL answers');
  s.child.kill('SIGTERM');
  t.equal((await s.exited).code, 0);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});
