// The Python client's generated package must match the OpenAPI document: it is regenerated (pinned
// openapi-python-client in the venv of scripts/python-env.sh) into a temporary folder and compared
// with the committed files, every file both ways. The venv is made on first use; if it cannot be,
// the test fails with the reason (it is never skipped).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { filesUnder, PYTHON_PACKAGE, pythonClientOutputs } from '../../scripts/gen-python-client';
import { ROOT } from '../helpers/paths';

t.test('the Python client matches the OpenAPI document (run `npm run gen:client` after changing the API)', async (t) => {
  const generated = pythonClientOutputs();
  const committed = filesUnder(path.join(ROOT, PYTHON_PACKAGE)).map((f) => `${PYTHON_PACKAGE}/${f}`);
  t.ok(generated.some(([f]) => f.endsWith('/py.typed')), 'the package is marked typed (py.typed)');
  t.same(committed, generated.map(([f]) => f), 'the same files (none missing, none left over)');
  for (const [file, content] of generated) {
    const onDisk = path.join(ROOT, file);
    if (fs.existsSync(onDisk)) t.equal(fs.readFileSync(onDisk, 'utf8'), content, `${file} is up to date`);
  }
});
