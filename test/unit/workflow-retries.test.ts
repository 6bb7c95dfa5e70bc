import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

/** Every activity a workflow calls retries a bounded number of times, so no run can retry forever. */
describe('activity retry policies', () => {
  const dir = path.join(PROJECT_ROOT, 'workflows');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));

  it.each(files)('%s bounds the attempts of every proxyActivities call', (file) => {
    const source = readFileSync(path.join(dir, file), 'utf8');
    const calls = source.split(/proxyActivities(?:<[^>]*>)?\(/).slice(1);
    for (const call of calls) {
      const options = call.slice(0, call.indexOf('});'));
      expect(options).toMatch(/maximumAttempts:\s*\d+/);
    }
  });

  it('finds the workflows that call activities', () => {
    const withActivities = files.filter((f) => readFileSync(path.join(dir, f), 'utf8').includes('proxyActivities'));
    expect(withActivities.sort()).toEqual([
      'delivery-recovery.ts',
      'payroll-run.ts',
      'project-closing.ts',
      'project-creation.ts',
      'purchase-order-approval.ts',
      'report-approval.ts',
      'retention.ts',
      'scheduled-report.ts',
      'webhook-delivery.ts',
    ]);
  });
});
