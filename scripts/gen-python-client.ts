// The Python client's generated package, clients/python/visibility_api_client/, made by
// openapi-python-client (pinned, in the venv of scripts/python-env.sh) from the OpenAPI document
// exactly as GET /v1/public/openapi.json serves it. scripts/gen-client.ts writes it with the
// TypeScript client's types (`npm run gen:client`); test/build/generated-python-client.test.ts fails
// when the committed files are stale. The hand-written layer (clients/python/visibility_api/) is
// beside the package, where a regeneration never writes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENDPOINTS } from '../src/readmodels';
import { BASE_PATH } from '../src/serve/app';
import { BodySchemas } from '../src/serve/bodies/bodies';
import { buildOpenApi } from '../src/serve/docs/openapi';

const root = path.resolve(__dirname, '..');
/** The package the generator owns: every file under it is its output (and py.typed). */
export const PYTHON_PACKAGE = 'clients/python/visibility_api_client';

/** The files of a folder, relative to it, sorted; __pycache__ (left by running the code) is not output. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== '__pycache__') walk(r);
      } else out.push(r);
    }
  };
  if (fs.existsSync(dir)) walk('');
  return out.sort();
}

/**
 * Generates the package into a temporary folder: [file under the repository, its content], sorted.
 * Throws with the generator's output when it fails or warns (a warning means a part of the document
 * it could not express: an endpoint or a model would be missing).
 */
export function pythonClientOutputs(): Array<[string, string]> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-python-client-'));
  try {
    const document = buildOpenApi(ENDPOINTS, new BodySchemas().schemas, BASE_PATH);
    fs.writeFileSync(path.join(tmp, 'openapi.json'), JSON.stringify(document));
    const out = path.join(tmp, 'visibility_api_client');
    const r = spawnSync('bash', [path.join(root, 'scripts', 'python-env.sh'), 'openapi-python-client', 'generate',
      '--path', 'openapi.json', '--meta', 'none', '--output-path', out,
      '--config', path.join(root, 'clients', 'python', 'generator.yaml'), '--fail-on-warning'],
    { cwd: tmp, encoding: 'utf8', timeout: 600_000 });
    if (r.status !== 0 || /warning/i.test(r.stdout + r.stderr)) {
      throw new Error(`openapi-python-client failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}`);
    }
    // --meta none writes no py.typed: the package's annotations are its interface (PEP 561).
    fs.writeFileSync(path.join(out, 'py.typed'), '');
    return filesUnder(out).map((f) => [`${PYTHON_PACKAGE}/${f}`, fs.readFileSync(path.join(out, f), 'utf8')]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Replaces the committed package by a fresh generation (files the generator no longer makes go). */
export function writePythonClient(): void {
  const outputs = pythonClientOutputs();
  fs.rmSync(path.join(root, PYTHON_PACKAGE), { recursive: true, force: true });
  for (const [file, content] of outputs) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), content);
  }
  console.log(`wrote ${PYTHON_PACKAGE}/ (${outputs.length} files)`);
}

if (require.main === module) writePythonClient();
