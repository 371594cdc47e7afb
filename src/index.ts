// The service as a library call: start(options) -> { close() }. It wires the database, the build
// threads, the Kafka thread, the hot path, Koa and the ops port; the CLI only parses flags. The
// parts are in src/start/: the options and their checks (start-options.ts), a bootstrap from a
// peer (from-peer.ts), the Kafka thread (kafka-wiring.ts), the service's parts assembled
// (service-parts.ts), its readiness (service-health.ts), and what is opened and released in order
// (lifecycle.ts).
import fs from 'node:fs';
import { createLogger } from './lib/log';
import { BASE_PATH } from './serve/request/base-path';
import { DEFAULT_MAX_STALENESS_MS } from './readmodels/methodology';
import { StartError } from './start-error';
import { checkpoint, DbOpenError, openDb, verifyDb, type Db } from './store';
import { bootstrap } from './start/from-peer';
import { consumingLine, startKafka } from './start/kafka-wiring';
import { boundAddress, closeServer, listen, shownHost, unwind, type Cleanup } from './start/lifecycle';
import { checkOptions, DEFAULT_MAX_READY_LAG, type Running, type StartOptions } from './start/start-options';
import { assembleService } from './start/service-parts';

export { BASE_PATH, StartError, DEFAULT_MAX_READY_LAG, DEFAULT_MAX_STALENESS_MS };
export { StartAborted, type Running, type StartOptions } from './start/start-options';

function openServedDb(o: StartOptions): Db {
  try {
    const db = openDb(o.dbFile, { mustExist: !o.kafka });
    verifyDb(db, o.dbFile);
    return db;
  } catch (e) {
    if (e instanceof DbOpenError) throw new StartError(e.message);
    throw e;
  }
}

/**
 * Starts serving. Rejects with StartError (nothing left running) when the database is unusable, a
 * port is taken or Kafka cannot be reached. The returned close() is the graceful stop that
 * SIGTERM/SIGINT trigger in the CLI.
 */
export async function start(o: StartOptions): Promise<Running> {
  const logger = o.logger ?? createLogger();
  const cleanup: Cleanup = [];
  checkOptions(o);
  try {
    if (o.bootstrapFrom !== undefined && !fs.existsSync(o.dbFile)) await bootstrap(o, o.bootstrapFrom, logger);
    const db = openServedDb(o);
    cleanup.push(() => {
      // A clean stop leaves no WAL to replay: the next start (or a copied file) is complete on its own.
      checkpoint(db);
      db.close();
    });
    const kafka = o.kafka ? await startKafka(db, o.kafka, logger, o.maxReadyLag ?? DEFAULT_MAX_READY_LAG) : null;
    if (kafka) {
      cleanup.push(() => kafka.ingest.stop());
      logger.info(consumingLine(o.kafka!));
    }
    const { service, health, ops, api } = assembleService(o, db, kafka, logger, cleanup);
    const drainMs = o.drainMs ?? 5000;
    const host = o.host ?? '0.0.0.0';
    const opsHost = o.opsHost ?? '127.0.0.1';
    cleanup.push(() => closeServer(ops, 1000));
    const opsPort = await listen(ops, o.opsPort ?? 9464, opsHost);
    cleanup.push(() => closeServer(api, drainMs));
    const port = await listen(api, o.port ?? 8080, host);

    let closing: Promise<void> | null = null;
    return {
      url: `http://${shownHost(host)}:${port}${BASE_PATH}`, port, bind: boundAddress(host, port),
      opsUrl: `http://${shownHost(opsHost)}:${opsPort}`, opsPort, opsBind: boundAddress(opsHost, opsPort),
      service,
      close: () => (closing ??= (async () => {
        health.drain(); // /readyz says not ready; every answer from now on says Connection: close
        void kafka?.ingest.stop(); // commits and stops while the API drains (its cleanup step awaits the same stop)
        await unwind(cleanup, logger);
      })()),
    };
  } catch (e) {
    await unwind(cleanup, logger);
    throw e;
  }
}
