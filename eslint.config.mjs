// Lint runs inside `npm test`. The import rules enforce the one-way data flow:
// events -> ingest -> store -> readmodels -> serve -> ops; cli sits on top.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const later = {
  events: ['ingest', 'store', 'readmodels', 'serve', 'ops', 'cli'],
  store: ['ingest', 'readmodels', 'serve', 'ops', 'cli'],
  ingest: ['readmodels', 'serve', 'ops', 'cli'],
  readmodels: ['ingest', 'serve', 'ops', 'cli'],
  serve: ['ops', 'cli'],
  ops: ['cli'],
};

const flowRules = Object.entries(later).map(([stage, forbidden]) => ({
  files: [`src/${stage}/**/*.ts`],
  rules: {
    'no-restricted-imports': ['error', {
      patterns: forbidden.map((f) => ({
        group: [`../${f}/*`, `../${f}`, `../../${f}/*`],
        message: `src/${stage} may not import from src/${f}: imports point down the data flow.`,
      })),
    }],
  },
}));

// Only src/store talks to SQLite (issue 40, "one door to the database"): elsewhere in src no import
// of the driver, no statement prepared (better-sqlite3's prepare takes one SQL text), no pragma, no
// transaction and no SQL text; the read models reach the store only through readmodels/store.ts
// (src/store/reads). One no-restricted-syntax list per group of files: a later block would replace an
// earlier one's list, not add to it.
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
/** An import of src/store, from a file `depth` folders below src, other than through readmodels/store.ts. */
const storeAround = (depth) => ({
  selector: `:matches(ImportDeclaration, ExportAllDeclaration, ExportNamedDeclaration)[source.value=/^${'\\.\\.\\x2F'.repeat(depth)}store(\\x2F|$)/]`,
  message: 'src/readmodels reaches the store only through readmodels/store.ts (src/store/reads): export what it needs there.',
});
const storeRules = [
  { files: ['src/**/*.ts'], ignores: ['src/store/**', 'src/readmodels/**'], rules: { 'no-restricted-syntax': ['error', ...sqliteOnlyInStore] } },
  { files: ['src/readmodels/store.ts'], rules: { 'no-restricted-syntax': ['error', ...sqliteOnlyInStore] } },
  { files: ['src/readmodels/*.ts'], ignores: ['src/readmodels/store.ts'], rules: { 'no-restricted-syntax': ['error', ...sqliteOnlyInStore, storeAround(1)] } },
  { files: ['src/readmodels/*/*.ts'], rules: { 'no-restricted-syntax': ['error', ...sqliteOnlyInStore, storeAround(2)] } },
  { files: ['src/readmodels/*/*/**/*.ts'], rules: { 'no-restricted-syntax': ['error', ...sqliteOnlyInStore, storeAround(3), storeAround(4)] } },
];

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
  ...flowRules,
  ...storeRules,
);
