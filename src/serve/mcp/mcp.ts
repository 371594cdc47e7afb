// MCP (Model Context Protocol): one read-only tool per endpoint of the table, served over
// stdio (`visibility-api mcp`) and over streamable HTTP at /mcp on the API port. A tool call goes
// through the same admission step and Responder as an HTTP GET, so it answers the same validated
// bytes, with the same key scoping: a foreign project is the same "Not found" as HTTP's 404.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, JSONRPCRequest, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createAjv } from '../../events';
import type { Endpoint } from '../../readmodels';
import { METRIC_DEFINITIONS_VERSION } from '../../readmodels/methodology';
import { serviceVersion } from '../../lib/version';
import type { Admission } from '../http/admission';
import { presentedKeyHash } from '../request/api-key';
import { BASE_PATH } from '../request/base-path';
import { CACHE_CONTROL, CODE_HEADER, DEFINITIONS_HEADER, errorBody, HttpError, httpError, type ErrorCode } from '../request/errors';
import { parseBody, readBody } from './mcp-body';
import { accepts, pathParams, queryParams, shown, unknownParameter, wireSchema, type ParamDef } from '../request/params';
import { noteOf } from '../http/served';
import type { Logger } from '../../lib/log';

export const MCP_PATH = '/mcp';
export const MCP_SERVER_NAME = 'visibility-api';

type Sdk = typeof import('@modelcontextprotocol/sdk/server/index.js') & typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')
  & typeof import('@modelcontextprotocol/sdk/server/requestBody.js') & typeof import('@modelcontextprotocol/sdk/types.js');
let loadedSdk: Sdk | undefined;

/**
 * The MCP SDK, loaded at the first MCP exchange: loading it (with its dependencies) cost ~85 ms of
 * CPU at every start of serve, on two cores beside the Kafka thread's first catch-up.
 */
