// Regression tests for what the contract fuzzing (test/e2e/contract-fuzz.test.ts, schemathesis) found,
// and for the answers it cannot reach on its own (429, 503, 304, long input): each real response,
// over real HTTP, is checked against what the served OpenAPI document declares for its status:
// the status is declared, every required header is there and matches its schema, the body matches.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import t, { type Test } from 'tap';
import { ENDPOINTS } from '../../src/readmodels';
import type { Db } from '../../src/store';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey, type Api, type Reply } from '../helpers/http';

type Json = Record<string, unknown>;
interface Declared { headers?: Record<string, { required?: boolean; schema: Json }>; content?: Record<string, { schema: Json }> }
interface Doc { paths: Record<string, Record<string, { responses: Record<string, Declared> }>>; components: Json }

/** Validates replies against the document the service itself serves (not a copy of it). */
class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: Doc) {
    addFormats(this.ajv);
    // The document's "#/components/..." references resolve inside this one schema resource.
    this.ajv.addSchema({ $id: 'https://contract.invalid/doc', components: doc.components });
  }

  private validator(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let v = this.compiled.get(key);
    if (!v) {
      const rebased = JSON.parse(key.replaceAll('"#/components/', '"https://contract.invalid/doc#/components/')) as Json;
      v = this.ajv.compile(rebased);
      this.compiled.set(key, v);
    }
    return v;
  }

  /** Every way `r` departs from the document's answer for `status` on (docPath, GET); [] when it conforms. */
  violations(docPath: string, r: Reply): string[] {
    const op = this.doc.paths[docPath]?.get;
    if (!op) return [`${docPath} is not documented`];
    const declared = op.responses[String(r.status)];
    if (!declared) return [`status ${r.status} is not declared for GET ${docPath} (body ${r.text.slice(0, 200)})`];
    const out: string[] = [];
    for (const [name, h] of Object.entries(declared.headers ?? {})) {
      const raw = r.headers[name.toLowerCase()];
      if (raw === undefined) {
        if (h.required) out.push(`${r.status} lacks the required header ${name}`);
        continue;
      }
      const value = Array.isArray(raw) ? raw.join(', ') : raw;
      const typed = h.schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      const v = this.validator(h.schema);
      if (!v(typed)) out.push(`${r.status} header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(v.errors)}`);
    }
    const content = declared.content?.['application/json'];
    if (content) {
      if (!/^application\/json\b/.test(String(r.headers['content-type']))) out.push(`${r.status} content-type ${String(r.headers['content-type'])}`);
      const v = this.validator(content.schema);
      if (!v(r.json)) out.push(`${r.status} body ${r.text.slice(0, 200)}: ${this.ajv.errorsText(v.errors)}`);
    } else if (r.text !== '') {
      out.push(`${r.status} declares no body but has one: ${r.text.slice(0, 200)}`);
    }
    return out;
  }

  conforms(tt: Test, docPath: string, r: Reply, what: string): void {
    tt.same(this.violations(docPath, r), [], `${what}: ${r.status} conforms to the document`);
  }
}

/** The document's path for an endpoint: /projects/:project_id -> /projects/{project_id}. */
const docPath = (p: string): string => p.replace(/:(\w+)/g, '{$1}');

/** A request line node:http's client will not send (CONNECT, or a method it does not know): raw over a socket. */
function rawRequest(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => { socket.destroy(); resolve(Buffer.concat(chunks).toString('latin1')); }, 5000);
    socket.on('connect', () => socket.write(head));
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /\r\ncontent-length: (\d+)\r\n/i.exec(text);
      const end = text.indexOf('\r\n\r\n');
      if (m && end >= 0 && Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(m[1])) {
        clearTimeout(timer);
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('end', () => { clearTimeout(timer); resolve(Buffer.concat(chunks).toString('latin1')); });
    // The server may close while a long request is still being written: what it answered still counts.
    socket.on('error', (e) => { clearTimeout(timer); if (chunks.length > 0) resolve(Buffer.concat(chunks).toString('latin1')); else reject(e); });
  });
}

