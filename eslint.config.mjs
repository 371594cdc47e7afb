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
);
