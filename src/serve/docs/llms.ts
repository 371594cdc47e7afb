// GET /llms.txt (https://llmstxt.org): where an agent finds the API's machine-readable
// description, the meaning of its numbers, the MCP endpoint and the typed clients. Public (it
// holds nothing a key protects), plain text, the same bytes for every request.
import type { Context } from 'koa';
import type { Endpoint } from '../../readmodels';
import { serviceVersion } from '../../lib/version';
import { httpError } from '../request/errors';
import { MCP_PATH, toolName } from '../mcp/mcp';

export const LLMS_PATH = '/llms.txt';

/** The document: markdown as llms.txt wants it (H1, a summary quote, sections of links). */
export function llmsTxt(basePath: string, endpoints: readonly Endpoint[]): string {
  const lines = [
    '# visibility-api',
    '',
    '> A read-only HTTP API serving AI-search-visibility dashboards: how often AI engines (ChatGPT, Perplexity,',
    '> Gemini, Claude, Google AI Overviews) mention a brand for its tracked prompts, at what position and',
    '> sentiment, which sources they cite, how competitors compare, and which forum threads are worth joining.',
    '',
    `Version ${serviceVersion()} (the OpenAPI document's info.version and the MCP server's serverInfo say the same).`,
    '',
    `Every endpoint is GET under ${basePath} and needs an API key (header \`X-API-Key: KEY\` or`,
    '`Authorization: ApiKey KEY`); a key sees only its own account\'s projects (others answer 404).',
    'Bodies are JSON, validated against the JSON Schemas of the OpenAPI document; lists that page name the',
    'next page in a `Link: <...>; rel="next"` header; rate-limited keys get `RateLimit` and `RateLimit-Policy`.',
    '',
    '## Docs',
    '',
    `- [OpenAPI document](${basePath}/openapi.json): every endpoint, parameter, body schema, header and error (OpenAPI 3.1, public).`,
    `- [Methodology](${basePath}/methodology): what every metric means, its formula, window and orderings, as JSON.`,
    '- README.md (repository): quick start, the API, errors, pagination, rate limits, the command line.',
    '- docs/metrics.md (repository): the metric definitions in prose, with worked examples.',
    '',
    '## Slice and compare',
    '',
    `- Filters \`country\`, \`persona\`, \`model\`, \`segment_ids\` (repeat once per value; beside \`engine_ids\`) on: ${taking(endpoints, 'country')}.`,
    `  ${basePath}/projects/{project_id}/dimensions lists the values a project's runs name.`,
    `- \`compare=previous_period\` (or \`compare_start_date\` + \`compare_end_date\`) on: ${taking(endpoints, 'compare')}. A report's rates`,
    '  gain `<rate>_change` (the previous value, the difference, its 95 % Newcombe interval, `significant`).',
    `- \`group_by\` (one or two of engine, prompt, segment, country, persona, model, day|week|month) on: ${taking(endpoints, 'group_by')}: \`groups\`.`,
    `- ${basePath}/projects/{project_id}/signals: the changes between two periods that hold across the project's slices`,
    '  (false discovery rate 5 %, Benjamini-Hochberg), each with its interval, p-value and q-value.',
    '',
    '## MCP',
    '',
    `- [MCP endpoint](${MCP_PATH}): Model Context Protocol over streamable HTTP (POST, stateless, JSON answers), the same API key`,
    '  in `X-API-Key`. Locally: `visibility-api mcp --db FILE` over stdio with `VISIBILITY_API_KEY` set.',
    `- Tools (read-only, one per endpoint, the same bodies as HTTP): ${endpoints.map(toolName).join(', ')}.`,
    '',
    '## Typed clients',
    '',
    '- clients/typescript (repository, package `@visibility-api/client`): `createClient({ baseUrl, apiKey })`, typed calls',
    '  generated from the OpenAPI document, `pages()` to iterate cursor pages, the RateLimit fields parsed.',
    '- clients/python (repository, `pip install ./clients/python`): `VisibilityClient` / `AsyncVisibilityClient` over calls',
    '  generated from the OpenAPI document (openapi-python-client), `items()` through every page, 429s retried after Retry-After.',
    '',
    '## Bulk data',
    '',
    '- `visibility-api export --db FILE --out DIR [--project ID,...] [--start-date --end-date]` (command line, for operators):',
    '  Parquet files of runs, mentions, citations, daily visibility per engine and forum posts, by project and month, with a',
    '  manifest; a second run writes only what changed. docs/export.md (repository) has the columns.',
    '',
    '## Optional',
    '',
    `- [Projects](${basePath}/projects): the first call of every session (the projects the key sees).`,
    '',
  ];
  return lines.join('\n');
}

/** The names of the endpoints that take a query parameter, as their operation ids. */
const taking = (endpoints: readonly Endpoint[], param: Endpoint['params'][number]): string =>
  endpoints.filter((e) => e.params.includes(param)).map((e) => e.name).join(', ');

/** Koa middleware answering /llms.txt (GET, HEAD; other methods 405); other paths pass on. */
export function llmsTxtMiddleware(basePath: string, endpoints: readonly Endpoint[]) {
  const body = Buffer.from(llmsTxt(basePath, endpoints));
  return async function serveLlmsTxt(ctx: Context, next: () => Promise<void>): Promise<void> {
    if (ctx.path !== LLMS_PATH) return next();
    ctx.state.route = 'llms.txt';
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw httpError('method_not_allowed');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  };
}
