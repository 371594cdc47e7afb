// GET /llms.txt over real HTTP: public, text/plain, and every link it gives works.
import t from 'tap';
import { ENDPOINTS } from '../../src/readmodels';
import { toolName } from '../../src/serve/mcp/mcp';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey } from '../helpers/http';

t.test('/llms.txt', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(async () => {
    await api.close();
    db.close();
  });
  const origin = api.base.replace(/\/v1\/public$/, '');
  const r = await request(`${origin}/llms.txt`);
  t.equal(r.status, 200, 'public: no key needed');
  t.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
  t.match(r.text, /^# visibility-api\n\n> /, 'an H1 and a summary, as llms.txt wants');
  for (const section of ['## Docs', '## MCP', '## Typed client']) t.match(r.text, section);
  for (const name of ENDPOINTS.map(toolName)) t.match(r.text, name, `names the tool ${name}`);
  t.match(r.text, '@visibility-api/client');
  t.match(r.text, 'clients/python', 'names the Python client');
  t.match(r.text, 'visibility-api export', 'names the Parquet export');
  const filters = r.text.split('\n').find((l) => l.startsWith('- Filters `country`'));
  t.same(filters?.replace(/^.* on: /, '').replace(/\.$/, '').split(', ').sort(), ENDPOINTS.filter((e) => e.params.includes('country')).map((e) => e.name).sort(),
    'slice and compare: the filters on every endpoint that takes them');
  t.match(r.text, '/projects/{project_id}/signals', 'names the signals');

  const links = [...r.text.matchAll(/\]\((\/[^)]+)\)/g)].map((m) => m[1]!);
  t.same(links.filter((l) => l !== '/mcp').sort(), ['/v1/public/methodology', '/v1/public/openapi.json', '/v1/public/projects'].sort());
  t.ok(links.includes('/mcp'), 'the MCP endpoint');
  for (const link of links) {
    const key = withKey(activeKeys[0]!.key);
    const answer = link === '/mcp' ? await request(origin + link, { method: 'POST', headers: { 'content-type': 'application/json' } }) : await request(origin + link, key);
    if (link === '/mcp') t.equal(answer.status, 401, '/mcp is there (and wants a key)');
    else t.equal(answer.status, 200, `${link} answers`);
  }

  const head = await request(`${origin}/llms.txt`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.raw.length, 0);
  const post = await request(`${origin}/llms.txt`, { method: 'POST' });
  t.equal(post.status, 405);
  t.equal(post.headers.allow, 'GET, HEAD');
});
