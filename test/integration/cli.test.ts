import { cliField, runCli } from '../helpers/cli';
import { request, startStack, type TestStack } from '../helpers/stack';


let stack: TestStack;

describe('operator CLI', () => {

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  it('creates a company and a key that works, lists it without the secret, and revokes it', async () => {
    const company = await runCli(stack, 'company', 'create', 'CLI', 'Builders');
    expect(company.code).toBe(0);
    const companyId = cliField(company.stdout, 'id')!;
    expect(companyId).toMatch(/^[0-9a-f-]{36}$/);

    const created = await runCli(stack, 'key', 'create', '--company', companyId, '--name', 'ERP sync', '--scopes', 'projects:read,webhooks:inbound');
    expect(created.code).toBe(0);
    const key = cliField(created.stdout, 'key')!;
    const prefix = cliField(created.stdout, 'prefix')!;
    expect(key.startsWith(`${prefix}_`)).toBe(true);
    expect(cliField(created.stdout, 'secret')).toMatch(/^whsec_/);

    expect((await request(stack.baseUrl, 'GET', '/api/v1/projects', { key })).status).toBe(200);
    const [stored] = await stack.em().execute<{ key_hash: string; signing_secret_sealed: string }[]>('select key_hash, signing_secret_sealed from api_keys where prefix = ?', [prefix]);
    expect(JSON.stringify(stored)).not.toContain(key.slice(prefix.length + 1));
    expect(JSON.stringify(stored)).not.toContain(cliField(created.stdout, 'secret')!);

    const listed = await runCli(stack, 'key', 'list', '--company', companyId);
    expect(listed.stdout).toContain(prefix);
    expect(listed.stdout).toContain('ERP sync');
    expect(listed.stdout).not.toContain(key);

    expect((await runCli(stack, 'key', 'revoke', prefix)).code).toBe(0);
    expect((await request(stack.baseUrl, 'GET', '/api/v1/projects', { key })).status).toBe(401);
    expect((await runCli(stack, 'key', 'list', '--company', companyId)).stdout).toContain('revoked');
  }, 60_000);

  it('manages the skill library and refuses unknown scopes', async () => {
    const companyId = cliField((await runCli(stack, 'company', 'create', 'Skills Co')).stdout, 'id')!;
    const added = await runCli(stack, 'skill', 'add', '--company', companyId, 'Welding', 'Rigging', 'welding');
    expect(added.stdout).toContain('Added Welding');
    expect(added.stdout).toContain('Already there: welding');
    expect((await runCli(stack, 'skill', 'list', '--company', companyId)).stdout.trim().split('\n')).toHaveLength(2);

    const bad = await runCli(stack, 'key', 'create', '--company', companyId, '--name', 'x', '--scopes', 'projects:read,everything');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Unknown scopes: everything');
  }, 60_000);

  it("manages a company's work types: lists the built-ins, adds its own, changes and deactivates them, as REST sees them", async () => {
    const companyId = cliField((await runCli(stack, 'company', 'create', 'Work Types Co')).stdout, 'id')!;
    const listed = await runCli(stack, 'work-type', 'list', '--company', companyId);
    expect(listed.stdout.trim().split('\n').map((line) => line.split(/\s{2,}/)[0])).toEqual(['REG', 'OT', 'VAC', 'SICK', 'HOL']);
    expect(listed.stdout).toMatch(/^REG\s+Regular\s+billable\s+work order required\s+x1\s+active\s+default$/m);

    const added = await runCli(stack, 'work-type', 'add', '--company', companyId, '--name', 'Prevailing wage', '--code', 'PW', '--billable', 'yes', '--requires-work-order', 'no', '--pay-multiplier', '1.25');
    expect(added.stdout).toMatch(/^Added PW\s+Prevailing wage\s+billable\s+work order optional\s+x1.25\s+active$/m);
    const changed = await runCli(stack, 'work-type', 'set', '--company', companyId, 'prevailing WAGE', '--active', 'no', '--requires-work-order', 'auto');
    expect(changed.stdout).toMatch(/^Changed PW\s+Prevailing wage\s+billable\s+work order required\s+x1.25\s+inactive$/m);
    expect((await runCli(stack, 'work-type', 'set', '--company', companyId, 'vac', '--default')).stdout).toMatch(/^Changed VAC .*default$/m);

    const key = cliField((await runCli(stack, 'key', 'create', '--company', companyId, '--name', 'reader', '--scopes', 'work-types:read')).stdout, 'key')!;
    const types = (await request(stack.baseUrl, 'GET', '/api/v1/work-types?code=PW', { key })).body.data;
    expect(types).toEqual([expect.objectContaining({ code: 'PW', billable: true, requires_work_order: null, pay_multiplier: 1.25, is_active: false })]);

    for (const [args, message] of [
      [['add', '--company', companyId, '--name', 'Prevailing Wage'], 'A work type named "Prevailing Wage" already exists'],
      [['add', '--company', companyId, '--name', 'x'.repeat(101)], 'name: must be at most 100 characters'],
      [['set', '--company', companyId, 'REG', '--code', 'R'], 'code is REG for this built-in work type and cannot change'],
      [['set', '--company', companyId, 'NOPE', '--active', 'no'], 'No work type with the code or name "NOPE"'],
      [['add', '--company', companyId, '--name', 'Y', '--billable', 'maybe'], '--billable takes yes or no'],
      [['list', '--company', 'not-a-company'], 'No company with id not-a-company'],
    ] as const) {
      const run = await runCli(stack, 'work-type', ...args);
      expect({ code: run.code, stderr: run.stderr.trim() }).toEqual({ code: 1, stderr: expect.stringContaining(message) });
    }
  }, 90_000);
});
