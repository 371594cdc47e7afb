// src/serve/docs: the documents about the API, served beside it: the OpenAPI document, the pages (the
// dashboard and the reference, from dist/web) and llms.txt.
// May import: the core (src/serve/request, bodies, http), the other surfaces (feed, mcp: the documents
// describe them) and the stages below serve. Only the wiring (app.ts) imports this room.
export { buildOpenApi } from './openapi';
export { pagesMiddleware } from './pages';
export { llmsTxtMiddleware } from './llms';
