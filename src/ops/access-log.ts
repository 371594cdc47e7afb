// One access line per answered request, in pino's JSON, into the logger's destination:
// {"level":30,"time":...,"pid":...,"request_id":"...","method":"GET",
//  "route":"/v1/public/projects/:project_id/visibility","status":200,"bytes":1234,"ms":0.412,
//  "account_id":"...","msg":"request"}
// The route is the template, never the URL: ids of other accounts' projects, cursors and query
// strings stay out of the log, and lines group by endpoint. The key never reaches this far.
//
// Cost (docs/benchmarks.md, npm run bench): a cache hit costs ~20-25 us of CPU, and a line per hit
// cost 1.5-5 us more, through pino's serializer or even through a template; that alone took the hot
// path below 0.90 of bare node:http. So:
// - the line is formatted by a template (the bytes pino would write) and lines leave in batches
//   (every BATCH_BYTES or FLUSH_MS), one destination write per batch;
// - at info, hot-path hits are sampled: one line per `hitSample` hits, carrying "sample":N so that
//   counts can be weighed back (the ops port's Prometheus counters count every request). Every
//   other request (misses, errors, 4xx/5xx, the docs, MCP) gets its line. At debug every hit does.
import type { Logger } from '../lib/log';
import { jsonDestination } from '../lib/log';
import type { ResponseObserver, Served } from '../serve';

export const ACCESS_MESSAGE = 'request';
export const DEFAULT_HIT_SAMPLE = 100;
const DEBUG = 20;
const INFO = 30;
const BATCH_BYTES = 32 * 1024;
const FLUSH_MS = 100;

export interface AccessLog {
  observe: ResponseObserver;
  /** Writes out the lines held back (on close). */
  flush(): void;
}

export interface AccessLogOptions {
  /** At info, one line per this many hot-path hits (1 = every hit). Default DEFAULT_HIT_SAMPLE. */
  hitSample?: number;
}

/** A string that needs no JSON escaping is written as it is (ids, templates, methods): the common case. */
const PLAIN = /^[\w .:@/+=-]*$/;
const quoted = (s: string): string => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s));
const ms = (seconds: number): number => Math.round(seconds * 1e6) / 1000;

/** The access log (nothing, at no cost, when the logger's level is above info). */
export function accessLog(logger: Logger, o: AccessLogOptions = {}): AccessLog {
  const hitSample = Math.max(1, Math.floor(o.hitSample ?? DEFAULT_HIT_SAMPLE));
  let hits = 0;
  /** Whether this request gets a line, and with which sample weight (1: not sampled). */
  const weight = (s: Served): number => {
    const level = logger.levelVal;
    if (level > INFO) return 0;
    if (!s.hit || level <= DEBUG || hitSample === 1) return 1;
    hits = (hits + 1) % hitSample;
    return hits === 0 ? hitSample : 0;
  };
  const write = jsonDestination(logger) === null ? viaPino(logger) : batched(logger);
  return {
    observe(s: Served): void {
      const w = weight(s);
      if (w !== 0) write.line(s, w);
    },
    flush: write.flush,
  };
}

interface LineWriter {
  line(s: Served, sample: number): void;
  flush(): void;
}

/** pino's JSON, formatted here and written in batches (see the top of the file). */
function batched(logger: Logger): LineWriter {
  const destination = jsonDestination(logger)!;
  const head = `{"level":${INFO},"time":`;
  const pid = `,"pid":${process.pid},"request_id":`;
  let buffer = '';
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (buffer === '') return;
    const out = buffer;
    buffer = '';
    destination.write(out);
  };
  return {
    line(s, sample) {
      buffer += `${head}${Date.now()}${pid}${quoted(s.requestId)},"method":${quoted(s.method)},"route":${s.template === null ? 'null' : quoted(s.template)}` +
        `,"status":${s.status},"bytes":${s.bytes},"ms":${ms(s.seconds)},"account_id":${s.accountId === null ? 'null' : quoted(s.accountId)}` +
        `${sample === 1 ? '' : `,"sample":${sample}`}${s.reason === undefined ? '' : `,"reason":${quoted(s.reason)}`},"msg":"${ACCESS_MESSAGE}"}\n`;
      if (buffer.length >= BATCH_BYTES) flush();
      else if (timer === null) (timer = setTimeout(flush, FLUSH_MS)).unref();
    },
    flush,
  };
}

/**
 * Pretty output (a person's terminal): pino's own path, line by line, with what matters in the
 * message (the fields are not shown at info, src/lib/log.ts): `request GET /v1/public/projects 200,
 * 1234 B, 0.41 ms, account ACC, id REQUEST_ID`.
 */
function viaPino(logger: Logger): LineWriter {
  return {
    line: (s, sample) => logger.info({
      request_id: s.requestId, method: s.method, route: s.template, status: s.status, bytes: s.bytes,
      ms: ms(s.seconds), account_id: s.accountId, ...(sample === 1 ? {} : { sample }), ...(s.reason === undefined ? {} : { reason: s.reason }),
    }, `${ACCESS_MESSAGE} ${s.method} ${s.template ?? '(no route)'} ${s.status}, ${s.bytes} B, ${ms(s.seconds)} ms` +
      `${s.accountId === null ? '' : `, account ${s.accountId}`}, id ${s.requestId}${s.reason === undefined ? '' : `, ${s.reason}`}` +
      `${sample === 1 ? '' : `, 1 of ${sample} hits logged`}`),
    flush: () => undefined,
  };
}
