import { type Delivery, eventDataProblems, SHAPE_A_ENVELOPE, SHAPE_B_ENVELOPE } from '../helpers/event-contract';
import { type EventDeliveries, type OutboxRow, startEventDeliveries } from '../helpers/event-deliveries';
import { seedProject } from '../helpers/fixtures';
import { type Tenant } from '../helpers/stack';
import { verifiedAsReceiver } from '../helpers/webhooks';

const EVENT_NAMES = ['po.approved', 'po.attachment.added', 'po.attachment.removed', 'po.created', 'po.received', 'po.rejected', 'po.submitted', 'po.updated'];

/**
 * Every purchase order event (6.2 po.*), made over REST, delivered over HTTPS to a shape B endpoint (the catalog
 * envelope) and a shape A endpoint (the shape A envelope with the catalog data), checked against
 * schemas/events/b/.
 */
describe('purchase order events on real HTTPS deliveries (shapes A and B)', () => {
  let events: EventDeliveries;
  let writer: Tenant;
  let outbox: OutboxRow[];
  let inA: Delivery[];
  let inB: Delivery[];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    events = await startEventDeliveries();
    const { stack, rest } = events;
    writer = events.restKey;
    const vendor = (await rest('POST', '/vendors', { vendor_name: 'Apex Electrical Ltd.' })).id;
    const project = await seedProject(stack, writer, 'EV-PO');
    await rest('POST', '/approval-thresholds', { role_name: 'Project Manager', max_amount: null });
    ids.pm = (await rest('POST', '/employees', { emp_number: 'PM-1', name: 'Sam Chen', email: 'sam@example.com', employee_type: 'office', role_name: 'Project Manager' })).id;
    const body = { vendor_id: vendor, project_id: project, currency: 'CAD', line_items: [{ description: 'Cable', quantity: 10, unit_price: 189.5, category: 'Materials' }] };

    const approved = await rest('POST', '/purchase-orders', body);
    await rest('PUT', `/purchase-orders/${approved.id}`, { line_items: [{ id: approved.line_items[0].id, quantity: 11 }, { description: 'Troffer', quantity: 2, unit_price: 112.25 }], payment_terms: 'Net 30' });
    await rest('POST', `/purchase-orders/${approved.id}/submit`, {});
    await rest('POST', `/purchase-orders/${approved.id}/approve`, { approver_id: ids.pm, notes: 'OK' });
    await rest('POST', `/purchase-orders/${approved.id}/receive`, { received_items: [{ line_item_id: approved.line_items[0].id, quantity_received: 5 }] });
    const upload = await fetch(`${stack.baseUrl}/api/v1/purchase-orders/${approved.id}/attachments?filename=quote.pdf&category=quote`, {
      method: 'POST',
      headers: { 'X-API-Key': writer.key, 'Content-Type': 'application/pdf' },
      body: Buffer.from('%PDF-1.4 quote'),
    });
    ids.attachment = ((await upload.json()) as { id: string }).id;
    await rest('DELETE', `/purchase-orders/${approved.id}/attachments/${ids.attachment}?reason=Wrong%20file`);
    const rejected = await rest('POST', '/purchase-orders', body);
    await rest('POST', `/purchase-orders/${rejected.id}/submit`, {});
    await rest('POST', `/purchase-orders/${rejected.id}/reject`, { approver_id: ids.pm, reason: 'Too expensive' });
    Object.assign(ids, { approved: approved.id, rejected: rejected.id });

    ({ outbox, inA, inB } = await events.collect((name) => EVENT_NAMES.includes(name)));
  }, 120_000);

  afterAll(() => events?.close());

  it('delivers every po.* event, once, to both endpoints, signed with the endpoint secret', () => {
    expect([...new Set(outbox.map((e) => e.event_type))].sort()).toEqual(EVENT_NAMES);
    for (const [deliveries, endpoint] of [[inA, events.endpointA], [inB, events.endpointB]] as const) {
      expect(deliveries.map((d) => d.event).sort()).toEqual(outbox.map((e) => e.event_type).sort());
      expect(deliveries.filter((d) => !verifiedAsReceiver(endpoint.secret, d.request)).map((d) => d.event)).toEqual([]);
    }
  });

  it('sends shape B endpoints the catalog envelope and shape A endpoints the shape A envelope, both with data exactly as schemas/events/b/', () => {
    for (const [deliveries, envelope] of [[inA, SHAPE_A_ENVELOPE], [inB, SHAPE_B_ENVELOPE]] as const) {
      for (const delivery of deliveries) {
        expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: envelope });
        expect({ event: delivery.event, problems: eventDataProblems('b', delivery.event, delivery.body.data) }).toEqual({ event: delivery.event, problems: [] });
      }
    }
    expect(inA.map((d) => d.body.event_id).sort()).toEqual(outbox.map((e) => e.id).sort());
  });

  it('carries the changes of po.updated, the approval workflow of po.submitted, po.approved and po.rejected, and the attachment', () => {
    const data = (event: string, id: string) => inB.find((d) => d.event === event && d.body.data.id === id)!.body.data;
    expect(data('po.updated', ids.approved!).changes).toMatchObject({
      payment_terms: { from: null, to: 'Net 30' },
      line_items: { added: [{ description: 'Troffer', total: 224.5 }], removed: [], modified: [{ description: 'Cable', quantity: 11, total: 2084.5 }] },
    });
    expect(data('po.submitted', ids.approved!).approval_workflow).toEqual({
      required_approvers: [{ id: ids.pm, name: 'Sam Chen', role: 'Project Manager', approval_threshold: null }],
      approval_deadline: expect.any(String),
    });
    expect(data('po.approved', ids.approved!)).toMatchObject({ status: 'approved', approved_by: ids.pm, approval_workflow: { approvers: [{ id: ids.pm, decision: 'approved' }] } });
    expect(data('po.received', ids.approved!)).toMatchObject({ status: 'partially_received', received_by: writer.apiKeyId, received_items: [{ quantity_ordered: 11, quantity_received: 5, condition: 'good' }] });
    expect(data('po.rejected', ids.rejected!)).toMatchObject({ status: 'rejected', rejection_reason: 'Too expensive', approval_workflow: { approvers: [{ id: ids.pm, decision: 'rejected' }] } });
    expect(data('po.attachment.added', ids.approved!).attachment).toMatchObject({ id: ids.attachment, filename: 'quote.pdf', file_type: 'application/pdf', category: 'quote', download_url: expect.stringContaining(`/attachments/${ids.attachment}`) });
    expect(data('po.attachment.removed', ids.approved!).attachment).toMatchObject({ id: ids.attachment, removal_reason: 'Wrong file', removed_by: writer.apiKeyId });
  });
});
