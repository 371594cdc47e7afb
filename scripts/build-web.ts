// `npm run build`'s web step: writes dist/web/, which src/serve/docs/pages.ts serves.
// - The dashboard (web/dashboard.ts, its client and Chart.js) bundled by esbuild into one script.
//   web/tsconfig.json type-checks it first (in package.json's build script), against the client
//   generated from the OpenAPI document.
// - The API reference: Scalar's standalone bundle, copied from its npm package (it is a dev
//   dependency: the production install keeps only this copy), without its source-map comment.
// - The pages' HTML, CSS and the reference's settings, copied as they are.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'dist', 'web');

async function main(): Promise<void> {
  fs.mkdirSync(out, { recursive: true });
  await build({
    entryPoints: [path.join(root, 'web', 'dashboard.ts')],
    outfile: path.join(out, 'dashboard.js'),
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2022'],
    platform: 'browser',
    legalComments: 'none',
    logLevel: 'warning',
  });
  // The package's exports do not name its browser bundle: it is read from where npm installs it.
  const scalar = path.join(root, 'node_modules', '@scalar', 'api-reference', 'dist', 'browser', 'standalone.js');
  const bundle = fs.readFileSync(scalar, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  fs.writeFileSync(path.join(out, 'scalar.js'), bundle);
  for (const f of ['index.html', 'dashboard.css', 'docs.html', 'docs.js']) fs.copyFileSync(path.join(root, 'web', f), path.join(out, f));
  console.log(`web: wrote ${fs.readdirSync(out).sort().join(', ')} to dist/web/`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
