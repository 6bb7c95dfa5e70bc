// Lint for the whole repository; `npm test` runs it (`npm run lint`).
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Workflow code is replayed and must be deterministic: it may only import these at run time. */
const WORKFLOW_RUNTIME_IMPORTS = ['@temporalio/workflow', '@temporalio/common', './*', '../src/domain/workflow-contract'];

/**
 * The direction dependencies take (docs/architecture.md): entry points → src/temporal (the adapters) → delivery →
 * domain → events → db; the domain owns WorkflowGateway and delivery owns DeliveryWorkflows, which src/temporal
 * implements; src/temporal → workflow contracts; workflows → activities (types) → domain. Each folder's block lists
 * what it may not import; `npm test` also fails on any import cycle (madge).
 */
const ONLY_CONTRACTS = {
  regex: String.raw`(^|/)workflows(/index)?$|(^|/)workflows/(?![^/]+\.contract$|contracts$|search-attributes$|messages$)`,
  message: 'Outside workflows/, import a workflow only through its workflows/<name>.contract.ts (or the list of them, the search attributes its runs are found by, or the Temporal definitions of its messages).',
};
const NO_TEMPORAL_ADAPTERS = {
  regex: String.raw`(^|/)temporal/`,
  message: 'src/temporal implements the interfaces the domain and delivery own; they never import it (the entry points pass it in).',
};
const NO_ENTRY_POINTS = {
  regex: String.raw`(^|/)(api|console|cli|worker)/`,
  message: 'The entry points (api, console, cli, worker) use this folder, not the other way round.',
};
/** Routes and pages reach Temporal through services; the API's server asks the client only for health (connection.ts). */
const NO_TEMPORAL_ADAPTERS_BUT_CONNECTION = {
  regex: String.raw`(^|/)temporal/(?!connection$|failures$)`,
  message: 'Routes and pages call domain and delivery services, which start workflows; of src/temporal they use only the client connection.',
};
const NO_ACTIVITIES = { regex: String.raw`(^|/)activities(/|$)`, message: 'Activities are registered by the worker; call the domain service they call.' };

/** What workflow files (code and contracts) may import. */
const WORKFLOW_PATTERNS = [
  {
    // Not src/temporal: a pattern that allows type imports would let its types through the one below.
    regex: `^(?!(${WORKFLOW_RUNTIME_IMPORTS.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, (c) => (c === '*' ? '.*' : `\\${c}`))).join('|')})$)(?!.*(^|/)temporal/)`,
    allowTypeImports: true,
    message:
      'Workflows are replayed and must be deterministic: import only @temporalio/workflow, @temporalio/common, other workflow files and the contract descriptors (src/domain/workflow-contract.ts) at run time (types are fine). Side effects belong in activities/.',
  },
  { ...NO_TEMPORAL_ADAPTERS, message: 'Workflows and their contracts stand below src/temporal, which starts them: they never import it.' },
];

/** A block of no-restricted-imports for `files`: the contracts rule everywhere outside workflows/, plus `patterns`. */
const restrictImports = (files, patterns = [], ignores = []) => ({
  files,
  ignores,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [ONLY_CONTRACTS, ...patterns] }] },
});

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/', 'src/generated/', '.data/', '.venv-fuzz/', '.venv-python-sdk*/', 'sdk/typescript/dist/', 'sdk/typescript/src/generated/'] },
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
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: WORKFLOW_PATTERNS }] },
  },
  // Contracts are Temporal-free: the domain imports them. Temporal's definitions of their messages are made in workflows/messages.ts.
  {
    files: ['workflows/*.contract.ts', 'workflows/contracts.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [...WORKFLOW_PATTERNS, { regex: '^@temporalio/|(^|/)(messages|search-attributes)$', message: 'A contract is Temporal-free, for the domain imports it: declare its messages with signal() and update() (src/domain/workflow-contract.ts).' }] },
      ],
    },
  },
  // Everything outside workflows/: other workflow files only through their contract.
  restrictImports(['src/**/*.ts', 'activities/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts']),
  // Tests of a workflow may name its function's type (to start it typed); their run-time imports are contracts too.
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ ...ONLY_CONTRACTS, allowTypeImports: true }] }] },
  },
  // The domain: no Temporal, no src/temporal, no workflow code but the Temporal-free contracts, no delivery, no entry points.
  restrictImports(
    ['src/domain/**/*.ts'],
    [
      { regex: '^@temporalio/', message: 'The domain talks to workflows through WorkflowGateway (src/domain/workflow-gateway.ts), not Temporal.' },
      { regex: String.raw`(^|/)workflows(/index|/contracts)?$|(^|/)workflows/(?![^/]+\.contract$)`, message: 'The domain knows a workflow by its contract (Temporal-free), never by its code.' },
      NO_TEMPORAL_ADAPTERS,
      { regex: String.raw`(^|/)delivery/`, message: 'Delivery reads the outbox the domain writes; the domain does not call delivery.' },
      NO_ACTIVITIES,
      NO_ENTRY_POINTS,
    ],
  ),
  // Delivery: shapes, signs and sends what the outbox holds; it builds no event data, serves no requests, and reaches
  // Temporal only through DeliveryWorkflows.
  restrictImports(
    ['src/delivery/**/*.ts'],
    [
      { regex: String.raw`(^|/)domain/.+-events$`, message: 'Delivery sends the payload the domain recorded; it does not build event data.' },
      { regex: '^@temporalio/', message: 'Delivery reaches Temporal only through DeliveryWorkflows (src/delivery/delivery-workflows.ts).' },
      NO_TEMPORAL_ADAPTERS,
      NO_ACTIVITIES,
      NO_ENTRY_POINTS,
    ],
  ),
  // The API: validates and calls domain and delivery services; workflows and activities run behind them (a route may
  // read a contract's vocabulary, such as the delivery statuses, never workflow code).
  restrictImports(['src/api/**/*.ts', 'src/console/**/*.ts'], [NO_ACTIVITIES]),
  restrictImports(['src/api/{routes,resources,middleware}/**/*.ts', 'src/console/{routes,views}/**/*.ts'], [NO_ACTIVITIES, NO_TEMPORAL_ADAPTERS_BUT_CONNECTION]),
  // The database layer stays below what it stores: src/database.ts (beside the entry points) maps the entities.
  restrictImports(
    ['src/db/**/*.ts'],
    [
      {
        regex: String.raw`(^|/)(domain|delivery|events|console|temporal|api|worker|cli)/|(^|/)database$`,
        message: 'src/db is below the folders whose rows it stores: their entities are listed in src/database.ts.',
      },
    ],
  ),
  // Activities: side effects through domain and delivery services; never the entry points.
  restrictImports(['activities/**/*.ts'], [NO_ENTRY_POINTS]),
  {
    files: ['test/**/*.ts'],
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      // Response bodies in tests are read as any on purpose; the assertions check their shape.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Plain JavaScript: jest.config.js (CommonJS), the subscriber example in docs/ and this file (ES modules).
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
