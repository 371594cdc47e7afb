// One version, said everywhere, and the README's tables checked against the code: the version is
// package.json's, and the OpenAPI document, MCP's serverInfo, /llms.txt, `visibility-api --version`,
// the Python and TypeScript clients and the README say it; the README's endpoint table lists the
// routes the service has, its MCP section the tools the server lists, its command table the
// commands `help` prints. The dashboard's rankings panel names what its chart shows.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { COMMANDS } from '../../src/cli/main';
import { ENDPOINTS } from '../../src/readmodels';
import { toolName } from '../../src/serve/mcp/mcp';
import { asSource, W, world } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { request, startApi } from '../helpers/http';
import { postMcp } from '../helpers/mcp';
import { ROOT } from '../helpers/paths';
import { runCliSync } from '../helpers/processes';

const read = (f: string): string => fs.readFileSync(path.join(ROOT, f), 'utf8');
const VERSION = (JSON.parse(read('package.json')) as { version: string }).version;
const README = read('README.md');

/** The lines of the README's table under the header row `head` (up to the first line that is not a row). */
function tableRows(head: string): string[][] {
  const lines = README.split('\n');
  const at = lines.findIndex((l) => l.startsWith(head));
  if (at < 0) throw new Error(`no table headed ${head}`);
  const rows: string[][] = [];
  for (const l of lines.slice(at + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(l.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

t.test('one version: package.json, the OpenAPI document, MCP serverInfo, /llms.txt, --version, the clients, the README', async (tt) => {
  tt.match(VERSION, /^\d+\.\d+\.\d+$/);
  const { db, projector } = freshDb(tt);
  projector.applyBatch(asSource(world()));
  const api = await startApi({ db });
  tt.teardown(() => api.close());
  const doc = await request(`${api.base}/openapi.json`);
  tt.equal((doc.json as { info: { version: string } }).info.version, VERSION, 'OpenAPI info.version');
  const llms = await request(`${api.base.replace('/v1/public', '')}/llms.txt`);
  tt.equal(llms.status, 200);
  tt.match(llms.text, new RegExp(`^Version ${VERSION.replace(/\./g, '\\.')} `, 'm'), '/llms.txt');
  const init = await postMcp(api.base.replace('/v1/public', ''), W.key, JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
  }));
  tt.equal(init.status, 200, init.text);
  tt.match(JSON.parse(init.text), { result: { serverInfo: { name: 'visibility-api', version: VERSION } } }, 'MCP serverInfo');
  const cli = runCliSync(['--', '--version']); // '--': node would take --version as its own
  tt.equal(cli.status, 0);
  tt.equal(cli.stdout, `visibility-api ${VERSION}\n`, 'visibility-api --version');
  tt.match(read('clients/python/pyproject.toml'), new RegExp(`^version = "${VERSION}"$`, 'm'), 'the Python client');
  tt.equal((JSON.parse(read('clients/typescript/package.json')) as { version: string }).version, VERSION, 'the TypeScript client');
  const lock = JSON.parse(read('package-lock.json')) as { version: string; packages: Record<string, { version?: string }> };
  tt.equal(lock.version, VERSION, 'package-lock.json');
  tt.equal(lock.packages['']!.version, VERSION);
  tt.ok(README.includes(`This is version **${VERSION}**`), 'the README says it');
  const minor = VERSION.split('.').slice(0, 2).join('.');
  for (const m of README.matchAll(/\(v(\d+\.\d+)\)/g)) tt.ok(m[1]! <= minor, `the README's (v${m[1]}) is not ahead of ${VERSION}`);
});

t.test("the README's endpoint table: every route, in the service's order", async (tt) => {
  const rows = tableRows('| # | path | what | query |');
  const shown = rows.map((r) => r[1]!.replace(/^`|`$/g, ''));
  tt.strictSame(shown, ENDPOINTS.map((e) => e.path.replace(/:([a-z_]+)/g, '{$1}')));
  tt.ok(README.includes(`serves ${ENDPOINTS.length} GET endpoints`), `the introduction says ${ENDPOINTS.length}`);
});

t.test("the README's MCP tools: every tool the server lists", async (tt) => {
  const mcp = README.slice(README.indexOf('\n## MCP\n'), README.indexOf('\n## Typed client'));
  const list = /one read-only tool per endpoint\s*\((\d+): ([^)]*)\)/.exec(mcp);
  tt.ok(list, 'the list of tools');
  const names = [...list![2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
  tt.strictSame(names, ENDPOINTS.map(toolName));
  tt.equal(Number(list![1]), ENDPOINTS.length, 'and their number');
});

t.test("the README's command table: every command, none that is not one", async (tt) => {
  const rows = tableRows('| command | does |');
  const named = new Set(rows.map((r) => /^`([a-z-]+)/.exec(r[0]!)![1]));
  tt.strictSame([...named].sort(), Object.keys(COMMANDS).sort());
});

t.test("the dashboard's rankings panel says what its chart shows (share of voice)", async (tt) => {
  const html = read('web/index.html');
  const panel = /<h2>Competitor rankings<\/h2>\s*<p class="note">([^<]*)<\/p>/.exec(html);
  tt.ok(panel, 'the note under the heading');
  tt.match(read('web/charts.ts'), /text: 'share of voice, %'/, "the chart's axis");
  tt.match(panel![1], /share of voice/);
  tt.notMatch(panel![1], /mention rate/);
});
