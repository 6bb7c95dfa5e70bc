// Lint for the whole repository; `npm test` runs it (`npm run lint`).
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Workflow code is replayed and must be deterministic: it may only import these at run time. */
const WORKFLOW_RUNTIME_IMPORTS = ['@temporalio/workflow', '@temporalio/common', './*', '../src/temporal/search-attributes'];

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/', 'src/generated/', '.data/', '.venv-fuzz/'] },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: globals.node,
    },
    rules: {
      // A promise nobody awaits fails silently: await it, return it, or mark it `void` on purpose.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(?!(${WORKFLOW_RUNTIME_IMPORTS.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, (c) => (c === '*' ? '.*' : `\\${c}`))).join('|')})$)`,
              allowTypeImports: true,
              message:
                'Workflows are replayed and must be deterministic: import only @temporalio/workflow, @temporalio/common and other workflow files at run time (types are fine). Side effects belong in activities/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      // Response bodies in tests are read as any on purpose; the assertions check their shape.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Plain CommonJS (the subscriber example in docs/, jest.config.js) and this file.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The console's script runs in the browser, as a classic script.
    files: ['src/console/assets/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'script' },
  },
);
