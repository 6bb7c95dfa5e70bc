import { signWebhook } from '../../src/crypto/webhook-signature';
import { countRows, outboxOf } from '../helpers/fixtures';
import { createTenant, envelope, request, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';

const TABLES = ['employees', 'departments', 'roles', 'customers', 'locations', 'contacts', 'projects', 'outbox_events'];

async function snapshot(stack: TestStack, companyId: string): Promise<Record<string, number>> {
  return Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await countRows(stack, t, companyId)])));
}

describe('POST /webhooks/inbound', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    tenant = await createTenant(stack.orm, ['webhooks:inbound', 'skills:write']);
  });
  afterAll(() => stack.close());

  describe('authentication of the request', () => {
    it('accepts a correctly signed test.connection and writes nothing', async () => {
      const before = await snapshot(stack, tenant.companyId);
      const response = await sendInbound(stack.baseUrl, tenant, envelope('test.connection', { hello: 'world', nested: { any: ['thing'] } }));
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: expect.stringContaining('Connection successful'), event_id: expect.any(String), record_id: null });
      expect(response.headers.get('ratelimit-policy')).toContain('"burst";q=50');
      expect(await snapshot(stack, tenant.companyId)).toEqual(before);
    });

    it('answers 403 to a signature made with another secret', async () => {
      const response = await sendInbound(stack.baseUrl, tenant, envelope('test.connection'), { secret: 'whsec_wrong' });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        error: { code: 'INVALID_SIGNATURE', message: expect.any(String), details: { field: 'X-Webhook-Signature', reason: 'does not match the request body' } },
      });
    });

    it('answers 403 when the body was changed after signing', async () => {
      const signed = JSON.stringify(envelope('test.connection'));
      const timestamp = String(Math.floor(Date.now() / 1000));
      const response = await request(stack.baseUrl, 'POST', '/webhooks/inbound', {
        key: tenant.key,
        rawBody: signed.replace('test-suite', 'tampered'),
        headers: { 'Content-Type': 'application/json', 'X-Webhook-Timestamp': timestamp, 'X-Webhook-Signature': signWebhook(tenant.signingSecret, timestamp, signed) },
      });
      expect(response.status).toBe(403);
    });

    it('answers 403 to a timestamp older than 300 seconds, even when correctly signed', async () => {
      const response = await sendInbound(stack.baseUrl, tenant, envelope('test.connection'), { timestamp: Math.floor(Date.now() / 1000) - 301 });
      expect(response.status).toBe(403);
      expect(response.body.error).toMatchObject({ code: 'INVALID_SIGNATURE', details: { field: 'X-Webhook-Timestamp' } });
    });

    it('answers 403 when the signature headers are missing', async () => {
      const response = await request(stack.baseUrl, 'POST', '/webhooks/inbound', { key: tenant.key, body: envelope('test.connection') });
      expect(response.status).toBe(403);
      expect(response.body.error.details.field).toBe('X-Webhook-Timestamp');
    });

    it('answers 400 to an unknown X-Webhook-Source and accepts the known ones', async () => {
      const unknown = await sendInbound(stack.baseUrl, tenant, envelope('test.connection'), { source: 'carrier-pigeon' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'X-Webhook-Source', reason: expect.stringContaining('custom') } });
      // Present but empty names no source (absent is custom); found by the fuzz test.
      expect((await sendInbound(stack.baseUrl, tenant, envelope('test.connection'), { source: '' })).status).toBe(400);
      for (const source of ['custom', 'zapier', 'make', 'n8n']) {
        expect((await sendInbound(stack.baseUrl, tenant, envelope('test.connection'), { source })).status).toBe(200);
      }
    });

    it('answers 401 without a key and 415 without a JSON content type', async () => {
      expect((await request(stack.baseUrl, 'POST', '/webhooks/inbound', { body: envelope('test.connection') })).status).toBe(401);
      const text = await request(stack.baseUrl, 'POST', '/webhooks/inbound', { key: tenant.key, rawBody: 'hello', headers: { 'Content-Type': 'text/plain' } });
      expect(text.status).toBe(415);
    });
  });

  describe('envelope', () => {
    it.each([
      ['no event_type', { data: {} }, 'event_type', 'required but not provided'],
      ['a malformed event_type', { event_type: 'Project Created' }, 'event_type', expect.stringContaining('pattern')],
      ['an unsupported event_type', { event_type: 'spaceship.launched', data: {} }, 'event_type', expect.stringContaining('supported: test.connection')],
      ['a bad timestamp', { event_type: 'test.connection', timestamp: 'yesterday' }, 'timestamp', expect.stringContaining('ISO 8601')],
      ['data that is not an object', { event_type: 'test.connection', data: [1] }, 'data', 'must be of type object'],
      ['an unknown envelope field', { event_type: 'test.connection', extra: 1 }, 'extra', 'is not a recognised field'],
    ])('answers 400 to %s', async (_, body, field, reason) => {
      const response = await sendInbound(stack.baseUrl, tenant, body);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason } });
    });
  });

  describe('employee.created', () => {
    beforeAll(async () => {
      for (const name of ['Welding', 'First Aid']) {
        await request(stack.baseUrl, 'POST', '/api/v1/skills', { key: tenant.key, body: { name } });
      }
    });

    it('creates the employee, its department and role, and records employee.created', async () => {
      const response = await sendInbound(
        stack.baseUrl,
        tenant,
        envelope('employee.created', {
          emp_number: 'E-100',
          name: 'Dana Builder',
          email: 'dana@example.com',
          phone: '+1 403 555 0100',
          department_name: 'Field Operations',
          role_name: 'Foreman',
          employee_type: 'site_lead',
          employee_skills: ['welding', 'First Aid'],
          start_date: '2026-01-15',
          emergency_contact_name: 'Alex',
          emergency_contact_phone: '+1 403 555 0101',
          emergency_contact_relationship: 'sibling',
        }),
      );
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: 'Employee E-100 created', event_id: expect.any(String), record_id: expect.any(String) });

      const events = await outboxOf(stack, tenant.companyId);
      const event = events.find((e) => e.id === response.body.event_id)!;
      expect(event.event_type).toBe('employee.created');
      expect(event.origin_api_key_id).toBe(tenant.apiKeyId);
      expect(event.data).toEqual({
        id: response.body.record_id,
        emp_number: 'E-100',
        name: 'Dana Builder',
        email: 'dana@example.com',
        phone: '+1 403 555 0100',
        role: 'Foreman',
        department: 'Field Operations',
        employee_type: 'site_lead',
        employee_skills: ['First Aid', 'Welding'],
        start_date: '2026-01-15',
        emergency_contact_name: 'Alex',
        emergency_contact_phone: '+1 403 555 0101',
        is_project_owner: false,
        is_site_lead: true,
        is_site_worker: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(event.catalog_data).toMatchObject({ id: response.body.record_id, department: 'Field Operations', role: 'Foreman' });
      expect(await countRows(stack, 'departments', tenant.companyId)).toBe(1);
      expect(await countRows(stack, 'roles', tenant.companyId)).toBe(1);
    });

    it('matches an existing department and role case-insensitively instead of creating another', async () => {
      const response = await sendInbound(
        stack.baseUrl,
        tenant,
        envelope('employee.created', { emp_number: 'E-101', name: 'Kim', email: 'kim@example.com', employee_type: 'site_worker', department_name: 'FIELD operations', role_name: 'foreman' }),
      );
      expect(response.status).toBe(200);
      expect(await countRows(stack, 'departments', tenant.companyId)).toBe(1);
      expect(await countRows(stack, 'roles', tenant.companyId)).toBe(1);
    });

    it('refuses unknown skills, listing them, and writes nothing', async () => {
      const before = await snapshot(stack, tenant.companyId);
      const response = await sendInbound(
        stack.baseUrl,
        tenant,
        envelope('employee.created', {
          emp_number: 'E-102',
          name: 'Pat',
          email: 'pat@example.com',
          employee_type: 'site_worker',
          department_name: 'Brand New Department',
          employee_skills: ['Welding', 'Rigging', 'Crane Operation'],
        }),
      );
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: {
          code: 'UNKNOWN_SKILLS',
          message: 'Unknown skills: Rigging, Crane Operation. Add them to the skill library first.',
          details: { field: 'data.employee_skills', reason: 'not in the company skill library: Rigging, Crane Operation' },
        },
      });
      expect(await snapshot(stack, tenant.companyId)).toEqual(before);
    });

    it('answers 409 to an emp_number that exists, and 400 naming a missing field', async () => {
      const duplicate = await sendInbound(stack.baseUrl, tenant, envelope('employee.created', { emp_number: 'E-100', name: 'Again', email: 'a@example.com', employee_type: 'office' }));
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'data.emp_number' } });

      const missing = await sendInbound(stack.baseUrl, tenant, envelope('employee.created', { emp_number: 'E-103', name: 'No Mail', employee_type: 'office' }));
      expect(missing.status).toBe(400);
      expect(missing.body.error).toEqual({ code: 'INVALID_REQUEST', message: 'Missing required field: data.email', details: { field: 'data.email', reason: 'required but not provided' } });

      const badType = await sendInbound(stack.baseUrl, tenant, envelope('employee.created', { emp_number: 'E-104', name: 'X', email: 'x@example.com', employee_type: 'astronaut' }));
      expect(badType.body.error.details).toEqual({ field: 'data.employee_type', reason: 'must be one of: site_worker, site_lead, project_owner, office' });
    });

    it('creates one employee when the same one is sent twice at once', async () => {
      const data = { emp_number: 'E-200', name: 'Twin', email: 'twin@example.com', employee_type: 'office', department_name: 'Racing Dept' };
      const responses = await Promise.all([sendInbound(stack.baseUrl, tenant, envelope('employee.created', data)), sendInbound(stack.baseUrl, tenant, envelope('employee.created', data))]);
      expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
      const [row] = await stack.em().execute<{ n: string }[]>("select count(*) as n from employees where company_id = ? and emp_number = 'E-200'", [tenant.companyId]);
      expect(Number(row!.n)).toBe(1);
    });
  });
});
