import { restClient, unique } from '../../helpers/api-client';
import { countRows, outboxOf } from '../../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const employeesFixture: CrudFixture = {
  collection: 'employees',
  table: 'employees',
  keyFields: ['emp_number'],
  parents: async ({ api }) => {
    for (const name of ['Welding', 'Rigging']) await api.create('skills', { name });
    return {};
  },
  body: (_, tag) => ({
    emp_number: `E-${tag}`,
    name: `Worker ${tag}`,
    email: `worker.${tag}@example.com`,
    phone: '+1 403 555 0100',
    department_name: 'Field Operations',
    role_name: 'Foreman',
    employee_type: 'site_lead',
    employee_skills: ['Rigging', 'Welding'],
    start_date: '2026-01-15',
    emergency_contact_name: 'Alex Kin',
    emergency_contact_phone: '+1 403 555 0101',
    emergency_contact_relationship: 'sibling',
  }),
  listRecords: () => [
    { emp_number: 'E-1', name: 'Ana', email: 'ana@example.com', employee_type: 'site_worker', department_name: 'Field', role_name: 'Laborer', employee_skills: ['Welding'] },
    { emp_number: 'E-2', name: 'Ben', email: 'ben@example.com', employee_type: 'site_lead', department_name: 'Field', role_name: 'Foreman', employee_skills: ['Rigging', 'Welding'] },
    { emp_number: 'E-3', name: 'Cy', email: 'cy@example.com', employee_type: 'office', department_name: 'Office' },
    { emp_number: 'E-4', name: 'Di', email: 'di@example.com', employee_type: 'site_worker' },
  ],
  filters: [
    { query: () => 'department=FIELD', expect: [0, 1] },
    { query: () => 'department=Office', expect: [2] },
    { query: () => 'role=foreman', expect: [1] },
    { query: () => 'employee_type=site_worker', expect: [0, 3] },
    { query: () => 'skill=welding', expect: [0, 1] },
    { query: () => 'skill=Rigging', expect: [1] },
    // `_` is a plain character, not LIKE's any-one-character.
    { query: () => 'department=Fiel_', expect: [] },
    { query: () => 'role=Laborer&employee_type=site_worker&skill=Welding', expect: [0] },
  ],
  update: { patch: { phone: '+1 403 555 0199', employee_type: 'project_owner', start_date: '2026-02-01', employee_skills: ['Welding'] }, clear: 'phone' },
  textField: 'name',
  invalid: [
    { what: 'no email', on: 'create', body: () => ({ emp_number: `E-${unique()}`, name: 'No Mail', employee_type: 'office' }), field: 'email' },
    { what: 'an e-mail address that is not one', on: 'update', body: () => ({ email: 'not-an-address' }), field: 'email' },
    { what: 'a null email', on: 'update', body: () => ({ email: null }), field: 'email' },
    { what: 'an employee_type not in the list', on: 'create', body: () => ({ emp_number: `E-${unique()}`, name: 'X', email: 'x@example.com', employee_type: 'astronaut' }), field: 'employee_type' },
    { what: 'an emp_number of 51 characters', on: 'update', body: () => ({ emp_number: 'E'.repeat(51) }), field: 'emp_number' },
    { what: 'February 30th as start_date', on: 'update', body: () => ({ start_date: '2026-02-30' }), field: 'start_date' },
    { what: 'employee_skills as a string', on: 'update', body: () => ({ employee_skills: 'Welding' }), field: 'employee_skills' },
    { what: 'a blank department_name', on: 'update', body: () => ({ department_name: ' ' }), field: 'department_name' },
    { what: 'a skill name of 101 characters', on: 'update', body: () => ({ employee_skills: ['x'.repeat(101)] }), field: 'employee_skills[0]' },
  ],
};

