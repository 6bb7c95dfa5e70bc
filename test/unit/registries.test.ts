import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RESOURCES } from '../../src/api/resources';
import { REST_COLLECTIONS } from '../../src/domain/accounts/scopes';
import { TASK_QUEUE_ROLES } from '../../src/task-queues';
import { WORKFLOWS } from '../../workflows/contracts';
import { PROJECT_ROOT } from '../../src/paths';

const read = (...parts: string[]) => readFileSync(path.join(PROJECT_ROOT, ...parts), 'utf8');
const camelCase = (kebab: string) => kebab.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
const kebabCase = (camel: string) => camel.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Every .ts file under `dir` (relative to the project root), as a path relative to it. */
function sources(dir: string): string[] {
  return readdirSync(path.join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f));
}

describe('the workflow registry', () => {
  // The bundles: every workflow (index.ts), and each task queue's own (operations.ts, deliveries.ts).
  const NOT_WORKFLOWS = ['index.ts', ...TASK_QUEUE_ROLES.map((role) => `${role}.ts`), 'contracts.ts', 'messages.ts', 'search-attributes.ts'];
  const workflowFiles = readdirSync(path.join(PROJECT_ROOT, 'workflows')).filter((f) => f.endsWith('.ts') && !NOT_WORKFLOWS.includes(f) && !f.endsWith('.contract.ts'));

  it('lists every workflow of workflows/ once, by its contract (workflows/contracts.ts)', () => {
    expect(WORKFLOWS.map((w) => `${kebabCase(w.name)}.ts`).sort()).toEqual([...workflowFiles].sort());
    expect(new Set(WORKFLOWS.map((w) => w.name)).size).toBe(WORKFLOWS.length);
  });

  it.each(workflowFiles)('%s has a contract beside it declaring its name', async (file) => {
    const base = file.replace(/\.ts$/, '');
    const contract = (await import(path.join(PROJECT_ROOT, 'workflows', `${base}.contract`))) as Record<string, unknown>;
    expect(Object.values(contract)).toContainEqual(expect.objectContaining({ name: camelCase(base) }));
  });

  it.each(WORKFLOWS.map((w) => [w.name, w]))("%s runs on a task queue of the service, and that queue's bundle (workflows/<queue>.ts) registers it under its name", (name, workflow) => {
    expect(TASK_QUEUE_ROLES).toContain(workflow.taskQueue);
    const line = `export { ${name} } from './${kebabCase(name)}';`;
    for (const role of TASK_QUEUE_ROLES) expect({ role, registers: read('workflows', `${role}.ts`).includes(line) }).toEqual({ role, registers: role === workflow.taskQueue });
  });

  it('bundles every task queue\'s workflows together in workflows/index.ts', () => {
    expect(read('workflows', 'index.ts')).toContain(TASK_QUEUE_ROLES.map((role) => `export * from './${role}';`).join('\n'));
  });

  it('has every activities file registered with the worker (activities/index.ts)', () => {
    const activityFiles = readdirSync(path.join(PROJECT_ROOT, 'activities')).filter((f) => f.endsWith('.ts') && !['index.ts', 'deps.ts'].includes(f));
    const index = read('activities', 'index.ts');
    for (const file of activityFiles) {
      const factory = /export function (create\w+Activities)\(/.exec(read('activities', file))?.[1];
      expect({ file, factory }).toEqual({ file, factory: expect.stringMatching(/^create/) });
      expect(index).toContain(factory);
    }
  });

  it('is the only way src/ names a workflow: no workflow type is written as a string', () => {
    const byName = sources('src').flatMap((file) => [...read(file).matchAll(/workflowType: '(\w+)'/g)].map((m) => ({ file, name: m[1]! })));
    expect(byName).toEqual([]);
  });
});

describe('the REST resource registry', () => {
  it('has one definition per collection the API key scopes name', () => {
    expect(RESOURCES.map((r) => r.collection).sort()).toEqual([...REST_COLLECTIONS].sort());
  });
});
