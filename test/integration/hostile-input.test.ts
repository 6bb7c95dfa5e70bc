import { signWebhook } from '../../src/crypto/webhook-signature';
import { countRows, seedProject } from '../helpers/fixtures';
import { awayFromMinuteEdge } from '../helpers/processes';
import { createTenant, envelope, request, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';

/**
 * Regression tests for what a hostile client found (the hardening issue): text, dates and ids that pass a
 * schema but that PostgreSQL or JavaScript cannot handle, body bytes that are not UTF-8, signatures over
 * decoded text, missing security headers, and forged requests using up a key's inbound budget.
 */

const UUID = '0193f4a0-0000-7000-8000-000000000001';

/** POST of exact bytes, signed (or not) as given. */
async function postBytes(stack: TestStack, path: string, bytes: Buffer, headers: Record<string, string>) {
  const response = await fetch(`${stack.baseUrl}${path}`, { method: 'POST', headers, body: bytes });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

function signedInboundHeaders(tenant: Tenant, bytes: Buffer, signedBytes: Buffer = bytes, contentType = 'application/json') {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    'Content-Type': contentType,
    'X-API-Key': tenant.key,
    'X-Webhook-Timestamp': timestamp,
    'X-Webhook-Signature': signWebhook(tenant.signingSecret, timestamp, signedBytes),
  };
}

const invalidField = (field: string) => ({ error: { code: 'INVALID_REQUEST', message: expect.any(String), details: { field, reason: expect.any(String) } } });

describe('hostile input', () => {
  let stack: TestStack;
  let admin: Tenant;
  let projectId: string;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    admin = await createTenant(stack.orm, ['admin']);
    projectId = await seedProject(stack, admin);
  });
  afterAll(() => stack.close());

  describe('text PostgreSQL cannot store is a 400 naming the field, on every route', () => {
    it.each([
      ['POST', '/api/v1/skills', { name: 'Weld\u0000ing' }, 'name'],
      ['POST', '/api/v1/work-orders', { title: 'Pour\u0000', project_id: UUID }, 'title'],
      ['POST', '/api/v1/webhook-endpoints', { url: 'https://example.com/\u0000', event_types: ['*'] }, 'url'],
      ['POST', '/api/v1/webhook-endpoints', { url: 'https://example.com/', event_types: ['*'], description: 'a\ud800b' }, 'description'],
      ['POST', '/api/v1/customers', { name: 'Acme \udc00' }, 'name'],
      ['POST', '/api/v1/vendors', { vendor_name: 'V', custom_fields: { 'bad\u0000key': 'x' } }, 'custom_fields.bad\u0000key'],
      ['POST', '/api/v1/contacts', { customer_id: UUID, first_name: 'A', last_name: 'B', contact_tags: ['ok', 'no\u0000'] }, 'contact_tags[1]'],
    ])('%s %s', async (method, path, body, field) => {
      const response = await request(stack.baseUrl, method, path, { key: admin.key, body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalidField(field));
    });

    it('in inbound data, named from the envelope', async () => {
      const data = { emp_number: 'E-1', name: 'Sam\u0000', email: 'sam@example.com', employee_type: 'office' };
      const response = await sendInbound(stack.baseUrl, admin, envelope('employee.created', data));
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalidField('data.name'));
    });

    it('in query parameters', async () => {
      const nul = await request(stack.baseUrl, 'GET', '/api/v1/webhook-deliveries?event_type=%00', { key: admin.key });
      expect(nul.status).toBe(400);
      expect(nul.body).toEqual(invalidField('event_type'));
      const name = await request(stack.baseUrl, 'GET', '/api/v1/customers?name=a%00b', { key: admin.key });
      expect(name.body).toEqual(invalidField('name'));
    });
  });

  describe('dates and timestamps are parsed and range-checked in one place', () => {
    it.each([
      ['2026-06-30T23:59:60Z', 'a leap second'],
      ['0000-01-01T00:00:00Z', 'year 0000'],
      ['9999-12-31T23:59:59-23:59', 'past year 9999 in UTC'],
      ['2026-02-30T08:00:00Z', 'a day February does not have'],
      ['2026-01-01T08:00:00+24:00', 'an offset past 23:59'],
    ])('refuses %s (%s)', async (timestamp) => {
      const response = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', {
        key: admin.key,
        body: { title: 'Framing', project_id: projectId, scheduled_start: timestamp },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalidField('scheduled_start'));
    });

    it('refuses dates PostgreSQL cannot store, in bodies, inbound data and query parameters', async () => {
      const vendor = await request(stack.baseUrl, 'POST', '/api/v1/vendors', { key: admin.key, body: { vendor_name: 'Dated', insurance_expiry_date: '0000-01-01' } });
      expect(vendor.body).toEqual(invalidField('insurance_expiry_date'));
      const project = await sendInbound(stack.baseUrl, admin, envelope('project.created', { project_code: 'P-0', project_name: 'Zero', customer_name: 'C', location_name: 'L', start_date: '0000-01-01' }));
      expect(project.status).toBe(400);
      expect(project.body).toEqual(invalidField('data.start_date'));
      const since = await request(stack.baseUrl, 'GET', '/api/v1/customers?updated_since=2026-06-30T23:59:60Z', { key: admin.key });
      expect(since.body).toEqual(invalidField('updated_since'));
      expect(await countRows(stack, 'customers', admin.companyId)).toBe(1);
    });

    it('accepts the edges of the range', async () => {
      const response = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', {
        key: admin.key,
        body: { title: 'Edges', project_id: projectId, scheduled_start: '0001-01-01T00:00:00Z', scheduled_end: '9999-12-31T23:59:00Z' },
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ scheduled_start: '0001-01-01T00:00:00.000Z', scheduled_end: '9999-12-31T23:59:00.000Z' });
    });
  });

  describe('ids are validated in one place', () => {
    it.each([
      ['/api/v1/work-orders', { title: 'x', project_id: `urn:uuid:${UUID}` }, 'project_id'],
      ['/api/v1/work-orders', { title: 'x', project_id: UUID, assigned_to: [`urn:uuid:${UUID}`] }, 'assigned_to[0]'],
      ['/api/v1/webhook-endpoints', { url: 'https://example.com/', event_types: ['*'], api_key_id: `urn:uuid:${UUID}` }, 'api_key_id'],
      ['/api/v1/locations', { customer_id: `{${UUID}}`, name: 'Braces' }, 'customer_id'],
    ])('POST %s with %j', async (path, body, field) => {
      const response = await request(stack.baseUrl, 'POST', path, { key: admin.key, body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalidField(field));
    });

    it.each(['-'.repeat(36), 'a'.repeat(32) + 'bbbb', `urn:uuid:${UUID}`])('answers 400 to ?endpoint_id=%s', async (id) => {
      const response = await request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries?endpoint_id=${encodeURIComponent(id)}`, { key: admin.key });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalidField('endpoint_id'));
    });

    it('answers 404 to a path id that cannot be one', async () => {
      for (const id of [`urn:uuid:${UUID}`, '-'.repeat(36), 'a'.repeat(36)]) {
        const response = await request(stack.baseUrl, 'GET', `/api/v1/customers/${encodeURIComponent(id)}`, { key: admin.key });
        expect(response.status).toBe(404);
        expect(response.body.error.code).toBe('NOT_FOUND');
      }
    });
  });

  describe('bodies are UTF-8 JSON', () => {
    it('refuses another charset with 415 and stores nothing', async () => {
      const latin1 = Buffer.from('{"name":"Caf\u00e9"}', 'latin1');
      const response = await postBytes(stack, '/api/v1/skills', latin1, { 'Content-Type': 'application/json; charset=ISO-8859-1', 'X-API-Key': admin.key });
      expect(response.status).toBe(415);
      expect(response.body.error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', details: { field: 'Content-Type' } });
      const utf8 = await postBytes(stack, '/api/v1/skills', Buffer.from('{"name":"Caf\u00e9"}'), { 'Content-Type': 'application/json; charset=utf-8', 'X-API-Key': admin.key });
      expect(utf8.status).toBe(201);
      expect(utf8.body.name).toBe('Caf\u00e9');
    });

    it('refuses bytes that are not UTF-8 with 400, on REST and inbound', async () => {
      const bytes = Buffer.concat([Buffer.from('{"name":"Caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
      const rest = await postBytes(stack, '/api/v1/skills', bytes, { 'Content-Type': 'application/json', 'X-API-Key': admin.key });
      expect(rest.status).toBe(400);
      expect(rest.body).toEqual(invalidField('body'));
      const inbound = Buffer.concat([Buffer.from('{"event_type":"test.connection","data":{"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]);
      const signed = await postBytes(stack, '/webhooks/inbound', inbound, signedInboundHeaders(admin, inbound));
      expect(signed.status).toBe(400);
      expect(signed.body).toEqual(invalidField('body'));
    });
  });

  describe('the inbound signature covers the exact bytes received', () => {
    const text = JSON.stringify(envelope('test.connection'));
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);

    it('a byte order mark is part of what is signed', async () => {
      const withBom = Buffer.concat([bom, Buffer.from(text)]);
      const signedWithout = await postBytes(stack, '/webhooks/inbound', withBom, signedInboundHeaders(admin, withBom, Buffer.from(text)));
      expect(signedWithout.status).toBe(403);
      expect(signedWithout.body.error.code).toBe('INVALID_SIGNATURE');
      const signedWith = await postBytes(stack, '/webhooks/inbound', withBom, signedInboundHeaders(admin, withBom));
      expect(signedWith.status).toBe(200);
    });

    it('two different invalid byte sequences do not share a signature', async () => {
      const body = (bad: number[]) => Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from(',"source":"'), Buffer.from(bad), Buffer.from('"}')]);
      const first = body([0xff]);
      const second = body([0xfe]);
      // Both decode to the same text (U+FFFD); a signature over that text matches neither body.
      const decoded = Buffer.from(first.toString('utf8'));
      expect(second.toString('utf8')).toBe(first.toString('utf8'));
      for (const bytes of [first, second]) {
        const response = await postBytes(stack, '/webhooks/inbound', bytes, signedInboundHeaders(admin, bytes, decoded));
        expect(response.status).toBe(403);
      }
    });
  });

  describe('security headers', () => {
    it('sends nosniff and no-store on every response, secrets included', async () => {
      const responses = [
        await request(stack.baseUrl, 'GET', '/api/v1/customers', { key: admin.key }),
        await request(stack.baseUrl, 'GET', '/api/v1/customers'),
        await request(stack.baseUrl, 'GET', '/nowhere', { key: admin.key }),
        await sendInbound(stack.baseUrl, admin, envelope('test.connection')),
        await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${UUID}/rotate-secret`, { key: admin.key }),
        await request(stack.baseUrl, 'GET', '/health'),
      ];
      for (const response of responses) {
        expect(response.headers.get('x-content-type-options')).toBe('nosniff');
        expect(response.headers.get('cache-control')).toBe('no-store');
      }
    });
  });

  describe('forged inbound requests', () => {
    it('are counted apart, so they cannot use up the budget of signed requests', async () => {
      const sender = await createTenant(stack.orm, ['webhooks:inbound']);
      await awayFromMinuteEdge();
      const forged = [];
      for (let i = 0; i < 50; i++) forged.push((await sendInbound(stack.baseUrl, sender, envelope('test.connection'), { secret: 'whsec_leaked-key-id-but-not-the-secret' })).status);
      expect(forged.slice(0, 20).every((s) => s === 403)).toBe(true);
      expect(forged.slice(20).every((s) => s === 429)).toBe(true);
      const real = await sendInbound(stack.baseUrl, sender, envelope('test.connection'));
      expect(real.status).toBe(200);
      expect(real.headers.get('ratelimit')).toContain('"burst";r=49');
    });
  });
});
