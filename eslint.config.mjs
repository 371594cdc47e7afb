// Lint runs inside `npm test`. The import rules enforce the one-way data flow:
// events -> ingest -> store -> readmodels -> serve -> ops; cli sits on top.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The stages each stage may not import from. src/index.ts (the service wiring) counts as `cli`;
// src/lib and src/errors.ts are shared leaves any stage may use.
const later = {
  events: ['ingest', 'store', 'readmodels', 'serve', 'ops', 'cli'],
  store: ['ingest', 'readmodels', 'serve', 'ops', 'cli'],
  ingest: ['readmodels', 'serve', 'ops', 'cli'],
  readmodels: ['ingest', 'serve', 'ops', 'cli'],
  serve: ['ops', 'cli'],
  ops: ['cli'],
};

const srcRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), 'src');

/** The stage a file under src/ belongs to (its first folder), or null outside src/ or for a shared leaf. */
function stageOf(file) {
  const rel = path.relative(srcRoot, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const first = rel.split(path.sep)[0];
  if (first === '' || /^index(\.[cm]?[jt]s)?$/.test(first)) return 'cli';
  return first.replace(/\.[cm]?[jt]s$/, '');
}

// The import is resolved against the importing file, so any depth of `../` (or a path that leaves
// src/ and comes back in) is judged by where it lands, not by how it is spelled.
const flowRule = {
  meta: { type: 'problem', schema: [], messages: { up: 'src/{{from}} may not import from src/{{to}}: imports point down the data flow.' } },
  create(context) {
    const from = stageOf(context.filename);
    const forbidden = later[from];
    if (!forbidden) return {};
    const check = (node) => {
      if (!node || node.type !== 'Literal' || typeof node.value !== 'string' || !node.value.startsWith('.')) return;
      const to = stageOf(path.resolve(path.dirname(context.filename), node.value));
      if (to !== null && forbidden.includes(to)) context.report({ node, messageId: 'up', data: { from, to } });
    };
    const isRequire = (n) => n.callee.type === 'Identifier' && n.callee.name === 'require';
    return {
      ImportDeclaration: (n) => check(n.source),
      ExportNamedDeclaration: (n) => check(n.source),
      ExportAllDeclaration: (n) => check(n.source),
      ImportExpression: (n) => check(n.source),
      CallExpression: (n) => { if (isRequire(n)) check(n.arguments[0]); },
      TSImportEqualsDeclaration: (n) => { if (n.moduleReference.type === 'TSExternalModuleReference') check(n.moduleReference.expression); },
      TSImportType: (n) => check(n.argument?.type === 'TSLiteralType' ? n.argument.literal : n.argument),
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'kafka/**', '.tap/**', 'coverage/**', 'src/**/*.gen.ts', '.venv-fuzz*/**', 'bench/out/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['bin/**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { flow: { rules: { down: flowRule } } },
    rules: { 'flow/down': 'error' },
  },
);
