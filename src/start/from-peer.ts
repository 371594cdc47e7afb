// A replica without its database file first downloads a peer's snapshot. Meanwhile the ops port
// answers /livez 200 and /readyz 503 (a balancer sees a live instance that must not get traffic yet;
// the API port is not open).
import http from 'node:http';
import { BootstrapAborted, bootstrapFrom, BootstrapError } from '../ingest';
import type { Logger } from '../lib/log';
import { StartError } from '../start-error';
import { closeServer, listen } from './lifecycle';
import { StartAborted, type StartOptions } from './start-options';

/** Downloads the peer's snapshot into o.dbFile while a placeholder ops port says why this instance is not ready. */
export async function bootstrap(o: StartOptions, peer: string, logger: Logger): Promise<void> {
  if (o.signal?.aborted) throw new StartAborted('stopped before the bootstrap began');
  const reason = `bootstrapping: downloading a snapshot from ${peer}`;
  const ops = http.createServer((req, res) => {
    const live = req.url === '/livez' || req.url === '/healthz';
    res.writeHead(live ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(live ? { status: 'ok' } : { status: 'not ready', ready: false, reasons: [reason] }) + '\n');
  });
  await listen(ops, o.opsPort ?? 9464, o.opsHost ?? '127.0.0.1');
  logger.info({ peer }, reason);
  try {
    const b = await bootstrapFrom(peer, o.dbFile, { token: o.opsToken, signal: o.signal, idleMs: o.bootstrapIdleMs, timeoutMs: o.bootstrapTimeoutMs, shard: o.kafka?.shard });
    const from = b.url === new URL('/snapshot', peer).href ? b.url : `${b.url} (redirected from ${peer})`;
    logger.info({ peer, url: b.url, bytes: b.bytes, seconds: b.seconds, schema_version: b.schemaVersion },
      `bootstrapped ${o.dbFile} from ${from}: ${(b.bytes / 1024 / 1024).toFixed(1)} MiB in ${b.seconds.toFixed(1)} s`);
  } catch (e) {
    if (e instanceof BootstrapAborted) throw new StartAborted(e.message);
    if (e instanceof BootstrapError) throw new StartError(e.message);
    throw e;
  } finally {
    await closeServer(ops, 0);
  }
}
