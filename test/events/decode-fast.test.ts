// The fast paths of decoding and line reading against what they replace, on the fixtures and on
// strings made to sit on every edge: the fast format validators against ajv-formats' own (and
// UUID_PATTERN), toUtcIso against Date.parse + toISOString, decodeEvent against a decode through an
// Ajv with the original formats, and readLines against node:readline (line numbers are resume
// positions: a line more or less would replay or skip events). Any difference fails.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { Readable, Transform } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { decodeEvent, decodeWith } from '../../src/events/decode';
import { schemaFormats, isDate, isDateTime, isUri, isUuid, originalFormats } from '../../src/events/formats';
import { AJV_OPTIONS, compileEventSchemas } from '../../src/events/schemas';
import { LineSplitter, readLineBatches, readLines, type ByteMeter } from '../../src/ingest/line-reader';
import { UUID_PATTERN } from '../../src/lib/ids';
import { toUtcIso } from '../../src/lib/time';
import { DEMO_FILE } from '../../fixtures/generate';
import { mulberry32, type Rng } from '../../fixtures/random';
import { DEMO_OPTIONS, generateWorld } from '../../fixtures/world';
import { tmpDir } from '../helpers/db';
import { ROOT } from '../helpers/paths';

const CHUNK = 1 << 20;

// ---------------------------------------------------------------- references

/** toUtcIso as it was: Date does all the work. */
function referenceToUtcIso(value: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`not a representable time: ${value}`);
  return new Date(ms).toISOString();
}

/** createAjv() as it was: ajv-formats' full formats and UUID_PATTERN. */
function referenceAjv(): Ajv2020 {
  const ajv = new Ajv2020(AJV_OPTIONS);
  addFormats(ajv, ['date-time', 'uri', 'date']);
  ajv.addFormat('uuid', UUID_PATTERN);
  return ajv;
}

const referenceSchemas = compileEventSchemas(referenceAjv());
const referenceDecode = (raw: string) => decodeWith(raw, referenceSchemas, referenceToUtcIso);

/** readLines as it was: node:readline over the file's stream (gunzipped by magic bytes; separators masked, see maskSeparators). */
async function* readlineLines(file: string, meter?: ByteMeter): AsyncGenerator<string> {
  const fd = fs.openSync(file, 'r');
  const magic = Buffer.alloc(2);
  fs.readSync(fd, magic, 0, 2, 0);
  fs.closeSync(fd);
  const raw = fs.createReadStream(file, { highWaterMark: CHUNK });
  if (meter) raw.on('data', (chunk) => (meter.bytes += chunk.length));
  const input = magic[0] === 0x1f && magic[1] === 0x8b ? raw.pipe(zlib.createGunzip()) : raw;
  const masked = input.pipe(separatorMask());
  input.on('error', (error: Error) => masked.destroy(error)); // pipe() does not pass errors on: readline sees this one
  const lines = readline.createInterface({ input: masked, crlfDelay: Infinity });
  try {
    for await (const line of lines) yield unmaskSeparators(line);
  } finally {
    lines.close();
    raw.destroy();
  }
}

async function collect<T>(lines: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

/**
 * The reference readline reads lines as NDJSON has them: only \r and \n end one. Node 24's readline
 * also ends a line at U+2028 and U+2029, which JSON strings may hold raw, so they go through it as
 * U+E028 and U+E029 (the same UTF-8 shape, lead byte 0xEE for 0xE2, so chunk boundaries and broken
 * sequences fall where they did) and come back after.
 */
function maskSeparators(bytes: Buffer): void {
  for (let i = bytes.indexOf(0xe2); i !== -1 && i + 2 < bytes.length; i = bytes.indexOf(0xe2, i + 1)) {
    if (bytes[i + 1] === 0x80 && (bytes[i + 2] === 0xa8 || bytes[i + 2] === 0xa9)) bytes[i] = 0xee;
  }
}

const unmaskSeparators = (line: string): string => line.replace(/[\ue028\ue029]/g, (c) => (c === '\ue028' ? '\u2028' : '\u2029'));

/** maskSeparators over a stream: a chunk's last bytes that may start one wait for the next chunk. */
function separatorMask(): Transform {
  let held = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const bytes = Buffer.concat([held, chunk]);
      maskSeparators(bytes);
      const n = bytes.length;
      const keep = bytes[n - 1] === 0xe2 ? 1 : n >= 2 && bytes[n - 2] === 0xe2 && bytes[n - 1] === 0x80 ? 2 : 0;
      held = Buffer.from(bytes.subarray(n - keep));
      done(null, n > keep ? bytes.subarray(0, n - keep) : undefined);
    },
    flush(done) {
      done(null, held.length ? held : undefined);
    },
  });
}

