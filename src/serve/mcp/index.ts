// src/serve/mcp: the Model Context Protocol surface, one read-only tool per endpoint, over stdio
// (`visibility-api mcp`) and streamable HTTP at /mcp; mcp-body.ts reads an HTTP request body within
// its limits. A tool call goes through the same admission and Responder as an HTTP GET.
// May import: the core (src/serve/request, bodies, http) and the stages below serve. Not feed/ or docs/.
export { createMcpServer, createMcpHttpHandler, MCP_PATH, toolName } from './mcp';
