import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RESOURCES } from '../../src/api/resources';
import { REST_COLLECTIONS } from '../../src/domain/accounts/scopes';
import { TASK_QUEUE_ROLES } from '../../src/task-queues';
import { WORKFLOW_TASK_QUEUES } from '../../src/temporal/workflow-task-queues';
import { PROJECT_ROOT } from '../../src/paths';

const read = (...parts: string[]) => readFileSync(path.join(PROJECT_ROOT, ...parts), 'utf8');
const camelCase = (kebab: string) => kebab.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/** Every .ts file under `dir` (relative to the project root), as a path relative to it. */
function sources(dir: string): string[] {
  return readdirSync(path.join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f));
}

describe('the workflow registry', () => {
  const workflowFiles = readdirSync(path.join(PROJECT_ROOT, 'workflows')).filter((f) => f.endsWith('.ts') && f !== 'index.ts' && !f.endsWith('.contract.ts'));
  const registry = read('workflows', 'index.ts');

  it.each(workflowFiles)('%s has a contract naming it, and workflows/index.ts registers it under that name', async (file) => {
    const base = file.replace(/\.ts$/, '');
    const contract = (await import(path.join(PROJECT_ROOT, 'workflows', `${base}.contract`))) as Record<string, unknown>;
    const name = camelCase(base);
    expect(Object.values(contract)).toContain(name);
    expect(registry).toContain(`export { ${name} } from './${base}';`);
  });

  it.each(workflowFiles)('%s runs on the task queue its contract names, as src/temporal/workflow-task-queues.ts maps it', async (file) => {
    const base = file.replace(/\.ts$/, '');
    const contract = (await import(path.join(PROJECT_ROOT, 'workflows', `${base}.contract`))) as Record<string, unknown>;
    const role = contract[`${base.toUpperCase().replace(/-/g, '_')}_TASK_QUEUE`];
    expect(TASK_QUEUE_ROLES).toContain(role);
    expect(WORKFLOW_TASK_QUEUES[camelCase(base)]).toBe(role);
  });

  it('is the whole workflows/ folder: one workflow and one contract per name', () => {
    const contracts = readdirSync(path.join(PROJECT_ROOT, 'workflows')).filter((f) => f.endsWith('.contract.ts'));
    expect(contracts.map((f) => f.replace('.contract.ts', '.ts')).sort()).toEqual([...workflowFiles].sort());
    expect(registry.match(/^export \{/gm)).toHaveLength(workflowFiles.length);
  });

  it('has every activities file registered with the worker (activities/index.ts)', () => {
    const activityFiles = readdirSync(path.join(PROJECT_ROOT, 'activities')).filter((f) => f.endsWith('.ts') && !['index.ts', 'deps.ts'].includes(f));
    const index = read('activities', 'index.ts');
    for (const file of activityFiles) {
      const factory = /export function (create\w+Activities)\(/.exec(read('activities', file))?.[1];
      expect({ file, factory }).toEqual({ file, factory: expect.stringMatching(/^create/) });
      expect(index).toContain(`...${factory}(deps),`);
    }
  });

  it('knows every workflow type src/ starts by name', () => {
    const names = new Set(workflowFiles.map((f) => camelCase(f.replace(/\.ts$/, ''))));
    const started = sources('src').flatMap((file) => [...read(file).matchAll(/workflowType: '(\w+)'/g)].map((m) => ({ file, name: m[1]! })));
    expect(started.length).toBeGreaterThan(0);
    expect(started.filter(({ name }) => !names.has(name))).toEqual([]);
  });
});

describe('the REST resource registry', () => {
  it('has one definition per collection the API key scopes name', () => {
    expect(RESOURCES.map((r) => r.collection).sort()).toEqual([...REST_COLLECTIONS].sort());
  });
});
