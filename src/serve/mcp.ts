// MCP (Model Context Protocol, issue 15): one read-only tool per endpoint of the table, served over
// stdio (`visibility-api mcp`) and over streamable HTTP at /mcp on the API port. A tool call goes
// through the same Responder as an HTTP GET, so it answers the same validated bytes, with the same
// key scoping: a foreign project is the same "Not found" as HTTP's 404.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Endpoint } from '../readmodels';
import { METRIC_DEFINITIONS_VERSION } from '../readmodels/methodology';
import type { Access } from './access';
import { presentedKeyHash } from './auth';
import { BASE_PATH } from './base-path';
import { CODE_HEADER, DEFINITIONS_HEADER, errorBody, HttpError, httpError } from './errors';
import { pathParams, queryParams } from './params';
import type { RateLimiter } from './ratelimit';
import type { Responder } from './responder';
import { noteOf } from './served';
import type { Logger } from '../lib/log';

export const MCP_PATH = '/mcp';
export const MCP_SERVER_NAME = 'visibility-api';

type Sdk = typeof import('@modelcontextprotocol/sdk/server/index.js') & typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')
  & typeof import('@modelcontextprotocol/sdk/types.js');
let loadedSdk: Sdk | undefined;

/**
 * The MCP SDK, loaded at the first MCP exchange: loading it (with its dependencies) cost ~85 ms of
 * CPU at every start of serve, on two cores beside the Kafka thread's first catch-up.
 */
function sdk(): Sdk {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded when first needed (above) */
  return (loadedSdk ??= {
    ...(require('@modelcontextprotocol/sdk/server/index.js') as typeof import('@modelcontextprotocol/sdk/server/index.js')),
    ...(require('@modelcontextprotocol/sdk/server/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')),
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
 * Schema of schemas/params/<name>.json with the endpoint's own bounds - the very objects the HTTP
 * layer validates a request with and the OpenAPI document lists (params.ts). The arguments are then
 * handed to that same validation, so a wrong value gets the HTTP 400's message.
 */
export function toolInputSchema(endpoint: Endpoint): InputSchema {
  const path = pathParams(endpoint);
  const properties: Record<string, object> = {};
  for (const p of [...path, ...queryParams(endpoint)]) properties[p.name] = { ...p.schema, description: p.description };
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

/** The cursor of the next page, from the body's Link header (`<...cursor=X...>; rel="next"`). */
function nextCursor(link: string | undefined): string | null {
  const m = link ? /<([^>]*)>\s*;\s*rel="?next"?/.exec(link) : null;
  return m ? new URL(m[1]!, 'http://x').searchParams.get('cursor') : null;
}

function errorResult(err: HttpError): CallToolResult {
  const body = { error: true, status: err.status, code: err.code, message: err.message };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

export interface McpDeps {
  endpoints: readonly Endpoint[];
  responder: Responder;
  isReady?: () => boolean;
}

/**
 * One MCP server acting for one API key (its SHA-256). The text content is the HTTP body's exact
 * JSON; structuredContent is that body when it is an object, else `{ items }` (MCP wants an object),
 * plus `next_cursor` on paged lists.
 */
export function createMcpServer(deps: McpDeps, hash: string): Server {
  const { Server, ListToolsRequestSchema, CallToolRequestSchema } = sdk();
  const server = new Server({ name: MCP_SERVER_NAME, version: '1.1.0' }, { capabilities: { tools: { listChanged: false } } });
  const tools = toolList(deps.endpoints);
  const byName = new Map(deps.endpoints.map((e) => [toolName(e), e]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const endpoint = byName.get(req.params.name);
    if (!endpoint) return errorResult(httpError('not_found', `Unknown tool ${JSON.stringify(req.params.name)}`));
    try {
      if (deps.isReady && !deps.isReady()) throw httpError('not_ready');
      const resolved = deps.responder.resolve(endpoint, { ...toRequest(endpoint, req.params.arguments ?? {}), keyHash: hash });
      const { ready } = await deps.responder.respond(resolved);
      const text = ready.json.toString('utf8');
      const body = JSON.parse(text) as unknown;
      const structured: Record<string, unknown> = Array.isArray(body) ? { items: body } : (body as Record<string, unknown>);
      if (endpoint.page) structured.next_cursor = nextCursor(ready.headers.link);
      return { content: [{ type: 'text', text }], structuredContent: structured };
    } catch (err) {
      if (err instanceof HttpError) return errorResult(err);
      throw err;
    }
  });
  return server;
}

/** An error in the API's contract: its status and headers, X-Error-Code, the definitions version, { error, message }. */
function sendError(res: ServerResponse, err: HttpError): void {
  const body = errorBody(err.message);
  res.writeHead(err.status, {
    ...err.headers, [CODE_HEADER]: err.code, [DEFINITIONS_HEADER]: METRIC_DEFINITIONS_VERSION,
    'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

export interface McpHttpDeps extends McpDeps {
  access: Access;
  /** The API's limiter: one POST /mcp is one request of the key (a JSON-RPC batch too). */
  limiter?: RateLimiter;
  /** Where a failure is logged. */
  logger: Logger;
}

/**
 * POST /mcp: streamable HTTP in stateless mode - every request is a whole exchange with a server
 * made for it (no session to keep, any instance can answer), JSON answers rather than SSE streams.
 * The key goes on the request as for the API (X-API-Key or Authorization: ApiKey); without a
 * valid one the answer is 401 before MCP sees it, and a key over its rate gets the API's 429. GET
 * (a server-to-client stream) and DELETE (end a session) have nothing to do without sessions: 405.
 */
export function createMcpHttpHandler(deps: McpHttpDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async function serveMcp(req, res) {
    const note = noteOf(req);
    if (note) {
      note.route = 'mcp';
      note.template = MCP_PATH;
    }
    if (req.method !== 'POST') return sendError(res, httpError('method_not_allowed', undefined, { Allow: 'POST' }));
    const hash = presentedKeyHash(req.headers);
    deps.access.refresh();
    const accountId = hash === null ? null : deps.access.account(hash);
    if (hash === null || accountId === null) return sendError(res, httpError('invalid_api_key'));
    if (note) note.accountId = accountId;
    let rateLimit: Record<string, string> = {};
    try {
      rateLimit = deps.limiter?.charge(hash) ?? {};
    } catch (err) {
      if (err instanceof HttpError) return sendError(res, err);
      throw err;
    }
    for (const [name, value] of Object.entries(rateLimit)) res.setHeader(name, value);
    res.setHeader(DEFINITIONS_HEADER, METRIC_DEFINITIONS_VERSION);
    const server = createMcpServer(deps, hash);
    const transport = new (sdk().StreamableHTTPServerTransport)({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch (err) {
      deps.logger.error({ err, request_id: note?.requestId, route: 'mcp' }, 'POST /mcp failed');
      if (!res.headersSent) sendError(res, httpError('internal'));
      else res.destroy();
    }
  };
}

/** The request is for /mcp (a cheap prefix test: no URL parsing on the way to other routes). */
export function isMcpRequest(url: string | undefined): boolean {
  return url !== undefined && url.startsWith(MCP_PATH) && (url.length === MCP_PATH.length || url[MCP_PATH.length] === '?');
}
