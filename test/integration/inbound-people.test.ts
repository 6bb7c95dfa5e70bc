import { type InboundSender, inboundSender, type RestClient, restClient } from '../helpers/api-client';
import { countRows, outboxOf } from '../helpers/fixtures';
import { expectError, expectRecorded } from '../helpers/inbound-assertions';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';

/**
 * The inbound employee and time off operations (webhooks.md 2.4, 2.7, 4): records identified by their natural
 * keys, through the same services and rules as REST.
 */
describe('inbound employee and time off operations', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  /** A new company with an employee E-1: an inbound sender and a REST client. */
  async function company(): Promise<{ tenant: Tenant; inbound: InboundSender; api: RestClient }> {
    const tenant = await createTenant(stack.orm, ['admin']);
    const api = restClient(stack, tenant);
    const inbound = inboundSender(stack, tenant);
    for (const name of ['Welding', 'First Aid']) await api.create('skills', { name });
    await api.create('employees', { emp_number: 'E-1', name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker', department_name: 'Field' });
    return { tenant, inbound, api };
  }

  describe('employee.updated and employee.deleted', () => {
    it('updates only the fields given, employee_type optional, department and role made or matched, skills checked', async () => {
      const { tenant, inbound, api } = await company();
      const response = await inbound.send('employee.updated', { emp_number: 'e-1', phone: '+1 403 555 0100', department_name: 'FIELD', role_name: 'Foreman', employee_skills: ['welding'] });
      const event = await expectRecorded(stack, response, 'employee.updated');
      expect(event.catalog_data.changes).toEqual({ phone: { from: null, to: '+1 403 555 0100' }, role_name: { from: null, to: 'Foreman' }, employee_skills: { added: ['Welding'], removed: [] } });
      expect((await api.get(`/employees/${response.body.record_id}`)).body).toMatchObject({
        emp_number: 'E-1',
        employee_type: 'site_worker',
        department_name: 'Field',
        role_name: 'Foreman',
        phone: '+1 403 555 0100',
        employee_skills: ['Welding'],
      });
      expect(await countRows(stack, 'departments', tenant.companyId)).toBe(1);

      const unknown = await inbound.send('employee.updated', { emp_number: 'E-1', employee_skills: ['Welding', 'Rigging'] });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({ code: 'UNKNOWN_SKILLS', details: { field: 'data.employee_skills', reason: 'not in the company skill library: Rigging' } });

      const same = await inbound.send('employee.updated', { emp_number: 'E-1', employee_type: 'site_worker' });
      expect(same.body.message).toContain('unchanged');
      expect((await outboxOf(stack, tenant.companyId)).filter((e) => e.event_type === 'employee.updated')).toHaveLength(1);
    });

    it('deletes the employee, and answers 404 naming emp_number for one that does not exist', async () => {
      const { inbound, api } = await company();
      const response = await inbound.send('employee.deleted', { emp_number: 'E-1' });
      await expectRecorded(stack, response, 'employee.deleted');
      expect((await api.get(`/employees/${response.body.record_id}`)).status).toBe(404);
      expectError(await inbound.send('employee.deleted', { emp_number: 'E-1' }), 404, 'NOT_FOUND', 'data.emp_number');
      expectError(await inbound.send('employee.updated', { emp_number: 'E-404', name: 'Nobody' }), 404, 'NOT_FOUND', 'data.emp_number');
    });
  });

  describe('time_off.*', () => {
    it('time_off.created defaults to an approved vacation of full days and answers as a processed request', async () => {
      const { inbound, api } = await company();
      const response = await inbound.send('time_off.created', { emp_number: 'E-1', start_date: '2026-07-01', end_date: '2026-07-05', reason: 'Summer' });
      const event = await expectRecorded(stack, response, 'time_off.created');
      expect(response.body.message).toBe('Time off request processed: vacation for employee E-1 from 2026-07-01 to 2026-07-05, approved');
      expect(event.data).toMatchObject({ emp_number: 'E-1', employee_name: 'Dana Builder', time_off_type: 'vacation', status: 'approved', start_time: null, end_time: null });
      expect((await api.get(`/time-off/${response.body.record_id}`)).body).toMatchObject({ time_off_type: 'vacation', status: 'approved', reason: 'Summer' });
    });

    it('takes a partial day with HH:MM:SS times, refusing other forms', async () => {
      const { inbound } = await company();
      const response = await inbound.send('time_off.created', { emp_number: 'E-1', start_date: '2026-08-10', end_date: '2026-08-10', start_time: '09:00:00', end_time: '12:30:00', time_off_type: 'sick_leave', status: 'pending' });
      const event = await expectRecorded(stack, response, 'time_off.created');
      expect(event.data).toMatchObject({ start_time: '09:00:00', end_time: '12:30:00', time_off_type: 'sick_leave', status: 'pending' });
      expect(response.body.message).toBe('Time off request processed: sick_leave for employee E-1 on 2026-08-10, pending');
      expectError(await inbound.send('time_off.created', { emp_number: 'E-1', start_date: '2026-08-11', end_date: '2026-08-11', start_time: '9:00', end_time: '12:30:00' }), 400, 'INVALID_REQUEST', 'data.start_time');
      expectError(await inbound.send('time_off.created', { emp_number: 'E-1', start_date: '2026-08-12', end_date: '2026-08-12', start_time: '09:00:00', end_time: null }), 400, 'INVALID_REQUEST', 'data.end_time');
    });

    it('time_off.updated finds the request by emp_number and its original dates, and changes the other fields', async () => {
      const { inbound, api } = await company();
      const created = await inbound.send('time_off.created', { emp_number: 'E-1', start_date: '2026-09-01', end_date: '2026-09-03', status: 'pending' });
      const response = await inbound.send('time_off.updated', {
        emp_number: 'e-1',
        start_date: '2026-09-01',
        end_date: '2026-09-03',
        status: 'approved',
        time_off_type: 'personal',
        notes: 'Approved by HR',
        start_time: '13:00:00',
        end_time: '11:00:00',
      });
      const event = await expectRecorded(stack, response, 'time_off.updated');
      expect(response.body.record_id).toBe(created.body.record_id);
      expect(event.data.changes).toEqual({
        start_time: { from: null, to: '13:00:00' },
        end_time: { from: null, to: '11:00:00' },
        time_off_type: { from: 'vacation', to: 'personal' },
        status: { from: 'pending', to: 'approved' },
        notes: { from: null, to: 'Approved by HR' },
      });
      expect((await api.get(`/time-off/${created.body.record_id}`)).body).toMatchObject({ start_date: '2026-09-01', end_date: '2026-09-03', status: 'approved' });
      expectError(await inbound.send('time_off.updated', { emp_number: 'E-1', start_date: '2026-09-01', end_date: '2026-09-04', status: 'denied' }), 404, 'NOT_FOUND', 'data.start_date');
    });

    it('time_off.deleted cancels the request; one employee has one request per pair of dates (409)', async () => {
      const { tenant, inbound, api } = await company();
      const created = await inbound.send('time_off.created', { emp_number: 'E-1', start_date: '2026-10-01', end_date: '2026-10-02' });
      expectError(await inbound.send('time_off.created', { emp_number: 'E-1', start_date: '2026-10-01', end_date: '2026-10-02', time_off_type: 'personal' }), 409, 'CONFLICT', 'data.start_date');
      const response = await inbound.send('time_off.deleted', { emp_number: 'E-1', start_date: '2026-10-01', end_date: '2026-10-02' });
      await expectRecorded(stack, response, 'time_off.deleted');
      expect(response.body.message).toBe('Time off of employee E-1 from 2026-10-01 to 2026-10-02 cancelled');
      expect((await api.get(`/time-off/${created.body.record_id}`)).status).toBe(404);
      expect(await countRows(stack, 'time_off', tenant.companyId)).toBe(0);
      expectError(await inbound.send('time_off.deleted', { emp_number: 'E-1', start_date: '2026-10-01', end_date: '2026-10-02' }), 404, 'NOT_FOUND', 'data.start_date');
      expectError(await inbound.send('time_off.created', { emp_number: 'E-9', start_date: '2026-10-01', end_date: '2026-10-02' }), 400, 'INVALID_REQUEST', 'data.emp_number');
    });
  });
});
