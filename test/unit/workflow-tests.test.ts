import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';
import { WORKFLOWS } from '../../workflows/contracts';

/** Every workflow the worker runs has a unit test in skipped time, named after the file that defines it. */
describe('workflow tests', () => {
  const workflows = WORKFLOWS.map(({ name }) => ({ name, file: name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`) }));

  it('finds the workflows in workflows/contracts.ts', () => {
    expect(workflows.map((w) => w.name)).toContain('webhookDelivery');
  });

  it.each(workflows.map(({ name, file }) => [name, file]))('%s (workflows/%s.ts) has its test file in test/workflows, in skipped time', (name, file) => {
    const testFile = path.join(PROJECT_ROOT, 'test', 'workflows', `${file}.test.ts`);
    expect(existsSync(testFile)).toBe(true);
    const source = readFileSync(testFile, 'utf8');
    expect(source).toContain('createTimeSkippingEnv()');
    expect(source).toContain(`describe('${name} in skipped time'`);
  });
});