function sdk(): Sdk {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded when first needed (above) */
  return (loadedSdk ??= {
    ...(require('@modelcontextprotocol/sdk/server/index.js') as typeof import('@modelcontextprotocol/sdk/server/index.js')),
    ...(require('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js') as typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')),
    ...(require('@modelcontextprotocol/sdk/server/requestBody.js') as typeof import('@modelcontextprotocol/sdk/server/requestBody.js')),
    ...(require('@modelcontextprotocol/sdk/types.js') as typeof import('@modelcontextprotocol/sdk/types.js')),
  });
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** JSON Schema of a tool's arguments (an object schema, as MCP requires). */
type InputSchema = Tool['inputSchema'];

/** Tool names: the endpoint's stable name with underscores (competitor-rankings -> competitor_rankings). */
export function toolName(endpoint: Endpoint): string {
  return endpoint.name.replace(/-/g, '_');
}

/**
 * The tool's input: the endpoint's path parameters (required) and query parameters, each the JSON
 * Schema of the schemas/params file the endpoint lists (with its bounds) - the very objects the HTTP
 * layer validates a request with and the OpenAPI document lists (params.ts). The arguments are then
 * handed to that same parser, so a wrong value gets the HTTP 400's message.
 */
export function toolInputSchema(endpoint: Endpoint): InputSchema {
  const path = pathParams(endpoint);
  const properties: Record<string, object> = {};
  for (const p of [...path, ...queryParams(endpoint)]) properties[p.name] = { ...wireSchema(p), description: p.description };
  return { type: 'object', properties, required: path.map((p) => p.name), additionalProperties: false };
}

export function toolList(endpoints: readonly Endpoint[]): Tool[] {
  return endpoints.map((e) => ({
    name: toolName(e),
    title: e.summary,
    description: `${e.summary} (GET ${BASE_PATH}${e.path.replace(/:([a-z_]+)/g, '{$1}')}; the same body as the HTTP API).`,
    inputSchema: toolInputSchema(e),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  }));
}

/** The tool list of an endpoint table, made once (every POST /mcp builds a server). */
const toolLists = new WeakMap<readonly Endpoint[], Tool[]>();
function toolsOf(endpoints: readonly Endpoint[]): Tool[] {
  let tools = toolLists.get(endpoints);
  if (tools === undefined) toolLists.set(endpoints, (tools = toolList(endpoints)));
  return tools;
}

/** Tool arguments as the HTTP layer's path parameters and query string, so one parser checks both. */
export function toRequest(endpoint: Endpoint, args: Record<string, unknown>): { params: Record<string, string | undefined>; query: ParsedUrlQuery } {
  const params: Record<string, string | undefined> = {};
  for (const { name } of pathParams(endpoint)) params[name] = typeof args[name] === 'string' ? args[name] : undefined;
  const query: ParsedUrlQuery = {};
  for (const [name, value] of Object.entries(args)) {
    if (name in params || value === undefined || value === null) continue;
    query[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return { params, query };
}

interface ArgumentCheck {
  validate: ValidateFunction;
  params: Map<string, ParamDef>;
}

let ajv: ReturnType<typeof createAjv> | undefined;
const argumentChecks = new WeakMap<Endpoint, ArgumentCheck>();

/**
 * What a value must be in JSON before it is a request at all: a string, an integer, or a list of
 * strings. Its bounds, patterns, letter case and repeats are then the HTTP parser's business
 * (params.ts queryArgs, pathUuid), so a tool call and a GET accept the same values with the same
 * messages (country: ["us"] as country=us; 65 repeats of one value as 65 repeats over HTTP).
 */
function shapeOf(p: ParamDef): object {
  if (p.schema.type === 'array') return { type: 'array', items: { type: 'string' } };
  return { type: p.schema.type === 'integer' ? 'integer' : 'string' };
}

/** The arguments' names and JSON types, compiled once per endpoint, with its parameters by name for the messages. */
function argumentCheck(endpoint: Endpoint): ArgumentCheck {
  let c = argumentChecks.get(endpoint);
  if (c === undefined) {
    ajv ??= createAjv();
    const path = pathParams(endpoint);
    const params = [...path, ...queryParams(endpoint)];
    const shapes = { type: 'object', properties: Object.fromEntries(params.map((p) => [p.name, shapeOf(p)])), required: path.map((p) => p.name), additionalProperties: false };
    c = { validate: ajv.compile(shapes), params: new Map(params.map((p) => [p.name, p])) };
    argumentChecks.set(endpoint, c);
  }
  return c;
}

/** A value as an argument message shows it: a string quoted (at most 64 characters), a list or object by its kind only. */
function described(value: unknown): string {
  if (typeof value === 'string') return shown(value);
  if (Array.isArray(value)) return `an array of ${value.length} values`;
  if (value !== null && typeof value === 'object') return 'an object';
  return value === undefined ? 'nothing' : String(value);
}

/**
 * The 400 for arguments that are not a request: an unknown argument as HTTP's unknown parameter
 * (unknown_parameter: the nearest name and all the tool takes), a missing required one with what it
 * accepts, a value of the wrong JSON type with the HTTP 400's message ("<name> must be <x-accepts>,
 * got <what was sent>").
 */
function argumentError(endpoint: Endpoint, c: ArgumentCheck, args: Record<string, unknown>, errors: ErrorObject[] | null | undefined): HttpError {
  const err = errors?.[0];
  if (err?.keyword === 'additionalProperties') {
    const name = (err.params as { additionalProperty: string }).additionalProperty;
    return unknownParameter(name, toolName(endpoint), [...c.params.keys()]);
  }
  if (err?.keyword === 'required') {
    const name = (err.params as { missingProperty: string }).missingProperty;
    const p = c.params.get(name);
    return httpError('invalid_parameter', p ? `${name} is required: ${accepts(p)}` : `${name} is required`);
  }
  const [, name = '', index] = (err?.instancePath ?? '').split('/');
  const p = c.params.get(name);
  if (!p) return httpError('invalid_parameter');
  const value = args[name];
  return httpError('invalid_parameter', `${name} must be ${accepts(p)}, got ${described(index !== undefined && Array.isArray(value) ? value[Number(index)] : value)}`);
}

/** The cursor of the next page, from the body's Link header (`<...cursor=X...>; rel="next"`). */
function nextCursor(link: string | undefined): string | null {
  const m = link ? /<([^>]*)>\s*;\s*rel="?next"?/.exec(link) : null;
  return m ? new URL(m[1]!, 'http://x').searchParams.get('cursor') : null;
}

/** The tool error of a call past the answer's cap (MCP_ANSWER_MAX_BYTES). */
function overBudget(b: AnswerBudget): HttpError {
  const mib = Math.round((b.max / (1024 * 1024)) * 10) / 10;
  return httpError('payload_too_large', `This answer reached its cap of ${mib} MiB: this call was not answered; send it in another request`);
}

function errorResult(err: HttpError): CallToolResult {
  const body = { error: true, status: err.status, code: err.code, message: err.message };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

/** JSON-RPC error codes this server answers with (JSON-RPC 2.0 section 5.1). */
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

/** A JSON-RPC error the SDK answers as it is: its code, and the message without the SDK's "MCP error N:" prefix. */
class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface McpDeps {
  endpoints: readonly Endpoint[];
  /** The admission step every transport shares (ready, key, parameters and scope, charge, failure hook). */
  admission: Admission;
  /** Where an unexpected failure of a tool call is logged (it answers a 500 tool error). */
  logger?: Logger;
  /** The request a failure is logged with. */
  requestId?: string;
  /** The bytes one answer may carry (POST /mcp: one per request, shared by a batch's calls); absent: no cap. */
  budget?: AnswerBudget;
}

/**
 * The bytes one POST /mcp may answer with. A call's result carries its body twice (as text and as
 * structuredContent, as MCP asks), so a batch of 100 year-long reports answered ~100 MB at once and
 * held the serving thread and the memory of the process while it did. Past the cap, the batch's
 * remaining calls answer a tool error saying so, and the client asks for them in another request.
 */
export const MCP_ANSWER_MAX_BYTES = 8 * 1024 * 1024;

export interface AnswerBudget {
  max: number;
  used: number;
}

/**
 * One MCP server acting for one API key (its SHA-256). The text content is the HTTP body's exact
 * JSON; structuredContent is that body when it is an object, else `{ items }` (MCP wants an object),
 * plus `next_cursor` on paged lists.
 *
 * tools/call is served by the fallback handler, which sees the request as sent: the SDK's own
 * tools/call handler parses it with zod first, and a malformed `arguments` (an array, a string)
 * became -32603 with the zod issues as its message. Here the checks are, in order:
 *   params not an object, no tool name, `arguments` not an object: JSON-RPC -32602 (Invalid params);
 *   an unknown tool name: a tool error, 404 (as an unknown path is, before anything else);
 *   the service not ready: a tool error, 503 (over HTTP the POST as a whole got it first);
 *   an unknown argument: a tool error, 400 unknown_parameter, as HTTP names an unknown parameter;
 *   an argument of the wrong JSON type, or a required one missing: a tool error, 400;
 *   then the same admission and respond as an HTTP GET (admission.ts), with its parser (params.ts:
 *   letter case, repeats, bounds, malformed ids or dates, ranges, cursors: the same 400s) and 404.
 */
export function createMcpServer(deps: McpDeps, hash: string): Server {
  const { Server, ListToolsRequestSchema } = sdk();
  const server = new Server({ name: MCP_SERVER_NAME, version: serviceVersion() }, { capabilities: { tools: { listChanged: false } } });
  const tools = toolsOf(deps.endpoints);
  const byName = new Map(deps.endpoints.map((e) => [toolName(e), e]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));

  async function callTool(params: unknown): Promise<CallToolResult> {
    if (!isObject(params)) throw new RpcError(INVALID_PARAMS, 'Invalid params: tools/call takes an object { name, arguments }');
    if (typeof params.name !== 'string') throw new RpcError(INVALID_PARAMS, `Invalid params: name must be a tool's name (a string), got ${described(params.name)}`);
    const sent = params.arguments === undefined ? {} : params.arguments; // null is not an object of arguments
    if (!isObject(sent)) throw new RpcError(INVALID_PARAMS, `Invalid params: arguments must be an object of the tool's arguments, got ${described(sent)}`);
    const endpoint = byName.get(params.name);
    if (!endpoint) return errorResult(httpError('not_found', `Unknown tool ${shown(params.name)}`));
    try {
      // Admitted as an HTTP GET is, in its order: ready before the arguments are looked at. The call
      // is not charged a request here: POST /mcp paid one per message.
      deps.admission.ready();
      const check = argumentCheck(endpoint);
      const args = sent;
      if (!check.validate(args)) throw argumentError(endpoint, check, sent, check.validate.errors);
      const resolved = deps.admission.admit(endpoint, { ...toRequest(endpoint, args), keyHash: hash }, {}, { charge: false });
      if (deps.budget && deps.budget.used >= deps.budget.max) throw overBudget(deps.budget);
      const { answer: { ready }, built } = await deps.admission.respond(resolved);
      // Charged what it cost, as an HTTP GET is: its build, and its bytes, counted twice (text and
      // structuredContent) when it is answered.
      const bytes = 2 * ready.json.length;
      if (deps.budget && deps.budget.used + bytes > deps.budget.max) {
        deps.budget.used = deps.budget.max; // the calls after this one are refused too: the answer stops growing here
        deps.admission.debit(hash, built, 0);
        throw overBudget(deps.budget);
      }
      if (deps.budget) deps.budget.used += bytes;
      deps.admission.debit(hash, built, bytes);
      const text = ready.json.toString('utf8');
      const body = JSON.parse(text) as unknown;
      const structured: Record<string, unknown> = Array.isArray(body) ? { items: body } : (body as Record<string, unknown>);
      if (endpoint.page) structured.next_cursor = nextCursor(ready.headers.link);
      return { content: [{ type: 'text', text }], structuredContent: structured };
    } catch (err) {
      if (err instanceof HttpError) return errorResult(err);
      // As over HTTP: a 500 that shows no internals, the details in the log, the failure hook told.
      deps.admission.failed(err);
      deps.logger?.error({ err, request_id: deps.requestId, route: 'mcp', tool: params.name }, 'MCP tool call failed');
      return errorResult(httpError('internal'));
    }
  }

  server.fallbackRequestHandler = async (request: JSONRPCRequest) => {
    if (request.method === 'tools/call') return callTool(request.params);
    throw new RpcError(METHOD_NOT_FOUND, 'Method not found');
  };
  return server;
}

/** An error in the API's contract: its status and headers, X-Error-Code, the definitions version, { error, message }. */
function sendError(res: ServerResponse, err: HttpError, close = false): void {
  const body = errorBody(err.message);
  res.writeHead(err.status, {
    ...err.headers, [CODE_HEADER]: err.code, [DEFINITIONS_HEADER]: METRIC_DEFINITIONS_VERSION, 'Cache-Control': CACHE_CONTROL,
    'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body),
    ...(close ? { Connection: 'close' } : {}),
  });
  res.end(body);
}

/** A JSON-RPC answer (HTTP 200). */
function sendJson(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': CACHE_CONTROL });
  res.end(text);
}

/**
 * The SDK transport's refusal (a 4xx whose body is a JSON-RPC error with id null) as the API's
 * error: its status, the table's code for it, the SDK's message.
 */
function fromTransport(status: number, text: string): HttpError {
  let message = 'Bad request';
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string') message = m;
  } catch { /* not JSON: the fallback message */ }
  const code: ErrorCode = status === 400 ? 'invalid_mcp_request' : status === 406 ? 'not_acceptable' : status === 413 ? 'payload_too_large'
    : status === 415 ? 'unsupported_media_type' : status === 405 ? 'method_not_allowed' : 'internal';
  return code === 'internal' ? httpError('internal') : httpError(code, message, code === 'method_not_allowed' ? { Allow: 'POST' } : {});
}

/** Accept lists both types streamable HTTP answers with (the SDK's test: a substring test of the list). */
export const acceptsMcp = (accept: string | undefined): boolean => accept !== undefined && accept.includes('application/json') && accept.includes('text/event-stream');
/** Content-Type's media type (parameters such as charset aside) is application/json. */
export const isJson = (type: string | undefined): boolean => type !== undefined && type.split(';')[0]!.trim().toLowerCase() === 'application/json';

export interface McpHttpDeps extends McpDeps {
  /** The bytes of one answer (MCP_ANSWER_MAX_BYTES by default). */
  answerMaxBytes?: number;
  /** Where a failure is logged. */
  logger: Logger;
}

/**
 * POST /mcp: streamable HTTP in stateless mode - every request is a whole exchange with a server
 * made for it (no session to keep, any instance can answer), JSON answers rather than SSE streams.
 * The key goes on the request as for the API (X-API-Key or Authorization: ApiKey). Admitted in the
 * API's order (admission.ts): a service not ready answers 503 whatever the key, then without a
 * valid key the answer is 401 before MCP sees it, and a key over its rate gets the API's 429. GET
 * (a server-to-client stream) and DELETE (end a session) have nothing to do without sessions: 405.
 *
 * The body is read here, at most 64 KiB, and its depth and widths checked before it is parsed
 * (mcp-body.ts); the SDK's transport gets the parsed body. Every refusal of the POST as a whole is
 * an HTTP error in the API's format (503, 401, 405, 406, 413, 415, 400, 429: X-Error-Code, the
 * definitions version, { error, message }); once the body is JSON-RPC, the answer is JSON-RPC (200).
 * The rate limit charges the POST one request as it arrives and, for a batch of n messages, n - 1
 * more once it is parsed; a batch that needs more than are left is a 429 as a whole, none of it runs.
 */
export function createMcpHttpHandler(deps: McpHttpDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async function serveMcp(req, res) {
    const note = noteOf(req);
    /** A failure no error of the table stands for: logged, told to the failure hook, a 500 as over HTTP. */
    const failed = (err: unknown): void => {
      deps.admission.failed(err);
      deps.logger.error({ err, request_id: note?.requestId, route: 'mcp' }, 'POST /mcp failed');
      if (!res.headersSent) sendError(res, httpError('internal'));
      else res.destroy();
    };
    if (note) {
      note.route = 'mcp';
      note.template = MCP_PATH;
    }
    if (req.method !== 'POST') return sendError(res, httpError('method_not_allowed', undefined, { Allow: 'POST' }));
    // Admitted in the order of every transport (admission.ts): ready (503), then the key (401).
    let hash: string;
    try {
      deps.admission.ready();
      const admitted = deps.admission.key(presentedKeyHash(req.headers));
      hash = admitted.keyHash;
      if (note) note.accountId = admitted.accountId;
    } catch (err) {
      return err instanceof HttpError ? sendError(res, err) : failed(err);
    }
    if (!acceptsMcp(req.headers.accept)) return sendError(res, httpError('not_acceptable'));
    if (!isJson(req.headers['content-type'])) return sendError(res, httpError('unsupported_media_type'));
    // The fields go on the response as soon as a charge is made: the errors below carry them too.
    const charged = (fields: Record<string, string>): void => {
      for (const [name, value] of Object.entries(fields)) res.setHeader(name, value);
    };
    let body: unknown;
    try {
      // A POST costs one request per JSON-RPC message (a batch of n: n), each call then what it cost.
      deps.admission.charge(hash, { fields: charged });
      const bytes = await readBody(req);
      if (!Buffer.isBuffer(bytes)) {
        // Connection: close, and the connection stays open to read what the client is still sending (mcp-body.ts).
        sendError(res, bytes.error, true);
        return bytes.closeGracefully(res);
      }
      body = parseBody(bytes);
      if (Array.isArray(body)) {
        const max = sdk().MAX_BATCH_SIZE;
        if (body.length > max) throw httpError('invalid_mcp_request', `A batch must not have more than ${max} messages, got ${body.length}`);
        const limiter = deps.admission.limiter;
        if (body.length > 1 && limiter?.on) {
          const n = body.length;
          const beyond = n > limiter.burst ? `, more than the ${Math.floor(limiter.burst)} a key may send at once` : '';
          deps.admission.charge(hash, { fields: charged }, n - 1, `a batch of ${n} messages costs ${n} requests (one per message)${beyond}`);
        }
      }
    } catch (err) {
      return err instanceof HttpError ? sendError(res, err) : failed(err);
    }
    res.setHeader(DEFINITIONS_HEADER, METRIC_DEFINITIONS_VERSION);
    // JSON-RPC 2.0 (section 6): an empty batch is answered with one Invalid Request error.
    if (Array.isArray(body) && body.length === 0) {
      return sendJson(res, 200, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'Invalid Request: the batch is empty' } }));
    }
    const server = createMcpServer({ ...deps, requestId: note?.requestId, budget: { max: deps.answerMaxBytes ?? MCP_ANSWER_MAX_BYTES, used: 0 } }, hash);
    const transport = new (sdk().WebStandardStreamableHTTPServerTransport)({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      // The transport reads only these headers (the key stays out of what handlers see).
      const headers = new Headers({ accept: req.headers.accept!, 'content-type': req.headers['content-type']! });
      const version = req.headers['mcp-protocol-version'];
      if (typeof version === 'string') headers.set('mcp-protocol-version', version);
      const answer = await transport.handleRequest(new Request(`http://mcp.local${MCP_PATH}`, { method: 'POST', headers }), { parsedBody: body });
      const text = await answer.text();
      if (answer.status >= 400) return sendError(res, fromTransport(answer.status, text));
      if (text === '') {
        res.writeHead(answer.status, { 'Cache-Control': CACHE_CONTROL });
        res.end();
      } else sendJson(res, answer.status, text);
    } catch (err) {
      failed(err);
    }
  };
}

/** The request is for /mcp (a cheap prefix test: no URL parsing on the way to other routes). */
export function isMcpRequest(url: string | undefined): boolean {
  return url !== undefined && url.startsWith(MCP_PATH) && (url.length === MCP_PATH.length || url[MCP_PATH.length] === '?');
}
