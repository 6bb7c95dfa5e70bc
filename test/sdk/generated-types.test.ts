import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

describe("the client SDK's types generated from the OpenAPI document", () => {
  it('are current: `npm run generate` would change nothing', () => {
    // In a process of its own: openapi-typescript is an ES module, which Jest's sandbox does not load.
    const run = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), 'scripts/generate-sdk-types.ts', '--check'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    });
    expect(run.stderr.trim()).toBe('');
    expect(run.status).toBe(0);
  }, 120_000);
});
