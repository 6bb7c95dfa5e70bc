/** @type {import('jest').Config} */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: 'node',
  // The client SDK is tested as built (sdk/typescript/dist, ES modules), turned into CommonJS like the tests.
  transform: { '^.+\\.ts$': swc, '/sdk/typescript/dist/.+\\.js$': swc },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // Real PostgreSQL and a real Temporal dev server, started once for the whole run.
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  testTimeout: 60_000,
  testSequencer: '<rootDir>/test/helpers/longest-first-sequencer.js',
  maxWorkers: 2,
};
