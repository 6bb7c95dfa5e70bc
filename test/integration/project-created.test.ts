import { projectCreationWorkflowId } from '../../src/domain/work/project-creation';
import { outboxOf, projectCounts, projectData, seedEmployee } from '../helpers/fixtures';
import { createTenant, envelope, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';

describe('project.created (projectCreation workflow)', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack.orm, ['webhooks:inbound', 'projects:read']);
  });
  afterAll(() => stack.close());

  it('creates customer, location, contacts and project, each with its event', async () => {
    const manager = await seedEmployee(stack, tenant, { empNumber: 'PM-1', name: 'Paula Manager', employeeType: 'project_owner' });
    const response = await sendInbound(stack.baseUrl, tenant, envelope('project.created', projectData('P-100', { internal_manager_emp_number: 'PM-1' })));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: 'Project P-100 created', event_id: expect.any(String), record_id: expect.any(String) });
    expect(await projectCounts(stack, tenant.companyId)).toEqual({ customers: 1, locations: 1, contacts: 2, projects: 1 });

    const events = await outboxOf(stack, tenant.companyId);
    expect(events.map((e) => e.event_type)).toEqual([
      'employee.created',
      'customer.created',
      'location.created',
      'contact.created',
      'contact.created',
      'project.created',
      'employee.assigned',
    ]);
    expect(events.every((e) => e.origin_api_key_id === tenant.apiKeyId)).toBe(true);
    const project = events.find((e) => e.event_type === 'project.created')!;
    expect(project.id).toBe(response.body.event_id);
    expect(project.data).toEqual({
      id: response.body.record_id,
      project_name: 'Tower P-100',
      project_code: 'P-100',
      description: 'Twelve-storey residential tower',
      priority: 'high',
      status: 'active',
      start_date: '2026-04-01',
      end_date: '2027-06-30',
      customer: { id: expect.any(String), name: 'Northwind Developments', type: 'commercial', email: 'ops@northwind.example', phone: '+1 403 555 0199' },
      location: { id: expect.any(String), name: 'Riverside Lot 7', address_line_1: '700 Riverside Dr', city: 'Calgary', province: 'AB', postal_code: 'T2P 1A1', country: 'CA' },
      contacts: [
        { id: expect.any(String), first_name: 'Morgan', last_name: 'Lee', email: 'morgan@northwind.example', phone: null, role: 'Site Manager' },
        { id: expect.any(String), first_name: 'Riley', last_name: 'Chen', email: null, phone: null, role: 'Architect' },
      ],
      project_owners: [{ id: manager, name: 'Paula Manager', email: 'sam@example.com', emp_number: 'PM-1' }],
      created_at: expect.any(String),
      created_by: tenant.apiKeyId,
    });
    expect(project.catalog_data).toEqual({
      id: response.body.record_id,
      projectNumber: 'P-100',
      name: 'Tower P-100',
      customer: 'Northwind Developments',
      address: '700 Riverside Dr, Calgary, AB, T2P 1A1, CA',
      status: 'active',
      startDate: '2026-04-01',
      estimatedEndDate: '2027-06-30',
    });

    expect(events.at(-1)!.catalog_data).toEqual({
      employee: { id: manager, emp_number: 'PM-1', name: 'Paula Manager' },
      assignment_type: 'project',
      work_order: null,
      project: expect.objectContaining({ id: response.body.record_id, project_code: 'P-100' }),
      role: 'project_owner',
      assigned_at: expect.any(String),
      assigned_by: tenant.apiKeyId,
    });

    const { typedSearchAttributes, memo } = await stack.temporal.workflow.getHandle(projectCreationWorkflowId(tenant.companyId, 'P-100')).describe();
    expect(memo).toEqual({ projectId: response.body.record_id, eventId: response.body.event_id });
    expect(typedSearchAttributes.getAll().map((p) => [p.key.name, p.value])).toEqual(
      expect.arrayContaining([['CompanyId', tenant.companyId], ['EventType', 'project.created'], ['RecordKey', 'P-100']]),
    );
  });

  it('sent twice, creates one customer, one location, one set of contacts and one project', async () => {
    const data = projectData('P-200', { customer_name: 'Twice Co', location_name: 'Twice Site' });
    const first = await sendInbound(stack.baseUrl, tenant, envelope('project.created', data));
    const before = await projectCounts(stack, tenant.companyId);
    const eventsBefore = (await outboxOf(stack, tenant.companyId)).length;
    const second = await sendInbound(stack.baseUrl, tenant, envelope('project.created', data));
    expect(first.status).toBe(200);
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'data.project_code', reason: 'already exists' } });
    expect(await projectCounts(stack, tenant.companyId)).toEqual(before);
    expect((await outboxOf(stack, tenant.companyId)).length).toBe(eventsBefore);
  });

  it('sent twice at the same moment, runs once: one 200 and one 409, as when sent one after the other', async () => {
    const other = await createTenant(stack.orm, ['webhooks:inbound']);
    const data = projectData('P-300');
    // Two senders, so the bodies (and signatures) differ even when built in the same millisecond: one body sent
    // twice is a replay, answered 409 REPLAYED_REQUEST before it reaches the project.
    const [first, second] = ['field-app', 'erp'].map((source) => ({ ...envelope('project.created', data), source }));
    const responses = await Promise.all([sendInbound(stack.baseUrl, other, first), sendInbound(stack.baseUrl, other, second)]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(responses.find((r) => r.status === 409)!.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'data.project_code' } });
    expect(await projectCounts(stack, other.companyId)).toEqual({ customers: 1, locations: 1, contacts: 2, projects: 1 });
    expect((await outboxOf(stack, other.companyId)).filter((e) => e.event_type === 'project.created')).toHaveLength(1);
  });

  it('reuses an existing customer (matched case-insensitively) and location', async () => {
    const reuse = await createTenant(stack.orm, ['webhooks:inbound']);
    await sendInbound(stack.baseUrl, reuse, envelope('project.created', projectData('R-1')));
    const second = await sendInbound(
      stack.baseUrl,
      reuse,
      envelope('project.created', projectData('R-2', { customer_name: 'NORTHWIND developments', location_name: 'riverside lot 7', contacts: [{ first_name: 'morgan', last_name: 'LEE' }] })),
    );
    expect(second.status).toBe(200);
    expect(await projectCounts(stack, reuse.companyId)).toEqual({ customers: 1, locations: 1, contacts: 2, projects: 2 });
    const types = (await outboxOf(stack, reuse.companyId)).map((e) => e.event_type);
    expect(types.filter((t) => t === 'customer.created')).toHaveLength(1);
    expect(types.filter((t) => t === 'project.created')).toHaveLength(2);
  });

  it('refuses an unknown manager before writing anything', async () => {
    const strict = await createTenant(stack.orm, ['webhooks:inbound']);
    const response = await sendInbound(stack.baseUrl, strict, envelope('project.created', projectData('U-1', { account_manager_emp_number: 'NOBODY' })));
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'data.account_manager_emp_number' } });
    expect(await projectCounts(stack, strict.companyId)).toEqual({ customers: 0, locations: 0, contacts: 0, projects: 0 });
    expect(await outboxOf(stack, strict.companyId)).toHaveLength(0);
  });

  it('answers 400 naming a missing required field', async () => {
    const { location_name: _omitted, ...withoutLocation } = projectData('M-1');
    const response = await sendInbound(stack.baseUrl, tenant, envelope('project.created', withoutLocation));
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual({ code: 'INVALID_REQUEST', message: 'Missing required field: data.location_name', details: { field: 'data.location_name', reason: 'required but not provided' } });
  });
});
