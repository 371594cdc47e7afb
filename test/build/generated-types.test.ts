// The TypeScript types are generated from the JSON Schemas: they must never drift apart.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { OUTPUTS } from '../../scripts/gen-types';
import { ROOT } from '../helpers/paths';

t.test('generated types match the schemas (run `npm run gen` after changing a schema)', async (t) => {
  for (const [file, generate] of OUTPUTS) {
    const committed = fs.readFileSync(path.join(ROOT, file), 'utf8');
    t.equal(committed, await generate(), `${file} is up to date`);
  }
});
