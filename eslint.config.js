// Lint: typescript-eslint's recommended rules; type checking itself is `npm run typecheck`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'src/client/schema.ts', 'bench/peer/', '.hangar/', 'test-artifacts/', 'scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-empty-object-type': 'off',
    },
  },
  {
    // Layers (DESIGN.md): the domain and everything below the edge never import the HTTP edge
    // (`http`, `api`) nor the composition root (`server.ts`). A relative path that climbs to one of
    // them is refused; tests next to the code are held to the same rule.
    files: ['src/{core,runtime,tracing,deploy,repo,sandbox,net}/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          regex: '^(\\.\\./)+(http|api)(/|$)',
          message: 'Layers: core, runtime, tracing, deploy, repo, sandbox and net never import http or api; move what both need below them.',
        }, {
          regex: '^(\\.\\./)+server(\\.js)?$',
          message: 'Layers: only the composition root imports server.ts; shared contracts live below every layer (e.g. src/background.ts).',
        }],
      }],
    },
  },
  {
    // The database layer knows tables and migrations, never the domain that uses them.
    files: ['src/db/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          regex: '^(\\.\\./)+(core|http|api|runtime|tracing|deploy|server(\\.js)?)(/|$)',
          message: 'Layers: db never imports core (or anything above it); the storage shape lives in db and core builds on it.',
        }],
      }],
    },
  },
  {
    // Tests read untyped JSON bodies of the API under test; `any` there is a deliberate shortcut.
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['bin/**/*.js', 'templates/**/*.{js,mjs}'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
  },
);
