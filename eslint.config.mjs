// Lint runs inside `npm test`. The import rules enforce the one-way data flow:
// events -> ingest -> store -> readmodels -> serve -> deliver -> ops, and export beside serve (after readmodels,
// before cli); cli sits on top.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The stages each stage may not import from. src/index.ts and src/start/ (the service wiring) count as `cli`;
// src/lib and src/start-error.ts are shared leaves any stage may use.
const later = {
  events: ['ingest', 'store', 'readmodels', 'serve', 'deliver', 'ops', 'export', 'cli'],
  store: ['ingest', 'readmodels', 'serve', 'deliver', 'ops', 'export', 'cli'],
  ingest: ['readmodels', 'serve', 'deliver', 'ops', 'export', 'cli'],
  readmodels: ['ingest', 'serve', 'deliver', 'ops', 'export', 'cli'],
  serve: ['deliver', 'ops', 'export', 'cli'],
  // Pushed signals: plans with the read models (the numbers /signals shows) and sends from the outbox;
  // the service wiring (cli) starts it and hands its figures to /metrics.
  deliver: ['ops', 'export', 'cli'],
  ops: ['export', 'cli'],
  // The bulk files a warehouse loads: reads the store and the read models, nothing reads it but cli.
  export: ['ingest', 'serve', 'deliver', 'ops', 'cli'],
};

const srcRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), 'src');

// Inside src/serve, the rooms each room may not import from (each room's index.ts says what it holds).
// The core (request, then bodies, then http) never imports a surface (feed, mcp, docs); the documents
// describe the other surfaces; `top` is the files directly in src/serve (app.ts, index.ts), which wire
// them all and so are imported by none of them.
const SURFACES = ['feed', 'mcp', 'docs'];
const laterRooms = {
  request: ['bodies', 'http', ...SURFACES, 'top'],
  bodies: ['http', ...SURFACES, 'top'],
  http: [...SURFACES, 'top'],
  feed: ['mcp', 'docs', 'top'],
  mcp: ['feed', 'docs', 'top'],
  docs: ['top'],
};

/** The room of a file under src/serve (its folder there), `top` for a file directly in it, or null outside. */
function roomOf(file) {
  const rel = path.relative(path.join(srcRoot, 'serve'), file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  // `../bodies` (a room's index.ts) is that room; app.ts, index.ts or src/serve itself is the wiring.
  return parts.length === 1 && !(parts[0] in laterRooms) ? 'top' : parts[0];
}

/** The stage a file under src/ belongs to (its first folder), or null outside src/ or for a shared leaf. */
function stageOf(file) {
  const rel = path.relative(srcRoot, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const first = rel.split(path.sep)[0];
  if (first === '' || first === 'start' || /^index(\.[cm]?[jt]s)?$/.test(first)) return 'cli';
  return first.replace(/\.[cm]?[jt]s$/, '');
}

// The import is resolved against the importing file, so any depth of `../` (or a path that leaves
// src/ and comes back in) is judged by where it lands, not by how it is spelled.
const flowRule = {
  meta: {
    type: 'problem', schema: [], messages: {
      up: 'src/{{from}} may not import from src/{{to}}: imports point down the data flow.',
      room: 'src/serve/{{from}} may not import from src/serve/{{to}}: the core never imports a surface, and nothing imports the wiring.',
    },
  },
  create(context) {
    const from = stageOf(context.filename);
    const forbidden = later[from];
    if (!forbidden) return {};
    const fromRoom = roomOf(context.filename);
    const check = (node) => {
      if (!node || node.type !== 'Literal' || typeof node.value !== 'string' || !node.value.startsWith('.')) return;
      const target = path.resolve(path.dirname(context.filename), node.value);
      const to = stageOf(target);
      if (to !== null && forbidden.includes(to)) context.report({ node, messageId: 'up', data: { from, to } });
      const toRoom = fromRoom === null ? null : roomOf(target);
      if (toRoom !== null && laterRooms[fromRoom]?.includes(toRoom)) {
        context.report({ node, messageId: 'room', data: { from: fromRoom === 'top' ? '*.ts' : fromRoom, to: toRoom === 'top' ? path.basename(target) : toRoom } });
      }
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

// Only src/store talks to SQLite ("one door to the database": SQL in one place can be reviewed and tuned): elsewhere in src no import
// of the driver, no statement prepared (better-sqlite3's prepare takes one SQL text), no pragma, no
// transaction and no SQL text; the read models reach the store only through readmodels/store.ts
// (src/store/reads: doorRule).
const SQL_TEXT = '/^\\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH|PRAGMA|CREATE|DROP|ALTER|BEGIN|COMMIT|VACUUM|ATTACH)\\s/';
const onlyStoreMessage = 'Only src/store talks to SQLite: add a store function (src/store; the read models\' reads in src/store/reads) or an openDb option.';
const sqliteOnlyInStore = [
  ...['ImportDeclaration', 'ImportExpression', 'ExportAllDeclaration', 'ExportNamedDeclaration'].map((node) => ({
    selector: `${node}[source.value='better-sqlite3']`, message: onlyStoreMessage,
  })),
  { selector: "CallExpression[callee.name='require'][arguments.0.value='better-sqlite3']", message: onlyStoreMessage },
  { selector: "CallExpression[callee.property.name='prepare'][arguments.length=1]", message: onlyStoreMessage },
  { selector: "CallExpression[callee.property.name='pragma']", message: onlyStoreMessage },
  { selector: "CallExpression[callee.property.name='transaction']", message: onlyStoreMessage },
  { selector: `Literal[value=${SQL_TEXT}]`, message: onlyStoreMessage },
  { selector: `TemplateElement[value.raw=${SQL_TEXT}]`, message: onlyStoreMessage },
];
const storeRules = [
  { files: ['src/**/*.ts'], ignores: ['src/store/**'], rules: { 'no-restricted-syntax': ['error', ...sqliteOnlyInStore] } },
];

/** The read models' one door: a relative import from src/readmodels that lands in src/store, other than readmodels/store.ts's. */
const doorRule = {
  meta: { type: 'problem', schema: [], messages: { door: 'src/readmodels reaches the store only through readmodels/store.ts (src/store/reads): export what it needs there.' } },
  create(context) {
    if (stageOf(context.filename) !== 'readmodels' || path.relative(srcRoot, context.filename) === path.join('readmodels', 'store.ts')) return {};
    const check = (node) => {
      if (!node || node.type !== 'Literal' || typeof node.value !== 'string' || !node.value.startsWith('.')) return;
      if (stageOf(path.resolve(path.dirname(context.filename), node.value)) === 'store') context.report({ node, messageId: 'door' });
    };
    return {
      ImportDeclaration: (n) => check(n.source),
      ExportNamedDeclaration: (n) => check(n.source),
      ExportAllDeclaration: (n) => check(n.source),
      ImportExpression: (n) => check(n.source),
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
    plugins: { flow: { rules: { down: flowRule, door: doorRule } } },
    rules: { 'flow/down': 'error', 'flow/door': 'error' },
  },
  ...storeRules,
);