/** readline over exactly these chunks (separators masked, see maskSeparators). */
async function readlineOfChunks(chunks: Buffer[]): Promise<string[]> {
  const bytes = Buffer.concat(chunks);
  maskSeparators(bytes);
  const masked: Buffer[] = [];
  for (let at = 0, k = 0; k < chunks.length; at += chunks[k].length, k++) masked.push(bytes.subarray(at, at + chunks[k].length));
  return (await collect(readline.createInterface({ input: Readable.from(masked), crlfDelay: Infinity }))).map(unmaskSeparators);
}

function splitterOfChunks(chunks: Buffer[]): string[] {
  const s = new LineSplitter();
  const out: string[] = [];
  for (const c of chunks) s.push(c, out);
  s.end(out);
  return out;
}

/** Compares f and g over inputs; fails with the first differences (one assertion, not thousands). */
function sameOn<T>(tt: Test, name: string, inputs: Iterable<T>, f: (x: T) => unknown, g: (x: T) => unknown): void {
  const diffs: Array<{ input: T; fast: unknown; reference: unknown }> = [];
  let n = 0;
  for (const x of inputs) {
    n++;
    const a = outcome(() => f(x));
    const b = outcome(() => g(x));
    if (!isDeepStrictEqual(a, b) && diffs.length < 10) diffs.push({ input: x, fast: a, reference: b });
  }
  tt.strictSame(diffs, [], `${name}: ${n} inputs, same results`);
}

function outcome(f: () => unknown): unknown {
  try {
    return { value: f() };
  } catch (e) {
    return { threw: (e as Error).constructor.name, message: (e as Error).message };
  }
}

// ---------------------------------------------------------------- corpora

const rng: Rng = mulberry32(20261126);
const int = (n: number): number => Math.floor(rng() * n);
const choose = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const pad = (n: number, w: number): string => String(n).padStart(w, '0');

/** Every line of the fixtures: the demo log, the invalid ones, and a small world of another seed. */
async function fixtureLines(): Promise<string[]> {
  const lines = await collect(readLines(DEMO_FILE));
  const invalidDir = path.join(ROOT, 'fixtures', 'invalid');
  for (const f of fs.readdirSync(invalidDir).filter((x) => x.endsWith('.ndjson')).sort()) {
    lines.push(...fs.readFileSync(path.join(invalidDir, f), 'utf8').split('\n').filter((l) => l !== ''));
  }
  lines.push(...generateWorld({ ...DEMO_OPTIONS, seed: 7, accounts: 2, projectsPerAccount: 1, days: 3 }));
  return lines;
}

/** String leaves of a JSON value, with a setter for each. */
function leaves(value: unknown, out: Array<{ value: string; set: (s: string) => void }> = []): typeof out {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (typeof v === 'string') out.push({ value: v, set: (s) => (value[i] = s) });
      else leaves(v, out);
    });
  } else if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    for (const [k, v] of Object.entries(o)) {
      if (typeof v === 'string') out.push({ value: v, set: (s) => (o[k] = s) });
      else leaves(v, out);
    }
  }
  return out;
}

const UUID_RE = /^[0-9a-f]{8}-/i;
const TIME_RE = /^\d{4}-\d\d-\d\d[Tt ]/;
const URL_RE = /^[a-z][a-z0-9+.-]*:/i;

function fieldValues(lines: string[], re: RegExp): string[] {
  const out = new Set<string>();
  for (const l of lines) {
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      continue;
    }
    for (const leaf of leaves(v)) if (re.test(leaf.value)) out.add(leaf.value);
  }
  return [...out];
}

/** Each string with each place replaced by, and with, each of chars inserted, and each place removed. */
function mutations(s: string, chars: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i <= s.length; i++) {
    if (i < s.length) out.push(s.slice(0, i) + s.slice(i + 1));
    for (const c of chars) {
      if (i < s.length) out.push(s.slice(0, i) + c + s.slice(i + 1));
      out.push(s.slice(0, i) + c + s.slice(i));
    }
  }
  return out;
}

