// The API bodies' validators are generated code (src/serve/bodies/body-validators.gen.ts, `npm run gen`):
// they must judge every body as the schemas compiled at run time do, accepting the real ones and
// refusing the same broken ones, since a served body is checked by them before it is cached.
import t from 'tap';
import { describeErrors } from '../../src/events';
import { ENDPOINTS } from '../../src/readmodels';
import { BodySchemas } from '../../src/serve/bodies/bodies';
import { apiAjv } from '../helpers/readmodels';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey } from '../helpers/http';

/** A body's first object: itself, or its first item (null for an empty list). */
const firstObject = (b: unknown): Record<string, unknown> | null =>
  (Array.isArray(b) ? (b.length > 0 && typeof b[0] === 'object' ? b[0] : null) : b) as Record<string, unknown> | null;

/** The ways a body is broken: an unknown field, a required one gone, a value of the wrong type, in its first object. */
function brokenCopies(body: unknown): Array<[string, unknown]> {
  const first = firstObject(body);
  if (first === null) return [];
  const broken = (how: string, change: (o: Record<string, unknown>) => void): [string, unknown] => {
    const copy = JSON.parse(JSON.stringify(body)) as unknown;
    change(firstObject(copy)!);
    return [how, copy];
  };
  const out = [broken('an unknown field', (o) => (o.not_in_the_schema = 1))];
  const key = Object.keys(first)[0];
  if (key !== undefined) out.push(broken(`without ${key}`, (o) => delete o[key]), broken(`${key} of the wrong type`, (o) => (o[key] = { not: 'this' })));
  return out;
}

t.test('generated body validators judge as the schemas compiled at run time: real bodies pass, broken ones fail alike', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db });
  t.teardown(() => api.close());
  const generated = new BodySchemas();
  const key = activeKeys[0]!.key;
  const project = ((await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const group = ((await request(`${api.base}/projects/${project}/runs`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  let refused = 0;
  for (const e of ENDPOINTS) {
    const url = api.base + e.path.replace(':project_id', project).replace(':run_group_id', group);
    const r = await request(url, withKey(key));
    t.equal(r.status, 200, `${e.name}: 200`);
    const reference = apiAjv.getSchema(`api/${e.schema}.json`)!;
    t.equal(generated.check(e.schema, r.json), null, `${e.name}: the served body passes`);
    for (const [how, body] of brokenCopies(r.json)) {
      const expected = reference(body) ? null : describeErrors(reference.errors);
      t.not(expected, null, `${e.name}, ${how}: the schema refuses it`);
      t.equal(generated.check(e.schema, body), expected, `${e.name}, ${how}: refused with the same message`);
      refused += 1;
    }
  }
  t.ok(refused >= ENDPOINTS.length, `${refused} broken bodies refused`);
});