/** A raw HTTP/1.1 response as a Reply (bodies here are small, uncompressed JSON). */
function parseRaw(text: string): Reply {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, end < 0 ? text.length : end).split('\r\n');
  const headers: Record<string, string> = {};
  const rawHeaders: string[] = [];
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) {
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      rawHeaders.push(l.slice(0, i).trim(), l.slice(i + 1).trim());
    }
  }
  const body = end < 0 ? '' : text.slice(end + 4);
  let json: unknown;
  try { json = body ? JSON.parse(body) : undefined; } catch { json = undefined; }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, rawHeaders, raw: Buffer.from(body, 'latin1'), text: body, json };
}

t.test('answers conform to the served OpenAPI document', async (t) => {
  const demo = await demoDb();
  const db: Db = demo.db;
  t.teardown(() => {
    db.close();
    fs.rmSync(path.dirname(demo.file), { recursive: true, force: true });
  });
  const key = activeKeys[0]!.key;
  const api = await startApi({ db });
  t.teardown(() => api.close());
  const contract = new Contract((await request(`${api.base}/openapi.json`)).json as Doc);
  const port = Number(new URL(api.base).port);
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const runGroup = ((await request(`${api.base}/projects/${project}/runs`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const concrete = (p: string): string => p.replace(':project_id', project).replace(':run_group_id', runGroup);

  // Found by schemathesis 4.32.5 (ST101/ST204 on every operation): TRACE and QUERY answered 501
  // "Not implemented", a 5xx; the contract is 405 with Allow for any method but GET/HEAD on a known path.
  t.test('undeclared methods on every documented path: 405 with the Allow the document declares', async (tt) => {
    for (const e of ENDPOINTS) {
      for (const method of ['TRACE', 'QUERY', 'PROPFIND', 'OPTIONS', 'DELETE', 'POST', 'PUT', 'PATCH']) {
        const head = `${method} ${api.base.replace(/^http:\/\/[^/]+/, '')}${concrete(e.path)} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
        const r = parseRaw(await rawRequest(port, head));
        const v = contract.violations(docPath(e.path), r);
        if (r.status !== 405 || v.length > 0) tt.fail(`${method} ${e.path}: ${r.status} ${v.join('; ')}`);
      }
    }
    // CONNECT never reaches the request handler: it must still get the same 405, not a dropped socket.
    const connect = parseRaw(await rawRequest(port, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    tt.equal(connect.status, 405, 'CONNECT: 405');
    tt.equal(connect.headers.allow, 'GET, HEAD');
    tt.pass('every undeclared method checked on every path');
  });

  t.test('200s from the build path and from the hot path (a repeat) carry every declared header', async (tt) => {
    for (const e of ENDPOINTS) {
      for (const round of ['built', 'hot']) {
        const r = await request(`${api.base}${concrete(e.path)}`, withKey(key, { 'accept-encoding': 'gzip, br' }));
        tt.equal(r.status, 200, `${e.path} (${round})`);
        contract.conforms(tt, docPath(e.path), r, `${e.path} (${round})`);
      }
    }
    contract.conforms(tt, '/openapi.json', await request(`${api.base}/openapi.json`), 'openapi.json');
  });

  t.test('304 carries the declared caching headers and no body', async (tt) => {
    for (const e of [ENDPOINTS[0]!, ENDPOINTS.find((x) => x.path.includes(':run_group_id'))!]) {
      const first = await request(`${api.base}${concrete(e.path)}`, withKey(key));
      const r = await request(`${api.base}${concrete(e.path)}`, withKey(key, { 'if-none-match': String(first.headers.etag) }));
      tt.equal(r.status, 304, e.path);
      contract.conforms(tt, docPath(e.path), r, e.path);
    }
  });

  // The 400 message once echoed up to ~16 KB of the caller's input; the document now bounds it.
  t.test('400 for long malformed input: a short message in the declared body', async (tt) => {
    const long = 'x'.repeat(16_000);
    const cases: Array<[string, string]> = [
      [`/projects/${long}`, '/projects/:project_id'],
      [`/runs/${long}/results`, '/runs/:run_group_id/results'],
      [`/projects/${project}/mentions?limit=${long}`, '/projects/:project_id/mentions'],
      [`/projects/${project}/mentions?entity_type=${long}`, '/projects/:project_id/mentions'],
      [`/projects/${project}/citations?engine_ids=${long}`, '/projects/:project_id/citations'],
      [`/projects/${project}/visibility?engine_ids=${'\u00e9'.repeat(2000)}`, '/projects/:project_id/visibility'],
    ];
    for (const [url, p] of cases) {
      const r = await request(`${api.base}${encodeURI(url)}`, withKey(key));
      tt.equal(r.status, 400, p);
      contract.conforms(tt, docPath(p), r, `${p} with ${url.length} characters`);
    }
  });

  // Found while writing these tests: node:http answers requests it cannot parse itself (400), and a
  // request line and headers over its 16 KiB limit (431), with an empty body and no Content-Type,
  // while every error is documented as the JSON error body.
  t.test('requests node:http rejects before the app: the declared error body', async (tt) => {
    const prefix = api.base.replace(/^http:\/\/[^/]+/, '');
    const tooLong = parseRaw(await rawRequest(port, `GET ${prefix}/projects/${project}/citations?engine_ids=${'a'.repeat(20_000)} HTTP/1.1\r\n` +
      `Host: 127.0.0.1\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`));
    tt.equal(tooLong.status, 431, 'a 20 KB request line: 431');
    contract.conforms(tt, '/projects/{project_id}/citations', tooLong, 'a 20 KB request line');
    const malformed = parseRaw(await rawRequest(port, `GET ${prefix}/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nno colon here\r\n\r\n`));
    tt.equal(malformed.status, 400, 'a header line without a colon: 400');
    contract.conforms(tt, '/projects', malformed, 'a header line without a colon');
  });

  t.test('401 and 404 answer the declared error body', async (tt) => {
    contract.conforms(tt, '/projects', await request(`${api.base}/projects`), 'no key');
    contract.conforms(tt, '/projects', await request(`${api.base}/projects`, withKey('not-a-key')), 'unknown key');
    const missing = await request(`${api.base}/projects/00000000-0000-4000-8000-000000000000`, withKey(key));
    tt.equal(missing.status, 404);
    contract.conforms(tt, '/projects/{project_id}', missing, 'unknown project');
  });
});

t.test('429 and 503 carry the declared Retry-After and error body', async (t) => {
  const demo = await demoDb();
  t.teardown(() => {
    demo.db.close();
    fs.rmSync(path.dirname(demo.file), { recursive: true, force: true });
  });
  const key = activeKeys[0]!.key;

  const limited: Api = await startApi({ db: demo.db, rateLimit: 1 });
  t.teardown(() => limited.close());
  const contract = new Contract((await request(`${limited.base}/openapi.json`)).json as Doc);
  // A burst of 2 x rate is allowed; the bounded loop stops at the first 429.
  let r: Reply | undefined;
  for (let i = 0; i < 20; i++) {
    r = await request(`${limited.base}/projects`, withKey(key));
    if (r.status === 429) break;
  }
  t.equal(r?.status, 429, 'the rate limit answers 429');
  if (r) contract.conforms(t, '/projects', r, 'rate limited');

  const loading: Api = await startApi({ db: demo.db, isReady: () => false });
  t.teardown(() => loading.close());
  const unready = await request(`${loading.base}/projects`, withKey(key));
  t.equal(unready.status, 503, 'not ready: 503');
  contract.conforms(t, '/projects', unready, 'not ready');
  const doc = await request(`${loading.base}/openapi.json`);
  t.equal(doc.status, 200, 'the document is served while the read model loads');
});