describe('REST /employees', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(employeesFixture, () => stack);

  describe('the rules of the inbound employee operations', () => {
    async function company() {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      for (const name of ['Welding', 'First Aid']) await api.create('skills', { name });
      return { tenant, api };
    }
    const employee = (overrides: Record<string, unknown> = {}) => ({ emp_number: `E-${unique()}`, name: 'Dana', email: 'dana@example.com', employee_type: 'site_worker', ...overrides });

    it('creates a missing department and role, and matches existing ones ignoring case', async () => {
      const { tenant, api } = await company();
      const first = await api.create('employees', employee({ department_name: 'Field Operations', role_name: 'Foreman' }));
      const second = await api.create('employees', employee({ department_name: 'FIELD operations', role_name: 'foreman' }));
      expect([first.department_name, second.department_name, second.role_name]).toEqual(['Field Operations', 'Field Operations', 'Foreman']);
      expect(await countRows(stack, 'departments', tenant.companyId)).toBe(1);
      expect(await countRows(stack, 'roles', tenant.companyId)).toBe(1);
      const moved = await api.put(`/employees/${first.id}`, { department_name: 'Estimating', role_name: null });
      expect(moved.body).toMatchObject({ department_name: 'Estimating', role_name: null });
      expect(await countRows(stack, 'departments', tenant.companyId)).toBe(2);
    });

    it.each(['POST', 'PUT'])('answers %s with unknown skills 400 UNKNOWN_SKILLS listing them, and writes nothing', async (method) => {
      const { tenant, api } = await company();
      const existing = await api.create('employees', employee({ employee_skills: ['welding'] }));
      expect(existing.employee_skills).toEqual(['Welding']);
      const rows = { employees: await countRows(stack, 'employees', tenant.companyId), departments: await countRows(stack, 'departments', tenant.companyId) };
      const body = { department_name: 'Brand New', employee_skills: ['First Aid', 'Rigging', 'Crane Operation'] };
      const response = method === 'POST' ? await api.post('/employees', employee(body)) : await api.put(`/employees/${existing.id}`, body);
      expect(response.status).toBe(400);
      expect(response.body.error).toEqual({
        code: 'UNKNOWN_SKILLS',
        message: 'Unknown skills: Rigging, Crane Operation. Add them to the skill library first.',
        details: { field: 'employee_skills', reason: 'not in the company skill library: Rigging, Crane Operation' },
      });
      expect({ employees: await countRows(stack, 'employees', tenant.companyId), departments: await countRows(stack, 'departments', tenant.companyId) }).toEqual(rows);
      expect((await api.get(`/employees/${existing.id}`)).body).toEqual(existing);
    });

    it('replaces the skills, in alphabetical order, ignoring repeats; employee.updated lists them as added and removed', async () => {
      const { tenant, api } = await company();
      const created = await api.create('employees', employee({ employee_skills: ['Welding'] }));
      const updated = await api.put(`/employees/${created.id}`, { employee_skills: ['first aid', 'First Aid'] });
      expect(updated.body.employee_skills).toEqual(['First Aid']);
      const [event] = (await outboxOf(stack, tenant.companyId)).filter((e) => e.event_type === 'employee.updated');
      expect(event!.catalog_data!.changes).toEqual({ employee_skills: { added: ['First Aid'], removed: ['Welding'] } });
      expect(event!.data.employee_skills).toEqual(['First Aid']);
    });

    it('cancels the time off of a deleted employee, each with time_off.deleted', async () => {
      const { tenant, api } = await company();
      const worker = await api.create('employees', employee());
      const request = await api.create('time-off', { employee_id: worker.id, start_date: '2026-07-01', end_date: '2026-07-03' });
      expect((await api.delete(`/employees/${worker.id}`)).status).toBe(204);
      expect((await api.get(`/time-off/${request.id}`)).status).toBe(404);
      const events = (await outboxOf(stack, tenant.companyId)).map((e) => e.event_type);
      expect(events.slice(-2)).toEqual(['time_off.deleted', 'employee.deleted']);
    });
  });
});
