import { randomBytes } from 'node:crypto';
import { purchaseOrderApprovalWorkflowId } from '../../src/domain/supply/purchase-order-approval';
import { type RestClient, restClient, unique, unknownId } from '../helpers/api-client';
import { outboxOf, seedProject } from '../helpers/fixtures';
import { waitFor } from '../helpers/processes';
import { createTenant, issueTestKey, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';

/**
 * Purchase orders (webhooks.md 3, 6.2 po.*): drafts over REST, submission with approvers computed from the
 * approval thresholds, the purchaseOrderApproval workflow (two approvers, a rejection, escalation at the
 * deadline), receipts, and attachments stored byte for byte.
 */
describe('purchase orders', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let api: RestClient;
  let vendorId: string;
  let projectId: string;
  const people: Record<string, string> = {};

  beforeAll(async () => {
    // Escalation after 4 s; attachments up to 64 KiB.
    stack = await startStack({ config: await testConfig({ PO_APPROVAL_DEADLINE: '4', ATTACHMENT_MAX_BYTES: '65536' }) });
    tenant = await createTenant(stack.orm, ['admin']);
    api = restClient(stack, tenant);
    vendorId = (await api.create('vendors', { vendor_name: 'Apex Electrical Ltd.' })).id;
    projectId = await seedProject(stack, tenant, 'PO-PRJ');
    for (const [role_name, max_amount] of [['Project Manager', 10000], ['Director', 50000], ['Vice President', null]] as const) {
      await api.create('approval-thresholds', { role_name, max_amount });
    }
    for (const [key, name, role_name] of [['pm', 'Sam Chen', 'project manager'], ['director', 'Dana Ruiz', 'Director'], ['vp', 'Lee Park', 'Vice President'], ['clerk', 'Ari Stone', 'Clerk']]) {
      people[key!] = (await api.create('employees', { emp_number: `PO-${key}`, name, email: `${key}@example.com`, employee_type: 'office', role_name })).id;
    }
  });
  afterAll(() => stack.close());

  /** A draft of 25,000 before tax: the Project Manager and the Director must approve it. */
  const draft = async (overrides: Record<string, unknown> = {}) =>
    api.create('purchase-orders', {
      vendor_id: vendorId,
      project_id: projectId,
      currency: 'CAD',
      not_to_exceed_amount: 30000,
      tax: 1250,
      line_items: [
        { description: '12/2 NMD90 cable, 150 m roll', quantity: 100, unit_price: 150, category: 'Materials' },
        { description: 'LED troffer 2x4', quantity: 40, unit_price: 250 },
      ],
      ...overrides,
    });
  const eventsSince = async (count: number) => (await outboxOf(stack, tenant.companyId)).slice(count);
  const eventCount = async () => (await outboxOf(stack, tenant.companyId)).length;
  const searchAttributes = async (workflowId: string) =>
    Object.fromEntries((await stack.temporal.workflow.getHandle(workflowId).describe()).typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]));

  describe('drafts', () => {
    it('creates with 201, a number, totals rounded to cents, and po.created', async () => {
      const before = await eventCount();
      const response = await api.post('/purchase-orders', {
        vendor_id: vendorId,
        project_id: projectId,
        tax: 0.1,
        line_items: [{ description: 'Anchors', quantity: 3, unit_price: 0.335 }],
      });
      expect(response.status).toBe(201);
      const po = response.body;
      expect(response.headers.get('location')).toBe(`/api/v1/purchase-orders/${po.id}`);
      expect(po).toMatchObject({
        po_number: expect.stringMatching(/^PO-\d{6}$/),
        status: 'draft',
        currency: 'USD',
        line_items: [{ id: expect.any(String), description: 'Anchors', quantity: 3, unit_price: 0.335, total: 1.01, category: null, quantity_received: 0 }],
        subtotal: 1.01,
        tax: 0.1,
        total_amount: 1.11,
        created_by: tenant.apiKeyId,
        created_by_name: 'test key',
        approval_workflow: null,
        receipts: [],
      });
      expect((await api.get(`/purchase-orders/${po.id}`)).body).toEqual(po);
      const [event] = await eventsSince(before);
      expect(event).toMatchObject({ event_type: 'po.created', data: null, catalog_data: { id: po.id, po_number: po.po_number, vendor_name: 'Apex Electrical Ltd.', project_name: 'Project PO-PRJ', total_amount: 1.11 } });
    });

    it('updates a draft: line items added, removed and modified in po.updated, with the other changes as {from, to}', async () => {
      const po = await draft();
      const [cable, troffer] = po.line_items;
      const before = await eventCount();
      const response = await api.put(`/purchase-orders/${po.id}`, {
        notes: 'Deliver to dock B',
        line_items: [{ id: cable.id, quantity: 110 }, { description: 'Wire nuts', quantity: 10, unit_price: 5 }],
      });
      expect(response.status).toBe(200);
      expect(response.body.line_items.map((i: { description: string; quantity: number }) => [i.description, i.quantity])).toEqual([
        ['12/2 NMD90 cable, 150 m roll', 110],
        ['Wire nuts', 10],
      ]);
      expect(response.body).toMatchObject({ subtotal: 16550, total_amount: 17800 });
      const [event] = await eventsSince(before);
      expect(event!.event_type).toBe('po.updated');
      expect(event!.catalog_data).toMatchObject({ total_amount: 17800, updated_by: tenant.apiKeyId, updated_by_name: 'test key' });
      expect(event!.catalog_data!.changes).toEqual({
        notes: { from: null, to: 'Deliver to dock B' },
        subtotal: { from: 25000, to: 16550 },
        total_amount: { from: 26250, to: 17800 },
        line_items: {
          added: [{ id: expect.any(String), description: 'Wire nuts', quantity: 10, unit_price: 5, total: 50, category: null }],
          removed: [{ id: troffer.id, description: 'LED troffer 2x4', quantity: 40, unit_price: 250, total: 10000, category: null }],
          modified: [{ id: cable.id, description: '12/2 NMD90 cable, 150 m roll', quantity: 110, unit_price: 150, total: 16500, category: 'Materials' }],
        },
      });
      const unchanged = await eventCount();
      expect((await api.put(`/purchase-orders/${po.id}`, { notes: 'Deliver to dock B' })).status).toBe(200);
      expect(await eventCount()).toBe(unchanged);
    });

    it('lists with the filters status, vendor_id, project_id and po_number', async () => {
      const po = await draft({ po_number: `PO-F-${unique()}` });
      const list = async (query: string) => (await api.get(`/purchase-orders?${query}`)).body;
      expect((await list(`po_number=${po.po_number.toLowerCase()}`)).data.map((p: { id: string }) => p.id)).toEqual([po.id]);
      expect((await list(`vendor_id=${vendorId}&status=draft`)).pagination.total).toBeGreaterThan(1);
      expect((await list(`project_id=${unknownId()}`)).pagination.total).toBe(0);
      expect((await list('status=received')).pagination.total).toBe(0);
    });

    it('refuses bad input with 400 naming the field, a taken number with 409, and DELETE with 405; nothing is written', async () => {
      const po = await draft();
      const before = await eventCount();
      const cases: [string, string, Record<string, unknown>, string][] = [
        ['POST', '/purchase-orders', { project_id: projectId }, 'vendor_id'],
        ['POST', '/purchase-orders', { vendor_id: unknownId(), project_id: projectId }, 'vendor_id'],
        ['POST', '/purchase-orders', { vendor_id: vendorId, project_id: projectId, currency: 'XYZ' }, 'currency'],
        ['POST', '/purchase-orders', { vendor_id: vendorId, project_id: projectId, currency: 'cad' }, 'currency'],
        ['POST', '/purchase-orders', { vendor_id: vendorId, project_id: projectId, line_items: [{ description: 'x', quantity: 0, unit_price: 1 }] }, 'line_items[0].quantity'],
        ['POST', '/purchase-orders', { vendor_id: vendorId, project_id: projectId, line_items: [{ description: 'x', quantity: 1 }] }, 'line_items[0].unit_price'],
        ['PUT', `/purchase-orders/${po.id}`, { not_to_exceed_amount: 100 }, 'not_to_exceed_amount'],
        ['PUT', `/purchase-orders/${po.id}`, { line_items: [{ id: unknownId(), quantity: 2 }] }, 'line_items[0].id'],
        ['PUT', `/purchase-orders/${po.id}`, { status: 'approved' }, 'status'],
      ];
      for (const [method, path, body, field] of cases) {
        const response = method === 'POST' ? await api.post(path, body) : await api.put(path, body);
        expect({ field, status: response.status, error: response.body.error?.details.field }).toEqual({ field, status: 400, error: field });
      }
      const taken = await api.post('/purchase-orders', { vendor_id: vendorId, project_id: projectId, po_number: po.po_number.toLowerCase() });
      expect(taken.status).toBe(409);
      expect(taken.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'po_number' } });
      expect((await api.delete(`/purchase-orders/${po.id}`)).status).toBe(405);
      expect(await eventCount()).toBe(before);
    });

    it('keeps vendors and projects that purchase orders name (409)', async () => {
      await draft();
      expect((await api.delete(`/vendors/${vendorId}`)).body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('purchase order') });
      expect((await api.delete(`/projects/${projectId}`)).body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('purchase order') });
    });
  });

  describe('approval and receipt', () => {
    it('goes through submit → two approvers → approved → partially received → received', async () => {
      const po = await draft();
      const before = await eventCount();
      const submitted = await api.post(`/purchase-orders/${po.id}/submit`, {});
      expect(submitted.status).toBe(200);
      const workflowId = purchaseOrderApprovalWorkflowId(po.id);
      expect(submitted.body).toMatchObject({
        status: 'pending_approval',
        submitted_at: expect.any(String),
        approval_workflow: {
          workflow_id: workflowId,
          required_approvers: [
            { id: people.pm, name: 'Sam Chen', role: 'Project Manager', approval_threshold: 10000 },
            { id: people.director, name: 'Dana Ruiz', role: 'Director', approval_threshold: 50000 },
          ],
          approval_deadline: expect.any(String),
          escalated_at: null,
          decisions: [],
        },
      });
      expect((await api.put(`/purchase-orders/${po.id}`, { notes: 'late' })).body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'status', reason: 'is pending_approval' } });
      expect(await searchAttributes(workflowId)).toMatchObject({ CompanyId: tenant.companyId, EventType: 'po.submitted', RecordKey: po.po_number, ApprovalStatus: 'pending' });

      const first = await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: people.pm, notes: 'Within budget' });
      expect(first.status).toBe(200);
      expect(first.body.status).toBe('pending_approval');
      expect(first.body.approval_workflow.decisions).toEqual([{ id: people.pm, name: 'Sam Chen', role: 'Project Manager', decision: 'approved', decided_at: expect.any(String), notes: 'Within budget' }]);
      expect((await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: people.pm, notes: 'Within budget' })).body.approval_workflow.decisions).toHaveLength(1);
      const outsider = await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: people.clerk });
      expect(outsider.status).toBe(409);
      expect(outsider.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'approver_id', reason: 'is not an approver of a role still open' } });
      expect((await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: unknownId() })).body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'approver_id' } });

      const second = await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: people.director, notes: 'OK' });
      expect(second.body).toMatchObject({ status: 'approved', approved_at: expect.any(String) });
      expect(await stack.temporal.workflow.getHandle(workflowId).result()).toEqual({ outcome: 'approved' });
      expect(await searchAttributes(workflowId)).toMatchObject({ ApprovalStatus: 'approved' });
      expect((await api.post(`/purchase-orders/${po.id}/reject`, { approver_id: people.director })).status).toBe(409);

      const [cable, troffer] = po.line_items;
      const partial = await api.post(`/purchase-orders/${po.id}/receive`, {
        received_items: [{ line_item_id: cable.id, quantity_received: 60, condition: 'good' }, { line_item_id: troffer.id, quantity_received: 40, condition: 'damaged', notes: 'Two cracked' }],
        receipt_location: 'Loading dock B',
      });
      expect(partial.status).toBe(200);
      expect(partial.body).toMatchObject({ status: 'partially_received', line_items: [{ quantity_received: 60 }, { quantity_received: 40 }] });
      const over = await api.post(`/purchase-orders/${po.id}/receive`, { received_items: [{ line_item_id: cable.id, quantity_received: 41 }] });
      expect(over.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'received_items[0].quantity_received' } });
      const rest = await api.post(`/purchase-orders/${po.id}/receive`, { received_items: [{ line_item_id: cable.id, quantity_received: 40 }], receipt_notes: 'Complete' });
      expect(rest.body).toMatchObject({ status: 'received', receipts: [{ receipt_location: 'Loading dock B' }, { receipt_notes: 'Complete', received_by: tenant.apiKeyId }] });
      expect((await api.post(`/purchase-orders/${po.id}/receive`, { received_items: [{ line_item_id: cable.id, quantity_received: 1 }] })).status).toBe(409);

      const events = await eventsSince(before);
      expect(events.map((e) => e.event_type)).toEqual(['po.submitted', 'po.approved', 'po.received', 'po.received']);
      expect(events[0]!.catalog_data!.approval_workflow.required_approvers).toHaveLength(2);
      expect(events[1]!.catalog_data).toMatchObject({
        status: 'approved',
        approved_by: people.director,
        approved_by_name: 'Dana Ruiz',
        approval_notes: 'OK',
        approval_workflow: {
          approvers: [
            { id: people.pm, name: 'Sam Chen', role: 'Project Manager', approved_at: expect.any(String), decision: 'approved' },
            { id: people.director, name: 'Dana Ruiz', role: 'Director', approved_at: expect.any(String), decision: 'approved' },
          ],
        },
      });
      expect(events[2]!.catalog_data).toMatchObject({
        status: 'partially_received',
        receipt_location: 'Loading dock B',
        received_items: [
          { line_item_id: cable.id, description: '12/2 NMD90 cable, 150 m roll', quantity_ordered: 100, quantity_received: 60, condition: 'good', notes: null },
          { line_item_id: troffer.id, quantity_ordered: 40, quantity_received: 40, condition: 'damaged', notes: 'Two cracked' },
        ],
      });
      expect(events[3]!.catalog_data).toMatchObject({ status: 'received', received_items: [{ quantity_received: 40 }] });
    });

    it('ends with a rejection: po.rejected with the decisions and the approvers still pending', async () => {
      const po = await draft();
      await api.post(`/purchase-orders/${po.id}/submit`, {});
      const before = await eventCount();
      const rejected = await api.post(`/purchase-orders/${po.id}/reject`, { approver_id: people.director, reason: 'Use the owner-approved supplier' });
      expect(rejected.status).toBe(200);
      expect(rejected.body).toMatchObject({ status: 'rejected', rejected_at: expect.any(String), rejection_reason: 'Use the owner-approved supplier' });
      expect(await stack.temporal.workflow.getHandle(purchaseOrderApprovalWorkflowId(po.id)).result()).toEqual({ outcome: 'rejected' });
      const [event] = await eventsSince(before);
      expect(event!.catalog_data).toMatchObject({
        status: 'rejected',
        rejected_by: people.director,
        rejected_by_name: 'Dana Ruiz',
        rejection_reason: 'Use the owner-approved supplier',
        approval_workflow: {
          approvers: [
            { id: people.director, role: 'Director', rejected_at: expect.any(String), decision: 'rejected' },
            { id: people.pm, role: 'Project Manager', rejected_at: null, decision: 'pending' },
          ],
        },
      });
      expect((await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: people.pm })).body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'status', reason: 'is rejected' } });
      expect((await api.post(`/purchase-orders/${po.id}/receive`, { received_items: [{ line_item_id: po.line_items[0].id, quantity_received: 1 }] })).status).toBe(409);
    });

    it('escalates at the deadline: the top approval role may then give the missing approvals', async () => {
      const po = await draft();
      const workflowId = purchaseOrderApprovalWorkflowId(po.id);
      await api.post(`/purchase-orders/${po.id}/submit`, {});
      // Before the deadline the Vice President is not one of the approvers.
      expect((await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: people.vp })).status).toBe(409);
      const escalated = await waitFor(async () => {
        const current = (await api.get(`/purchase-orders/${po.id}`)).body;
        return current.approval_workflow.escalated_at ? current : null;
      }, 20_000, 'the escalation');
      expect(escalated.approval_workflow).toMatchObject({ escalated_to_role: 'Vice President', decisions: [] });
      expect(await searchAttributes(workflowId)).toMatchObject({ ApprovalStatus: 'escalated' });
      const approved = await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: people.vp, notes: 'Escalated approval' });
      expect(approved.body).toMatchObject({ status: 'approved' });
      expect(approved.body.approval_workflow.decisions.map((d: { id: string; role: string }) => [d.id, d.role])).toEqual([
        [people.vp, 'Project Manager'],
        [people.vp, 'Director'],
      ]);
    });

    it('refuses to submit what cannot be approved (409) and what is not a draft', async () => {
      const empty = await api.create('purchase-orders', { vendor_id: vendorId, project_id: projectId });
      expect((await api.post(`/purchase-orders/${empty.id}/submit`, {})).body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'line_items' } });
      const other = await createTenant(stack.orm, ['admin']);
      const otherApi = restClient(stack, other);
      const vendor = (await otherApi.create('vendors', { vendor_name: 'V' })).id;
      const project = await seedProject(stack, other, 'PO-X');
      const po = await otherApi.create('purchase-orders', { vendor_id: vendor, project_id: project, line_items: [{ description: 'x', quantity: 1, unit_price: 20000 }] });
      const none = await otherApi.post(`/purchase-orders/${po.id}/submit`, {});
      expect(none.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'no approval threshold covers the total' } });
      await otherApi.create('approval-thresholds', { role_name: 'Buyer', max_amount: 50000 });
      const nobody = await otherApi.post(`/purchase-orders/${po.id}/submit`, {});
      expect(nobody.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'no employee holds Buyer' } });
      expect((await otherApi.get(`/purchase-orders/${po.id}`)).body.status).toBe('draft');
      const submitted = await draft();
      await api.post(`/purchase-orders/${submitted.id}/submit`, {});
      expect((await api.post(`/purchase-orders/${submitted.id}/submit`, {})).body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'status' } });
      const reader = await issueTestKey(stack.orm, tenant.companyId, ['purchase-orders:read', 'purchase-orders:write']);
      const forbidden = await fetch(`${stack.baseUrl}/api/v1/purchase-orders/${submitted.id}/approve`, {
        method: 'POST',
        headers: { 'X-API-Key': reader.key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ approver_id: people.pm }),
      });
      expect(forbidden.status).toBe(403);
    });
  });

  describe('attachments', () => {
    let uploader: Tenant;
    beforeAll(async () => {
      uploader = await issueTestKey(stack.orm, tenant.companyId, ['purchase-orders:read', 'purchase-orders:write']);
    });
    const upload = (poId: string, bytes: Buffer, type: string, query = 'filename=quote.pdf') =>
      fetch(`${stack.baseUrl}/api/v1/purchase-orders/${poId}/attachments?${query}`, { method: 'POST', headers: { 'X-API-Key': uploader.key, 'Content-Type': type }, body: bytes });
    const asUploader = (path: string, method = 'GET') => fetch(`${stack.baseUrl}${path}`, { method, headers: { 'X-API-Key': uploader.key } });

    it('uploads a file, lists it, downloads it byte for byte, and removes it (po.attachment.added and .removed)', async () => {
      const po = await draft();
      const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(40_000)]);
      const before = await eventCount();
      const created = await upload(po.id, bytes, 'application/pdf', 'filename=Quote%20n%C2%B0%207.pdf&category=quote&notes=Signed');
      expect(created.status).toBe(201);
      const attachment = (await created.json()) as any;
      const url = `/api/v1/purchase-orders/${po.id}/attachments/${attachment.id}`;
      expect(created.headers.get('location')).toBe(url);
      expect(attachment).toEqual({
        id: expect.any(String),
        purchase_order_id: po.id,
        filename: 'Quote n° 7.pdf',
        file_size: bytes.length,
        file_type: 'application/pdf',
        category: 'quote',
        notes: 'Signed',
        uploaded_by: uploader.apiKeyId,
        uploaded_by_name: 'test key',
        uploaded_at: expect.any(String),
        download_url: `${stack.config.publicBaseUrl}${url}`,
      });
      expect((await api.get(`/purchase-orders/${po.id}/attachments`)).body).toEqual({ data: [attachment] });

      const download = await asUploader(url);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('application/pdf');
      expect(download.headers.get('content-disposition')).toBe(`attachment; filename="Quote n_ 7.pdf"; filename*=UTF-8''Quote%20n%C2%B0%207.pdf`);
      expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);

      const removed = await asUploader(`${url}?reason=Superseded`, 'DELETE');
      expect(removed.status).toBe(204);
      expect((await asUploader(url)).status).toBe(404);
      expect((await api.get(`/purchase-orders/${po.id}/attachments`)).body.data).toEqual([]);
      const events = await eventsSince(before);
      expect(events.map((e) => e.event_type)).toEqual(['po.attachment.added', 'po.attachment.removed']);
      expect(events[0]!.catalog_data!.attachment).toMatchObject({ id: attachment.id, download_url: attachment.download_url, file_size: bytes.length });
      expect(events[1]!.catalog_data!.attachment).toMatchObject({ id: attachment.id, removed_by: uploader.apiKeyId, removed_by_name: 'test key', removal_reason: 'Superseded' });
    });

    it('refuses an oversized file (413), a type off the allow-list or JSON (415), bytes not of the type (400), a missing filename (400), and a wrong method (405, not 415)', async () => {
      const po = await draft();
      const before = await eventCount();
      const tooLarge = await upload(po.id, Buffer.concat([Buffer.from('%PDF-'), randomBytes(65_536)]), 'application/pdf');
      expect(tooLarge.status).toBe(413);
      expect(((await tooLarge.json()) as any).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { field: 'body' } });
      for (const type of ['image/gif', 'application/json', 'application/x-msdownload']) {
        const refused = await upload(po.id, Buffer.from('GIF89a....'), type);
        expect({ type, status: refused.status }).toEqual({ type, status: 415 });
        expect(((await refused.json()) as any).error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', details: { field: 'Content-Type' } });
      }
      const disguised = await upload(po.id, Buffer.from('MZ\x90\x00 not a pdf'), 'application/pdf');
      expect(((await disguised.json()) as any).error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'body' } });
      const noName = await upload(po.id, Buffer.from('%PDF-1.4'), 'application/pdf', 'category=quote');
      expect(((await noName.json()) as any).error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'filename' } });
      const badName = await upload(po.id, Buffer.from('%PDF-1.4'), 'application/pdf', 'filename=..%2Fetc%2Fpasswd');
      expect(((await badName.json()) as any).error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'filename' } });
      expect((await upload(unknownId(), Buffer.from('%PDF-1.4'), 'application/pdf')).status).toBe(404);
      const wrongMethod = await fetch(`${stack.baseUrl}/api/v1/purchase-orders/${po.id}/attachments?filename=x.pdf`, {
        method: 'PUT',
        headers: { 'X-API-Key': uploader.key, 'Content-Type': 'application/pdf' },
        body: Buffer.from('%PDF-1.4'),
      });
      expect({ status: wrongMethod.status, allow: wrongMethod.headers.get('allow') }).toEqual({ status: 405, allow: 'POST, HEAD, GET' });
      const csv = await upload(po.id, Buffer.from('item,qty\ncable,3\n'), 'text/csv; charset=utf-8', 'filename=items.csv');
      expect(csv.status).toBe(201);
      expect((await eventsSince(before)).map((e) => e.event_type)).toEqual(['po.attachment.added']);
    });
  });
});
