// The lint rule that keeps imports pointing down the flow (eslint.config.mjs, flow/down), run by the
// real ESLint on text placed at real paths in src/: an import is judged by the stage it lands in,
// however many `../` it takes to get there, and imports down the flow stay allowed.
import t from 'tap';
import path from 'node:path';
import { ESLint } from 'eslint';
import { ROOT } from '../helpers/paths';

const eslint = new ESLint({ cwd: ROOT });

async function flowErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === 'flow/down').map((m) => m.message);
}

t.test('imports that climb into a later stage fail, whatever their spelling', async (t) => {
  const up: [string, string][] = [
    ['src/store/x.ts', "import { a } from '../serve';"],
    ['src/store/x.ts', "import { a } from '../serve/cache';"],
    ['src/readmodels/endpoints/x.ts', "import { a } from '../../serve';"],
    ['src/readmodels/endpoints/x.ts', "import { a } from '../../serve/cache';"],
    ['src/readmodels/endpoints/x.ts', "import type { A } from '../../ingest/preparer';"],
    ['src/ingest/kafka/x.ts', "export { a } from '../../readmodels/endpoints/timeseries';"],
    ['src/events/x.ts', "import { a } from '../../src/store';"],
    ['src/serve/x.ts', "import { a } from '../index';"],
    ['src/serve/x.ts', "import { a } from '..';"],
    ['src/ops/x.ts', "import { a } from '../cli/main';"],
    ['src/serve/x.ts', "import { a } from '../start/service-parts';"],
    ['src/store/x.ts', "const m = import('../readmodels');"],
    ['src/store/x.ts', "type T = import('../readmodels').ReadStore;"],
  ];
  for (const [file, code] of up) t.equal((await flowErrors(file, code)).length, 1, `${file}: ${code}`);
});

t.test('imports down the flow, within a stage and into shared leaves pass', async (t) => {
  const down: [string, string][] = [
    ['src/readmodels/endpoints/x.ts', "import { a } from '../../store/contributions';"],
    ['src/readmodels/endpoints/x.ts', "import { a } from '../endpoint';"],
    ['src/serve/x.ts', "import { a } from '../readmodels';"],
    ['src/ingest/kafka/x.ts', "import { a } from '../../lib/log';"],
    ['src/cli/x.ts', "import { a } from '../index';"],
    ['src/index.ts', "import { a } from './serve';"],
    ['src/start/x.ts', "import { a } from '../serve';"],
  ];
  for (const [file, code] of down) t.same(await flowErrors(file, code), [], `${file}: ${code}`);
});

t.test('inside src/serve the core never imports a surface, and no room imports the wiring', async (t) => {
  const up: [string, string][] = [
    ['src/serve/http/x.ts', "import { a } from '../mcp/mcp';"],
    ['src/serve/http/x.ts', "import { a } from '../feed';"],
    ['src/serve/bodies/x.ts', "import { a } from '../docs/openapi';"],
    ['src/serve/bodies/x.ts', "import { a } from '../http/responder';"],
    ['src/serve/request/x.ts', "import { a } from '../bodies/cache';"],
    ['src/serve/request/x.ts', "import { a } from '../../serve/http';"],
    ['src/serve/mcp/x.ts', "import { a } from '../feed/change-feed';"],
    ['src/serve/docs/x.ts', "import { a } from '../app';"],
    ['src/serve/feed/x.ts', "import { a } from '..';"],
    ['src/serve/http/x.ts', "const m = import('../docs/pages');"],
  ];
  for (const [file, code] of up) t.equal((await flowErrors(file, code)).length, 1, `${file}: ${code}`);
  const down: [string, string][] = [
    ['src/serve/bodies/x.ts', "import { a } from '../request/errors';"],
    ['src/serve/http/x.ts', "import { a } from '../bodies/cache';"],
    ['src/serve/mcp/x.ts', "import { a } from '../http/responder';"],
    ['src/serve/docs/x.ts', "import { a } from '../mcp/mcp';"],
    ['src/serve/app.ts', "import { a } from './docs/pages';"],
    ['src/serve/http/x.ts', "import { a } from './responder';"],
    ['src/cli/x.ts', "import { a } from '../serve/http/access';"],
  ];
  for (const [file, code] of down) t.same(await flowErrors(file, code), [], `${file}: ${code}`);
});
