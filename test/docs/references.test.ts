// The docs as references that stay true: every bench script in package.json has its section in
// docs/benchmarks.md, every file of the repository the docs name exists, and every helper the
// read-model guide names is defined in src/. A rename that forgets the docs fails here.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/paths';

const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

t.test('every npm run bench* script has a section in docs/benchmarks.md', async (t) => {
  const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
  const headings = read('docs/benchmarks.md').split('\n').filter((l) => l.startsWith('## '));
  const benches = scripts.filter((s) => s === 'bench' || s.startsWith('bench:'));
  t.ok(benches.length >= 8, 'package.json has the bench scripts');
  for (const s of benches) t.ok(headings.some((h) => h.includes(`\`npm run ${s}\``)), `a "## \`npm run ${s}\`" section`);
});

// A repository path: a top-level folder of the repo, then path characters; not inside a longer path
// (clients/typescript/src/... names its own src), not generated output, not a pattern or placeholder.
const PATH = /(?<![\w./-])((?:src|bench|test|scripts|schemas|web|bin|deploy|fixtures|docs|clients)\/[\w./-]*\w)/g;
const GENERATED = /^(bench\/out|dist)(\/|$)/;

t.test('every file path the docs name exists', async (t) => {
  for (const doc of DOCS) {
    const missing = [...new Set([...read(doc).matchAll(PATH)].map((m) => m[1]))]
      .filter((p) => !GENERATED.test(p) && !fs.existsSync(path.join(ROOT, p)));
    t.same(missing, [], `${doc} names only files that exist`);
  }
});

t.test('every helper docs/readmodels-guide.md names is defined in src/', async (t) => {
  const src: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) src.push(fs.readFileSync(p, 'utf8'));
    }
  };
  walk(path.join(ROOT, 'src'));
  const all = src.join('\n');
  // `name`, `name(...)` or `store.name`: identifiers in camelCase or PascalCase with an inner capital.
  const names = new Set([...read('docs/readmodels-guide.md').matchAll(/`(?:store\.)?([A-Za-z][a-z]+[A-Z]\w*)(?:\([^`]*\))?`/g)].map((m) => m[1]));
  t.ok(names.size >= 10, 'the guide names helpers');
  for (const n of names) t.match(all, new RegExp(`(?:function|const|class|interface|type|let)\\s+${n}\\b|\\b${n}\\s*[(<:?]`), `${n} is defined in src/`);
});
