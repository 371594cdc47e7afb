// /projects/{project_id}/runs/{run_group_id}[/results]: the legacy run-group bodies under
// the group's project, so that a router by project reaches them in one hop.
import t from 'tap';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey } from '../helpers/http';

t.test('a run group under its project answers the legacy path\'s bytes; under any other project, 404', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db });
  t.teardown(async () => {
    await api.close();
    db.close();
  });
  let compared = 0;
  const differing: string[] = [];
  const crossed: string[] = [];
  for (const { key } of activeKeys) {
    const projects = (await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>;
    for (const p of projects) {
      const groups = (await request(`${api.base}/projects/${p.id}/runs`, withKey(key))).json as Array<{ id: string }>;
      for (const g of groups) {
        for (const tail of ['', '/results']) {
          const [legacy, scoped] = await Promise.all([`/runs/${g.id}${tail}`, `/projects/${p.id}/runs/${g.id}${tail}`].map((u) => request(api.base + u, withKey(key))));
          compared += 1;
          if (scoped!.status !== 200 || scoped!.text !== legacy!.text || scoped!.headers.etag !== legacy!.headers.etag) differing.push(`${p.id} ${g.id}${tail}`);
          // The same group under every other project the key sees: not found there.
          for (const other of projects.filter((o) => o.id !== p.id)) {
            const r = await request(`${api.base}/projects/${other.id}/runs/${g.id}${tail}`, withKey(key));
            if (r.status !== 404 || r.text !== '{"error":true,"message":"Not found"}') crossed.push(`${other.id} ${g.id}${tail} ${r.status}`);
          }
        }
      }
    }
  }
  t.ok(compared > 100, `${compared} run-group bodies compared`);
  t.same(differing, [], 'each answers the legacy path\'s body and ETag');
  t.same(crossed, [], 'a group under another project of the same key is the plain 404');

  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const group = ((await request(`${api.base}/projects/${project}/runs`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const bad = await request(`${api.base}/projects/not-a-uuid/runs/${group}`, withKey(key));
  t.equal(bad.status, 400, 'a malformed project id is a 400');
  t.match((bad.json as { message: string }).message, /project_id/, 'naming project_id');
  const otherAccount = activeKeys.find((k) => k.account_id !== activeKeys[0]!.account_id);
  if (otherAccount) {
    const r = await request(`${api.base}/projects/${project}/runs/${group}`, withKey(otherAccount.key));
    const seen = ((await request(`${api.base}/projects`, withKey(otherAccount.key))).json as Array<{ id: string }>).some((p) => p.id === project);
    t.equal(r.status, seen ? 200 : 404, 'another account: 404 unless it sees the project');
  }
});
