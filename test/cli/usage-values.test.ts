// Bad values on the command line, as a user types them: every date and number is one line on
// stderr and exit 2 (never an exception's words, never exit 1); a port in use names the flag and the
// environment variable that chose it, and is found before the demo is replayed.
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { flagOrigin, parse } from '../../src/cli/flags';
import { command as serve } from '../../src/cli/serve-command';
import { tmpDir } from '../helpers/db';
import { runCli, runCliSync } from '../helpers/processes';

const oneLine = /^visibility-api [a-z-]+: [^\n]+\n$/;

t.test('bad dates and numbers: one line, exit 2', async (tt) => {
  const dir = tmpDir('usage-');
  const db = path.join(dir, 'none.db');
  const out = path.join(dir, 'out');
  const cases: Array<[string[], RegExp]> = [
    [['export', '--db', db, '--out', out, '--start-date', '2026-13-01'], /--start-date must be a day as YYYY-MM-DD, not "2026-13-01"/],
    [['export', '--db', db, '--out', out, '--end-date', '2026-02-30'], /--end-date must be a day/],
    [['export', '--db', db, '--out', out, '--start-date', '2026-00-10'], /--start-date must be a day/],
    [['export', '--db', db, '--out', out, '--end-date', '2026-1-5'], /--end-date must be a day/],
    [['export', '--db', db, '--out', out, '--start-date', '2026-04-31T00:00'], /--start-date must be a day/],
    [['serve', '--db', db, '--port', '99999'], /--port must be an integer from 0 to 65535, got "99999"/],
    [['serve', '--db', db, '--port', 'eighty'], /--port must be an integer/],
    [['serve', '--db', db, '--ops-port', '1e3'], /--ops-port must be an integer/],
    [['serve', '--db', db, '--window-days=-3'], /--window-days must be an integer/],
    [['replay', '--db', db, '--batch-size', '2.5', 'x.ndjson'], /--batch-size must be an integer/],
  ];
  for (const [args, says] of cases) {
    const r = runCliSync(args);
    tt.equal(r.status, 2, `${args.join(' ')}: exit 2`);
    tt.match(r.stderr, oneLine, `${args.join(' ')}: one line`);
    tt.match(r.stderr, says);
    tt.equal(r.stdout, '');
  }
});

t.test('where a port came from: the flag, its environment variable, or the default', async (tt) => {
  tt.equal(flagOrigin(parse(['--ops-port', '9000'], serve.flags, {}), 'ops-port'), '--ops-port 9000');
  tt.equal(flagOrigin(parse([], serve.flags, { OPS_PORT: '9001' }), 'ops-port'), 'OPS_PORT=9001');
  tt.equal(flagOrigin(parse([], serve.flags, {}), 'ops-port'), 'the default of --ops-port (9464)');
});

t.test('a port in use: one line naming the flag and the variable, before the demo is replayed', async (tt) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  tt.teardown(() => blocker.close());
  const port = (blocker.address() as net.AddressInfo).port;
  const started = Date.now();
  // As a second `npm start` meets the first one's ops port, the port set here by its environment variable.
  const exit = await runCli(['serve', '--demo', '--host', '127.0.0.1', '--port', '0'], { OPS_PORT: String(port) }, 60_000);
  tt.equal(exit.code, 2, 'exit 2');
  tt.equal(exit.stdout, '', 'nothing logged: the demo was not replayed');
  tt.match(exit.stderr, oneLine);
  tt.match(exit.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: EADDRINUSE: the port is in use .*; the ops port is OPS_PORT=${port}: choose another with --ops-port N or OPS_PORT=N \\(0: a free one\\)`));
  tt.comment(`refused in ${Date.now() - started} ms`);
});
