// One door to the database (SQL only in src/store, so it can be reviewed and tuned in one place): outside src/store no file imports the SQLite driver, prepares a
// statement, sets a pragma, opens a transaction or holds SQL text, and the read models reach the
// store only through readmodels/store.ts. `npm run lint` enforces it (eslint.config.mjs storeRules, flow/door);
// this checks the rule catches each way in, so that it cannot be dropped or narrowed unnoticed.
import path from 'node:path';
import { ESLint } from 'eslint';
import t from 'tap';
import { ROOT } from '../helpers/paths';

const root = ROOT;
const eslint = new ESLint({ cwd: root });

/** The rule's findings for `code` as if it were the file `file` (relative to the package root). */
async function findings(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax' || m.ruleId === 'flow/door').map((m) => `${m.line}:${m.column}`);
}

const REACHES = `import Database from 'better-sqlite3';
import type { Db } from '../store';
export function reach(db: Db): unknown[] {
  db.pragma('synchronous = OFF');
  db.transaction(() => 1)();
  return [new Database(':memory:'), db.prepare('x').get(), 'SELECT 1', \`
    PRAGMA data_version\`];
}
`;

t.test('outside src/store, each way to SQLite is a lint error', async (t) => {
  for (const file of ['src/serve/scratch.ts', 'src/ingest/scratch.ts', 'src/cli/scratch.ts', 'src/readmodels/scratch.ts', 'src/readmodels/endpoints/scratch.ts']) {
    const code = file.startsWith('src/readmodels/endpoints/') ? REACHES.replace("'../store'", "'../../store/db'") : REACHES;
    // The import of the store on line 2 is refused in the read models (the door: readmodels/store.ts), at its path.
    const door = file.startsWith('src/readmodels/') ? ['2:25'] : [];
    t.same(await findings(file, code), ['1:1', ...door, '4:3', '5:3', '6:37', '6:60', '6:72'], file);
  }
});

t.test('src/store itself may', async (t) => {
  t.same(await findings('src/store/scratch.ts', REACHES.replace("'../store'", "'./db'")), []);
});

t.test('the read models import the store through readmodels/store.ts only', async (t) => {
  t.same(await findings('src/readmodels/scratch.ts', "export { ReadStore } from './store';\n"), [], 'beside them: allowed');
  t.same(await findings('src/readmodels/endpoints/scratch.ts', "export { ReadStore } from '../store';\n"), [], 'from an endpoint: allowed');
  t.same(await findings('src/readmodels/scratch.ts', "export { zeroSums } from '../store/metrics';\n"), ['1:26'], 'a store module: refused');
  t.same(await findings('src/readmodels/endpoints/scratch.ts', "import { KEY_OF } from '../../store';\nexport const k = KEY_OF;\n"), ['1:24'], 'the store index: refused');
  t.same(await findings('src/readmodels/endpoints/scratch.ts', "import { KEY_OF } from '../../serve/../store/keys';\nexport const k = KEY_OF;\n"), ['1:24'], 'however the path is spelled');
  t.same(await findings('src/readmodels/store.ts', "export * from '../store/reads';\n"), [], 'the door itself');
});
