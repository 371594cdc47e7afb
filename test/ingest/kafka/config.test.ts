// Kafka configuration: every bad setting is one clear line naming the variable, before anything
// connects; an unreachable broker fails startup within seconds, naming the address. No broker needed.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import {
  ConfigError, kafkaConnectionFromEnv, kafkaIngestConfigFromEnv, KafkaUnavailableError, startKafkaIngest,
} from '../../../src/ingest/kafka';
import { tmpDb, tmpDir } from '../../helpers/db';
import { ROOT } from '../../helpers/paths';
import { CLI_STACK, runCliSync } from '../../helpers/processes';

const BASE = { KAFKA_BROKERS: '127.0.0.1:9092' };

/** The ConfigError a configuration throws (fails the test if it does not). */
function configError(env: Record<string, string>): ConfigError {
  try {
    kafkaIngestConfigFromEnv(env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error(`no error for ${JSON.stringify(env)}`);
}

t.test('KAFKA_BROKERS must be a comma list of host:port', async (t) => {
  for (const bad of ['', '   ', 'localhost', 'localhost:', ':9092', 'host:0', 'host:65536', 'host:port', '127.0.0.1:9092,,127.0.0.2:9092',
    'http://127.0.0.1:9092', '127.0.0.1:9092;127.0.0.2:9092', 'host name:9092', '-bad-:9092']) {
    const e = configError({ KAFKA_BROKERS: bad });
    t.match(e.message, /^KAFKA_BROKERS/, `"${bad}": names the variable`);
    t.notMatch(e.message, /\n/, `"${bad}": one line`);
  }
  t.match(configError({ KAFKA_BROKERS: 'localhost' }).message, /"localhost" is not host:port/);
  t.same(kafkaIngestConfigFromEnv({ KAFKA_BROKERS: ' 127.0.0.1:9092 , kafka-1.internal:9093,[::1]:9094' }).brokers,
    ['127.0.0.1:9092', 'kafka-1.internal:9093', '[::1]:9094']);
  t.same(kafkaIngestConfigFromEnv({ KAFKA_BROKERS: 'bad' }, { brokers: '10.0.0.1:9092' }).brokers, ['10.0.0.1:9092'], 'a flag wins over the environment');
});

t.test('defaults, topics, group, client id and DLQ topic', async (t) => {
  const c = kafkaIngestConfigFromEnv(BASE);
  t.same(c.topics, ['visibility.events']);
  t.equal(c.groupId, 'visibility-api');
  t.equal(c.clientId, 'visibility-api');
  t.equal(c.dlqTopic, 'visibility.events.dlq');
  t.equal(c.tls, null);
  t.equal(c.sasl, null);
  t.equal(c.connectTimeoutMs, 3000);
  const d = kafkaIngestConfigFromEnv({ ...BASE, KAFKA_TOPICS: 'a.events, b_events', KAFKA_GROUP_ID: 'replica-2', KAFKA_CLIENT_ID: 'api-2', KAFKA_DLQ_TOPIC: '' });
  t.same(d.topics, ['a.events', 'b_events']);
  t.equal(d.groupId, 'replica-2');
  t.equal(d.clientId, 'api-2');
  t.equal(d.dlqTopic, null, 'an empty KAFKA_DLQ_TOPIC disables the DLQ topic');
  t.match(configError({ ...BASE, KAFKA_TOPICS: 'ok,not ok' }).message, /^KAFKA_TOPICS: "not ok" is not a valid topic name/);
  t.match(configError({ ...BASE, KAFKA_DLQ_TOPIC: 'a/b' }).message, /^KAFKA_DLQ_TOPIC: "a\/b" is not a valid topic name/);
  t.match(configError({ ...BASE, KAFKA_TOPICS: 'x', KAFKA_DLQ_TOPIC: 'x' }).message, /KAFKA_DLQ_TOPIC "x" is also in KAFKA_TOPICS/);
  t.match(configError({ ...BASE, KAFKA_CONNECT_TIMEOUT_MS: '3s' }).message, /^KAFKA_CONNECT_TIMEOUT_MS must be an integer/);
  t.match(configError({ ...BASE, KAFKA_SESSION_TIMEOUT_MS: '1000' }).message, /^KAFKA_SESSION_TIMEOUT_MS must be an integer from 6000/);
  t.match(configError({ ...BASE, KAFKA_LOG_LEVEL: 'loud' }).message, /^KAFKA_LOG_LEVEL must be one of/);
});

t.test('SASL needs a known mechanism and both credentials', async (t) => {
  t.match(configError({ ...BASE, KAFKA_SASL_MECHANISM: 'plain' }).message,
    /^KAFKA_SASL_MECHANISM=plain needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD$/);
  t.match(configError({ ...BASE, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512', KAFKA_SASL_USERNAME: 'u' }).message, /needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/);
  t.match(configError({ ...BASE, KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }).message, /KAFKA_SASL_MECHANISM is not/);
  t.match(configError({ ...BASE, KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }).message,
    /^KAFKA_SASL_MECHANISM must be one of plain, scram-sha-256, scram-sha-512/);
  const c = kafkaIngestConfigFromEnv({ ...BASE, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' });
  t.same(c.sasl, { mechanism: 'scram-sha-256', username: 'u', password: 'p' });
});

t.test('TLS: files are read at startup, a missing one is a clear error', async (t) => {
  const dir = tmpDir('kafka-tls-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const missing = path.join(dir, 'nope.pem');
  const e = configError({ ...BASE, KAFKA_SSL_CA_FILE: missing });
  t.equal(e.message, `KAFKA_SSL_CA_FILE: cannot read ${missing} (ENOENT)`);
  t.match(configError({ ...BASE, KAFKA_SSL: 'maybe' }).message, /^KAFKA_SSL must be true or false, got "maybe"$/);
  const ca = path.join(dir, 'ca.pem');
  fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  t.match(configError({ ...BASE, KAFKA_SSL: 'false', KAFKA_SSL_CA_FILE: ca }).message, /KAFKA_SSL=false but KAFKA_SSL_\*_FILE is set/);
  t.match(configError({ ...BASE, KAFKA_SSL_CERT_FILE: ca }).message, /KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together/);
  t.same(kafkaConnectionFromEnv({ ...BASE, KAFKA_SSL: 'true' }).tls, {}, 'KAFKA_SSL=true: TLS with the system CAs');
  t.same(kafkaConnectionFromEnv({ ...BASE, KAFKA_SSL_CA_FILE: ca }).tls?.ca, fs.readFileSync(ca), 'a CA file implies TLS');
});

t.test('an unreachable broker: startKafkaIngest rejects within seconds, naming the address', async (t) => {
  const { db, projector, file } = tmpDb();
  t.teardown(() => {
    db.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
  const started = Date.now();
  const config = kafkaIngestConfigFromEnv({ KAFKA_BROKERS: '127.0.0.1:1', KAFKA_LOG_LEVEL: 'nothing' });
  const err = await startKafkaIngest(db, projector, config).then(() => null, (e: unknown) => e);
  const secs = (Date.now() - started) / 1000;
  t.ok(err instanceof KafkaUnavailableError, 'a KafkaUnavailableError');
  t.match((err as Error).message, /^cannot reach Kafka at 127\.0\.0\.1:1: connect ECONNREFUSED 127\.0\.0\.1:1$/);
  t.ok(secs < 5, `rejected in ${secs.toFixed(2)} s`);
});

/** Runs the CLI the way the crash test does (tsx, no build needed). */
function cli(args: string[], env: Record<string, string> = {}): { status: number | null; stderr: string; secs: number } {
  const started = Date.now();
  const r = runCliSync(args, { env: { KAFKA_BROKERS: '', ...env }, script: CLI_STACK });
  return { status: r.status, stderr: r.stderr, secs: (Date.now() - started) / 1000 };
}

t.test('the CLI: bad Kafka settings and an unreachable broker exit 2 with one line', async (t) => {
  const { db, file } = tmpDb();
  db.close();
  t.teardown(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  const events = path.join(ROOT, 'fixtures', 'demo', 'events.ndjson.gz');
  const cases: Array<{ args: string[]; env?: Record<string, string>; message: RegExp }> = [
    { args: ['produce', '--brokers', 'localhost', '--topic', 't', events], message: /^visibility-api produce: KAFKA_BROKERS: "localhost" is not host:port/ },
    { args: ['produce', '--brokers', '127.0.0.1:9092', '--topic', 'no spaces', events], message: /^visibility-api produce: --topic: "no spaces" is not a valid topic name/ },
    { args: ['produce', '--topic', 't', events], env: { KAFKA_BROKERS: '127.0.0.1:1' }, message: /^visibility-api produce: cannot reach Kafka at 127\.0\.0\.1:1: connect ECONNREFUSED/ },
    { args: ['serve', '--db', file, '--port', '0', '--ops-port', '0'], env: { KAFKA_BROKERS: '127.0.0.1:1' }, message: /^visibility-api serve: cannot reach Kafka at 127\.0\.0\.1:1: connect ECONNREFUSED/ },
    { args: ['serve', '--db', file, '--port', '0', '--ops-port', '0', '--kafka-brokers', '127.0.0.1:9092'], env: { KAFKA_SASL_MECHANISM: 'plain' }, message: /^visibility-api serve: KAFKA_SASL_MECHANISM=plain needs/ },
  ];
  for (const c of cases) {
    const r = cli(c.args, c.env);
    t.equal(r.status, 2, `${c.args.slice(0, 1).join(' ')}: exit 2`);
    const lines = r.stderr.trim().split('\n');
    t.equal(lines.length, 1, `one line: ${r.stderr.trim()}`);
    t.match(lines[0], c.message);
    t.ok(r.secs < 15, `answered in ${r.secs.toFixed(1)} s`);
  }
});
