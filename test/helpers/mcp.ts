// POST /mcp as a client that sends whatever it likes: raw bodies over node:http (loopback), and the
// checks every answer must pass: either JSON-RPC (200, or 202 for notifications only) or an error
// of the API's contract ({ error, message } with X-Error-Code from the table). Shared by the abuse
// and fuzz tests.
import http from 'node:http';
import type { Test } from 'tap';
import { ERRORS, type ErrorCode } from '../../src/serve/request/errors';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/**
 * One POST with `body` as its bytes. A server that answers before reading the whole body (413) and
 * closes may reset the upload: the answer counts when it came; an error before it fails.
 */
export function postMcp(origin: string, key: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(`${origin}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'x-api-key': key, ...headers } }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.end(body);
  });
}

/** A tools/call message. */
export const toolCall = (id: number, name: string, args: unknown): Record<string, unknown> =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

export interface RpcAnswer {
  id: unknown;
  result?: { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
}

const CODES = new Set(Object.keys(ERRORS));

/** The JSON-RPC error codes /mcp answers with: Invalid Request, Method not found, Invalid params. */
export const RPC_CODES = new Set([-32600, -32601, -32602]);

/**
 * Checks an answer against the contract; returns the JSON-RPC answers it carries (none for an
 * HTTP error or a 202). `where` goes in every assertion's name (the seed, the case).
 */
export function checkAnswer(t: Test, a: Answer, where: string): RpcAnswer[] {
  t.ok(a.status < 500, `${where}: no 5xx`, { status: a.status, body: a.text.slice(0, 300) });
  t.equal(a.headers['x-content-type-options'], 'nosniff', `${where}: X-Content-Type-Options: nosniff`);
  if (a.status >= 400) {
    const code = a.headers['x-error-code'] as string | undefined;
    t.ok(code !== undefined && CODES.has(code) && ERRORS[code as ErrorCode].status === a.status, `${where}: X-Error-Code ${code} is the table's code for ${a.status}`);
    t.ok(a.headers['metric-definitions-version'], `${where}: Metric-Definitions-Version`);
    let body: unknown;
    try {
      body = JSON.parse(a.text);
    } catch {
      body = a.text;
    }
    t.ok(typeof (body as { message?: unknown }).message === 'string' && Object.keys(body as object).join() === 'error,message' && (body as { error: unknown }).error === true,
      `${where}: the body is exactly { error: true, message }`, { body: a.text.slice(0, 300) });
    return [];
  }
  if (a.status === 202) {
    t.equal(a.text, '', `${where}: 202 has no body`);
    return [];
  }
  t.equal(a.status, 200, `${where}: JSON-RPC answers are 200`);
  const parsed = JSON.parse(a.text) as RpcAnswer | RpcAnswer[];
  const answers = Array.isArray(parsed) ? parsed : [parsed];
  for (const r of answers) {
    if (r.error) {
      t.ok(RPC_CODES.has(r.error.code), `${where}: a JSON-RPC error is -32600/-32601/-32602`, { error: r.error });
      t.notMatch(r.error.message, /"code":|invalid_type|Zod|stack size/i, `${where}: a clear message, no validator dump`);
      continue;
    }
    const result = r.result!;
    if ('tools' in result) {
      t.ok(Array.isArray((result as { tools: unknown }).tools), `${where}: a tools/list result`);
      continue;
    }
    t.ok(Array.isArray(result.content) && result.content[0]?.type === 'text', `${where}: a result has text content`);
    const text = result.content[0]?.text ?? '';
    if (result.isError) {
      const e = result.structuredContent as { error: unknown; status: number; code: string; message: unknown };
      t.ok(e.error === true && [400, 404, 413, 429, 503].includes(e.status) && CODES.has(e.code) && ERRORS[e.code as ErrorCode].status === e.status && typeof e.message === 'string',
        `${where}: a tool error is { error, status 400/404/413/429/503, code, message }`, { text: text.slice(0, 300) });
      t.same(JSON.parse(text), e, `${where}: its text is its structuredContent`);
    } else {
      t.doesNotThrow(() => JSON.parse(text), `${where}: the text is the HTTP body (JSON)`);
    }
  }
  return answers;
}