const ODD_CHARS = ['0', '9', 'a', 'f', 'g', 'A', 'F', 'Z', 'z', 'T', 't', '-', '+', ':', '.', '/', '?', '#', '%', '@', '[', ']', ' ', '\t', '\n', '\u00e9', '\u2028', '\u{1F600}', '\0', '\u017f', '\u212a'];

function dateTimes(): string[] {
  const out = new Set<string>();
  const years = [0, 1, 4, 100, 400, 1600, 1899, 1900, 1970, 1999, 2000, 2023, 2024, 2025, 2100, 2400, 9999];
  const months = [0, 1, 2, 3, 4, 6, 9, 11, 12, 13, 99];
  const days = [0, 1, 9, 10, 28, 29, 30, 31, 32, 99];
  const times = [
    '00:00:00', '12:34:56', '23:59:59', '23:59:60', '23:59:61', '24:00:00', '23:60:00', '00:00:60', '22:59:60',
    '00:59:60', '00:00:99', '99:99:99', '12:30:60', '25:00:00', '23:58:60', '00:59:59',
  ];
  const fractions = ['', '.', '.0', '.5', '.12', '.123', '.1234', '.123456', '.123456789', '.1234567891', '.000000000000',
    '.99', '.999', '.999999999', '.9999999999', '.99999999999999', '.999999999999999', '.9999999999999999', '.99999999999999999999'];
  const zones = ['Z', 'z', '', '+00:00', '-00:00', '+01:00', '-01:00', '+05:30', '-09:30', '+23:59', '-23:59', '+24:00', '+00:60',
    '+0000', '+0130', '-0100', '+00', '+01', '-01', '+1', '+01:0', '+01:', ' Z', 'Z ', 'ZZ', '+01:00Z', 'UTC', '+00:59', '-00:01', '+23:00'];
  const seps = ['T', 't', ' ', '\t', '_', '', 'TT'];
  for (const y of years) {
    for (const m of months) {
      for (const d of days) {
        out.add(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T12:00:00Z`);
        out.add(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T00:00:00.000Z`);
      }
    }
  }
  // Every day of a leap and a common year, and of a century common year, at both ends of a day.
  for (const y of [1900, 2000, 2023, 2024]) {
    for (let m = 1; m <= 12; m++) {
      for (let d = 1; d <= 31; d++) {
        out.add(`${y}-${pad(m, 2)}-${pad(d, 2)}T23:59:59.999Z`);
        out.add(`${y}-${pad(m, 2)}-${pad(d, 2)}T00:00:00Z`);
      }
    }
  }
  for (const time of times) for (const f of fractions) for (const z of zones) out.add(`2024-02-29T${time}${f}${z}`);
  for (const s of seps) for (const z of zones.slice(0, 8)) out.add(`2024-06-30${s}23:59:60${z}`);
  for (let i = 0; i < 60_000; i++) {
    const y = rng() < 0.8 ? 1990 + int(60) : int(10_000);
    const m = rng() < 0.9 ? 1 + int(12) : int(100);
    const d = rng() < 0.9 ? 1 + int(31) : int(100);
    const hh = rng() < 0.9 ? int(24) : int(100);
    const mm = rng() < 0.9 ? int(60) : int(100);
    const ss = rng() < 0.9 ? int(60) : 58 + int(4);
    out.add(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}${choose(seps.slice(0, 3))}${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}${choose(fractions)}${choose(zones)}`);
  }
  for (const base of ['2026-10-19T15:47:05.581Z', '2024-02-29T23:59:60+00:00', '2026-01-01T00:00:00Z', '2026-03-01T12:00:00.5-05:00']) {
    for (const m of mutations(base, ODD_CHARS)) out.add(m);
  }
  for (const s of ['', 'T', '2024-02-29', '2024-02-29T', '12:00:00Z', 'not a time', '+002024-02-29T00:00:00.000Z', '2024-02-29T00:00:00.000Z\n']) out.add(s);
  return [...out];
}

function dates(): string[] {
  const out = new Set<string>();
  for (const y of [0, 1, 1900, 2000, 2023, 2024, 2100, 9999]) {
    for (let m = 0; m <= 13; m++) for (let d = 0; d <= 32; d++) out.add(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
  }
  for (const m of mutations('2024-02-29', ODD_CHARS)) out.add(m);
  for (const s of ['', '2024-2-29', '24-02-29', '2024/02/29', '2024-02-29T00:00:00Z', ' 2024-02-29', '2024-02-29\n', '２０２４-02-29']) out.add(s);
  return [...out];
}

function uuids(fromFixtures: string[]): string[] {
  const out = new Set<string>(fromFixtures.slice(0, 2000));
  const base = 'd9a3a2ae-2f38-5b18-a325-793f2ad87da6';
  for (const m of mutations(base, ODD_CHARS)) out.add(m);
  for (const s of [
    base.toUpperCase(), base.replace(/-/g, ''), `{${base}}`, `urn:uuid:${base}`, `${base}\n`, ` ${base}`, base.slice(0, 35), `${base}0`,
    'd9a3a2ae2-f38-5b18-a325-793f2ad87da6', 'd9a3a2a-e2f38-5b18-a325-793f2ad87da6', 'd9a3a2ae-2f38-5b18-a325-793f2ad87da', '',
    '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'gggggggg-gggg-gggg-gggg-gggggggggggg',
    '------------------------------------', 'd9a3a2ae-2f38-5b18-a325-793f2ad87dA6',
  ]) out.add(s);
  for (let i = 0; i < 20_000; i++) {
    // Random strings of 36 characters in the alphabet around the valid one.
    let s = '';
    for (let k = 0; k < 36; k++) s += k === 8 || k === 13 || k === 18 || k === 23 ? (rng() < 0.98 ? '-' : choose(ODD_CHARS)) : rng() < 0.995 ? choose('0123456789abcdef'.split('')) : choose(ODD_CHARS);
    out.add(s);
  }
  return [...out];
}

function uris(fromFixtures: string[]): string[] {
  const out = new Set<string>(fromFixtures);
  const schemes = ['http', 'https', 'HTTPS', 'h', 'a+b-c.d', 'mailto', '1http', '', 'ht tp', 'é'];
  const seps = ['://', ':/', ':', ':///', '//'];
  const users = ['', 'user@', 'u:p@', 'u%41@', '@', 'u%zz@', 'u@v@', 'u v@'];
  const hosts = ['example.com', 'www.reddit.com', '127.0.0.1', '256.1.1.1', '[::1]', '[2001:db8::1]', '[v1.x]', '[::1', 'ex%41mple.com',
    'ex%zzmple.com', 'ex%4', 'ex ample.com', 'exämple.com', '', 'EXAMPLE.COM', "a!$&'()*+,;=b", 'a_b~c', 'a:b', 'a@b.com', 'xn--nxasmq6b', '\u017fite.com', '\u212aite.com'];
  const ports = ['', ':80', ':', ':65536', ':8a', '::80'];
  const paths = ['', '/', '/a/b', '/a%20b', '/a%2', '/a%zz', '/ä', '/a b', '//x', '/a:b@c', '/a\\b', '/a|b', '/a"b', '/a<b>', '/a^b',
    "/r/x/comments/abc/what_is_best-in_2024/", '/a/./b/../c', '/%E2%82%AC'];
  const queries = ['', '?', '?a=b&c=d', '?a=%zz', '?a/b?c', '?a b', '?q=%20', '?é', '?a#'];
  const fragments = ['', '#', '#x', '#x#y', '#a/b?c', '#%41', '#%4', '# x'];
  for (let i = 0; i < 60_000; i++) {
    out.add(choose(schemes) + choose(seps) + choose(users) + choose(hosts) + choose(ports) + choose(paths) + choose(queries) + choose(fragments));
  }
  for (const base of ['https://www.reddit.com/r/Mattress/comments/wfq495e/x_y/?utm=1#top', 'http://a.b:8080/p%20q?x=%41']) {
    for (const m of mutations(base, ODD_CHARS)) out.add(m);
  }
  for (const s of ['', 'a', 'a:', 'a:b', '/relative/path', 'relative', '//host/path', '?q', '#f', 'http:', 'http:/', 'http://', 'urn:isbn:0451450523',
    'file:///etc/passwd', 'http://[::ffff:1.2.3.4]/', 'http://user:pass@host:1/p?q#f', 'HTTP://EXAMPLE.COM/%7Efoo']) out.add(s);
  return [...out];
}

// ---------------------------------------------------------------- formats

t.test('the fast formats answer as ajv-formats (full) and UUID_PATTERN do', async (tt) => {
  const lines = await fixtureLines();
  const dt = dateTimes();
  sameOn(tt, 'date-time', [...dt, ...fieldValues(lines, TIME_RE)], isDateTime, originalFormats['date-time']);
  sameOn(tt, 'date', [...dates(), ...dt.slice(0, 5000)], isDate, originalFormats.date);
  sameOn(tt, 'uuid', uuids(fieldValues(lines, UUID_RE)), isUuid, (s) => UUID_PATTERN.test(s));
  sameOn(tt, 'uri', uris(fieldValues(lines, URL_RE)), isUri, originalFormats.uri);
  // The corpora reach the fast paths' both sides: many accepted, many not.
  const accepted = dt.filter(isDateTime).length;
  tt.ok(accepted > 10_000 && dt.length - accepted > 10_000, `date-times: ${accepted} accepted of ${dt.length}`);
  tt.equal(schemaFormats.date.compare, (addFormats.get('date') as { compare?: unknown }).compare, "compare is ajv-formats' own");
});

t.test('toUtcIso: the same string or the same RangeError as Date.parse + toISOString', async (tt) => {
  const lines = await fixtureLines();
  const inputs = [...dateTimes(), ...fieldValues(lines, TIME_RE)];
  // And the canonical form around every month end of leap, common and century years.
  for (const y of ['0000', '0001', '1900', '2000', '2023', '2024', '2100', '9999']) {
    for (let m = 0; m <= 13; m++) for (let d = 0; d <= 32; d++) inputs.push(`${y}-${pad(m, 2)}-${pad(d, 2)}T23:59:59.999Z`);
  }
  for (const time of ['24:00:00.000', '23:59:60.000', '23:60:00.000', '00:00:00.000', '-1:00:00.000', '1a:00:00.000']) inputs.push(`2024-01-01T${time}Z`);
  sameOn(tt, 'toUtcIso', inputs, toUtcIso, referenceToUtcIso);
});

// ---------------------------------------------------------------- decode

t.test('decodeEvent decodes as a decode through the original formats', async (tt) => {
  const lines = await fixtureLines();
  sameOn(tt, 'fixture lines', lines, decodeEvent, referenceDecode);
  tt.ok(lines.filter((l) => decodeEvent(l).ok).length > 10_000, 'most of them valid');

  // One event of each type, each of its string fields in turn set to each odd value of every format.
  const byType = new Map<string, string>();
  for (const l of lines) {
    const d = decodeEvent(l);
    if (d.ok && !byType.has(d.event.type)) byType.set(d.event.type, l);
  }
  tt.ok(byType.size >= 15, `${byType.size} event types`);
  const odd = [
    ...dateTimes().filter((_, i) => i % 150 === 0),
    ...uuids([]).filter((_, i) => i % 150 === 0),
    ...uris([]).filter((_, i) => i % 1000 === 0),
    ...dates().filter((_, i) => i % 80 === 0),
  ];
  const mutated: string[] = [];
  for (const line of byType.values()) {
    const fields = leaves(JSON.parse(line)).length;
    for (let f = 0; f < fields; f++) {
      for (const v of odd) {
        const value = JSON.parse(line) as unknown;
        leaves(value)[f]!.set(v);
        mutated.push(JSON.stringify(value));
      }
    }
  }
  sameOn(tt, 'events with odd strings', mutated, decodeEvent, referenceDecode);
  const ok = mutated.filter((l) => decodeEvent(l).ok).length;
  tt.ok(ok > 1000 && mutated.length - ok > 1000, `${ok} of ${mutated.length} valid`);
});

// ---------------------------------------------------------------- lines

const b = (...parts: Array<string | number[]>): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

const EDGE_CASES: Buffer[] = [
  b(''), b('\n'), b('a'), b('a\n'), b('a\r'), b('a\r\n'), b('a\r\r\n'), b('\r\n\r\n'), b('\n\n\n'), b('\r'), b('\r\r'), b('a\rb\nc\r\nd'),
  b('\n\r'), b(' '), b('  \n\t\n'), b([0xef, 0xbb, 0xbf], 'x\n'), b([0xef, 0xbb, 0xbf]), b([0xff]), b([0xc3]), b('a', [0xc3]), b('a', [0xe2, 0x82]),
  b('a\n', [0xe2]), b([0xe2], '\n'), b([0xf0, 0x9f, 0x98], 'x'), b([0xf0, 0x9f, 0x98]), b([0xf0, 0x9f, 0x98, 0x80]), b([0xed, 0xa0, 0x80]),
  b([0xc0, 0xaf]), b([0xc0]), b([0xf8, 0x88, 0x80, 0x80, 0x80]), b([0xf8]), b([0x80]), b('a', [0x80]), b([0xc3, 0xa9]), b('é\r', [0xe2]),
  b([0xf4, 0x90, 0x80]), b([0xe0, 0x80]), b([0xc3, 0xa9, 0x80]), b([0xf0, 0x80, 0x80, 0x80]), b('x', [0x80, 0x80, 0x80]), b([0xe2, 0x82, 0xac, 0x82]),
  b('{"a":1}\n{"b":2}'), b('\u2028\u2029\n\u0085\n\v\f\n'),
];

/** Bytes from an alphabet that makes line endings and broken UTF-8 meet. */
function randomBytes(n: number): Buffer {
  const alphabet = [[0x61], [0x0a], [0x0d], [0x0d, 0x0a], [0x80], [0xbf], [0xc3], [0xc3, 0xa9], [0xe2], [0xe2, 0x82], [0xe2, 0x82, 0xac],
    [0xf0], [0xf0, 0x9f], [0xf0, 0x9f, 0x98, 0x80], [0xff], [0xef, 0xbb, 0xbf], [0xed, 0xa0, 0x80], [0x20]];
  const out: number[] = [];
  while (out.length < n) out.push(...choose(alphabet));
  return Buffer.from(out);
}

function randomChunks(bytes: Buffer): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length;) {
    const n = 1 + int(rng() < 0.5 ? 3 : 12);
    chunks.push(bytes.subarray(i, i + n));
    i += n;
  }
  return chunks;
}

t.test('the line splitter splits as readline does, however the bytes come in chunks', async (tt) => {
  const inputs = [...EDGE_CASES];
  for (const x of EDGE_CASES) for (const y of EDGE_CASES) inputs.push(Buffer.concat([x, y]));
  for (let i = 0; i < 1500; i++) inputs.push(randomBytes(1 + int(40)));
  const diffs: unknown[] = [];
  for (const bytes of inputs) {
    const whole = await readlineOfChunks(bytes.length ? [bytes] : []);
    const chunkings = [bytes.length ? [bytes] : [], [...bytes].map((x) => Buffer.from([x])), randomChunks(bytes), randomChunks(bytes)];
    for (const chunks of chunkings) {
      const ours = splitterOfChunks(chunks);
      const theirs = await readlineOfChunks(chunks);
      if ((!isDeepStrictEqual(ours, theirs) || !isDeepStrictEqual(theirs, whole)) && diffs.length < 10) {
        diffs.push({ bytes: bytes.toString('hex'), chunks: chunks.map((c) => c.toString('hex')), ours, theirs, whole });
      }
    }
  }
  tt.strictSame(diffs, [], `${inputs.length} inputs in 4 chunkings each`);
});

/** A file whose byte `at` starts `tail` (after ASCII lines that fill up to it), then more lines. */
function fileAround(at: number, tail: Buffer, after = 'after\n'): Buffer {
  const lines: string[] = [];
  let size = 0;
  while (size < at) {
    const n = Math.min(at - size, 200 + int(2000));
    const line = n === 1 ? '\n' : `${'x'.repeat(n - 1)}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.concat([Buffer.from(lines.join('')), tail, Buffer.from(after)]);
}

t.test('readLines reads files as readline did: endings, chunk boundaries, broken UTF-8, gzip, the byte meter', async (tt) => {
  const dir = tmpDir('lines-');
  tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files: Array<[string, Buffer]> = [];
  EDGE_CASES.forEach((c, i) => files.push([`edge-${i}`, c]));
  // Each straddling piece placed to start 1-4 bytes before a 1 MiB chunk boundary (and the second one).
  const straddling: Array<[string, Buffer]> = [
    ['crlf', b('a\r\nb')], ['cr', b('a\rb')], ['cr-cr-lf', b('\r\r\n')], ['euro', b('€€')], ['emoji', b('😀😀')], ['e-acute', b('éé')],
    ['broken-3', b([0xe2, 0x82], 'z')], ['broken-4', b([0xf0, 0x9f, 0x98], '\n')], ['bom', b([0xef, 0xbb, 0xbf], '{}')], ['lone-cont', b([0x80, 0x80, 0x80, 0x80, 0x80])],
  ];
  for (const [name, piece] of straddling) {
    for (const back of [1, 2, 3, 4]) {
      files.push([`${name}-${back}`, fileAround(CHUNK - back, piece)]);
      files.push([`${name}-${back}-end`, fileAround(2 * CHUNK - back, piece, '')]);
    }
  }
  files.push(['long-line', Buffer.concat([Buffer.from(`${'é'.repeat(CHUNK)}\r`), Buffer.from(`${'y'.repeat(CHUNK + 7)}\n\nlast`)])]);
  files.push(['random', randomBytes(3 * CHUNK)]);
  files.push(['ends-incomplete', Buffer.concat([fileAround(CHUNK + 10, b('')), b('tail', [0xf0, 0x9f])])]);
  files.push(['ends-incomplete-only', Buffer.concat([fileAround(CHUNK - 1, b('')), b([0xf0, 0x9f])])]);

  const diffs: unknown[] = [];
  for (const [name, bytes] of files) {
    for (const gz of [false, true]) {
      const file = path.join(dir, `${name}.ndjson${gz ? '.gz' : ''}`);
      fs.writeFileSync(file, gz ? zlib.gzipSync(bytes) : bytes);
      const meter = { bytes: 0 };
      const ours = await collect(readLines(file, meter));
      const theirMeter = { bytes: 0 };
      const theirs = await collect(readlineLines(file, theirMeter));
      const batches = (await collect(readLineBatches(file))).flat();
      if (!isDeepStrictEqual(ours, theirs) || !isDeepStrictEqual(batches, theirs) || meter.bytes !== theirMeter.bytes || meter.bytes !== fs.statSync(file).size) {
        const at = ours.findIndex((l, i) => l !== theirs[i]);
        diffs.push({ file: path.basename(file), lines: [ours.length, theirs.length], firstDifference: at, ours: ours[at]?.slice(0, 40), theirs: theirs[at]?.slice(0, 40), meter: meter.bytes });
      }
    }
  }
  tt.strictSame(diffs, [], `${files.length} files, plain and gzip`);

  const demo = await collect(readLines(DEMO_FILE));
  tt.strictSame(demo, await collect(readlineLines(DEMO_FILE)), 'the demo log');
});

t.test('readLines: a missing file, an early stop, a truncated gzip', async (tt) => {
  const dir = tmpDir('lines-');
  tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  await tt.rejects(collect(readLines(path.join(dir, 'none.ndjson'))), { code: 'ENOENT' });

  const lines = Array.from({ length: 50_000 }, (_, i) => JSON.stringify({ i, pad: 'p'.repeat(i % 97) }));
  const plain = path.join(dir, 'many.ndjson');
  fs.writeFileSync(plain, `${lines.join('\n')}\n`);
  let n = 0;
  for await (const line of readLines(plain)) {
    if (++n === 3) {
      tt.equal(line, lines[2]);
      break;
    }
  }

  // Cut in the middle: the lines inflated before the cut come first, then the error, as readline had them.
  const cut = path.join(dir, 'cut.ndjson.gz');
  const whole = zlib.gzipSync(`${lines.join('\n')}\n`, { level: 0 });
  fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.8)));
  const run = async (read: (file: string) => AsyncIterable<string>): Promise<{ lines: number; wrong: number; error: string }> => {
    let count = 0;
    let wrong = 0;
    try {
      for await (const line of read(cut)) if (line !== lines[count++]) wrong++;
    } catch (e) {
      return { lines: count, wrong, error: (e as Error).message };
    }
    return { lines: count, wrong, error: 'none' };
  };
  const ours = await run(readLines);
  const theirs = await run(readlineLines);
  tt.equal(ours.error, 'unexpected end of file');
  tt.ok(ours.lines > 30_000 && ours.lines < 50_000 && ours.wrong === 0, `${ours.lines} whole lines before the error`);
  tt.strictSame(ours, theirs, 'as many lines, then the same error, as readline');
});
