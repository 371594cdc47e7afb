// The typed client's types are generated from the OpenAPI document: they must never drift apart.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { clientOutputs } from '../../scripts/gen-client';
import { ROOT } from '../helpers/paths';

t.test('the typed client matches the OpenAPI document (run `npm run gen:client` after changing the API)', async (t) => {
  for (const [file, content] of await clientOutputs()) {
    t.equal(fs.readFileSync(path.join(ROOT, file), 'utf8'), content, `${file} is up to date`);
  }
});
