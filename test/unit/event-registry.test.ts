import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { isSubscribed, normaliseSubscriptions } from '../../src/delivery/endpoints/subscriptions';
import { deliveryBody } from '../../src/delivery/delivery-body';
import { endpointAbout, EVENT_REGISTRY, OPERATIONAL_EVENT_TYPES, SUBSCRIBABLE_NAMES } from '../../src/events/registry';
import { loadSchemaFiles } from '../../src/schemas/schema-files';

const files = loadSchemaFiles();
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
addFormats(ajv);
for (const { schema } of files) ajv.addSchema(schema);
const eventSchemas = files.filter((f) => f.id.startsWith('events/a/') || f.id.startsWith('events/b/'));

/** The 37 names of webhooks.md 6.1 and the 34 of 6.2. */
const SHAPE_A = [
  'work_order.created', 'work_order.updated', 'work_order.status_changed', 'work_order.scheduled', 'work_order.deleted',
  'project.created', 'project.updated', 'project.deleted', 'project.closed',
  'report.daily_submitted', 'report.completion_submitted', 'report.completion_approved',
  'employee.created', 'employee.updated', 'employee.deleted', 'vendor.created', 'vendor.updated', 'vendor.deleted',
  'time_off.created', 'time_off.updated', 'time_off.deleted', 'customer.created', 'customer.updated', 'customer.deleted',
  'location.created', 'location.updated', 'location.deleted', 'contact.created', 'contact.updated', 'contact.deleted',
  'timesheet.created', 'timesheet.updated', 'timesheet.submitted', 'timesheet.locked', 'timesheet.unlocked', 'timesheet.processed',
  'timesheets.processed.batch',
];
const SHAPE_B = [
  'workorder.created', 'workorder.updated', 'workorder.deleted', 'workorder.started', 'workorder.completed', 'workorder.cancelled',
  'project.created', 'project.updated', 'project.deleted', 'project.closed',
  'employee.created', 'employee.updated', 'employee.deleted', 'employee.assigned',
  'vendor.created', 'vendor.updated', 'vendor.deleted', 'time_off.created', 'time_off.updated', 'time_off.deleted',
  'timesheet.created', 'timesheet.updated', 'timesheet.deleted', 'report.generated', 'report.scheduled', 'report.failed',
  'po.created', 'po.updated', 'po.submitted', 'po.approved', 'po.rejected', 'po.received', 'po.attachment.added', 'po.attachment.removed',
];

/** The service's own operational events (README "Operational events"), in shape A. */
const OPERATIONAL = ['endpoint.disabled', 'endpoint.circuit_opened', 'endpoint.circuit_closed', 'delivery.failed', 'delivery.recovered'];

describe('event registry', () => {
  it('holds every one of the 71 names of webhooks.md 6.1 and 6.2 and the 5 operational events, each with a data schema', () => {
    expect(SHAPE_A.length + SHAPE_B.length).toBe(71);
    expect([...OPERATIONAL_EVENT_TYPES].sort()).toEqual([...OPERATIONAL].sort());
    const shapeA = [...SHAPE_A, ...OPERATIONAL];
    expect(EVENT_REGISTRY.map((e) => e.shapeA).filter(Boolean).sort()).toEqual([...shapeA].sort());
    expect(EVENT_REGISTRY.map((e) => e.shapeB).filter(Boolean).sort()).toEqual([...SHAPE_B].sort());
    expect(eventSchemas.map((f) => f.id).sort()).toEqual([...shapeA.map((n) => `events/a/${n}.json`), ...SHAPE_B.map((n) => `events/b/${n}.json`)].sort());
  });

  it('lets an endpoint subscribe to the operational events by name or category, each about one endpoint', () => {
    expect(normaliseSubscriptions(['endpoint.*', 'delivery.failed'])).toEqual(['endpoint.*', 'delivery.failed']);
    expect(isSubscribed(normaliseSubscriptions(['endpoint.*']), 'endpoint.circuit_opened')).toBe(true);
    expect(isSubscribed(normaliseSubscriptions(['delivery.*']), 'delivery.recovered')).toBe(true);
    // They name the company's other endpoints: not part of "everything".
    expect(isSubscribed(['*'], 'endpoint.disabled')).toBe(false);
    expect(isSubscribed(['*', 'delivery.failed'], 'delivery.failed')).toBe(true);
    expect(endpointAbout('delivery.failed', { endpoint: { id: 'e1' } })).toBe('e1');
    expect(endpointAbout('vendor.created', { endpoint: { id: 'e1' } })).toBeNull();
  });

  it.each(eventSchemas.map((f) => [f.id, f.schema] as const))('%s requires exactly its keys and its example validates', (id, schema) => {
    expect(schema.additionalProperties).toBe(false);
    expect([...(schema.required as string[])].sort()).toEqual(Object.keys(schema.properties as object).sort());
    const validate = ajv.getSchema(id)!;
    const examples = schema.examples as unknown[];
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) expect(validate(example) ? [] : validate.errors).toEqual([]);
    expect(validate({ ...(examples[0] as object), unexpected: true })).toBe(false);
  });

  it('pairs the shapes: work orders are workorder.* in the catalog, other names match', () => {
    const pairs = EVENT_REGISTRY.filter((e) => e.shapeA && e.shapeB).map((e) => [e.shapeA, e.shapeB]);
    expect(pairs).toContainEqual(['work_order.created', 'workorder.created']);
    expect(pairs).toContainEqual(['vendor.updated', 'vendor.updated']);
    expect(EVENT_REGISTRY.find((e) => e.key === 'po.approved')).toMatchObject({ shapeA: null, shapeB: 'po.approved', category: 'po' });
    expect(EVENT_REGISTRY.find((e) => e.key === 'workorder.started')).toMatchObject({ shapeA: null, category: 'work_order' });
  });

  it('lets an endpoint subscribe to every name of either shape, and to categories of either spelling', () => {
    expect(SUBSCRIBABLE_NAMES.size).toBe(new Set([...SHAPE_A, ...SHAPE_B, ...OPERATIONAL]).size);
    for (const name of [...SHAPE_A, ...SHAPE_B]) expect(normaliseSubscriptions([name])).toHaveLength(1);
    const subscriptions = normaliseSubscriptions(['workorder.*', 'po.*', 'timesheet.deleted', 'employee.assigned', 'report.*']);
    for (const key of ['work_order.status_changed', 'workorder.cancelled', 'po.attachment.removed', 'timesheet.deleted', 'employee.assigned', 'report.generated', 'report.daily_submitted']) {
      expect(isSubscribed(subscriptions, key)).toBe(true);
    }
    expect(isSubscribed(subscriptions, 'timesheet.created')).toBe(false);
    expect(() => normaliseSubscriptions(['purchase_order.created'])).toThrow();
  });

  const event = (eventType: string, data: object | null, catalogData: object | null) => ({
    id: '0193f4a0-0000-7000-8000-000000000001',
    companyId: '0193f4a0-0000-7000-8000-000000000002',
    eventType,
    occurredAt: new Date('2026-11-22T10:00:00Z'),
    data: data as Record<string, unknown> | null,
    catalogData: catalogData as Record<string, unknown> | null,
  });

  it('delivers each event in the envelope of the endpoint shape when that shape describes it, else in shape A', () => {
    const vendor = event('vendor.created', { a: 1 }, { b: 1 });
    expect(JSON.parse(deliveryBody(vendor, 'A').payload)).toMatchObject({ event_type: 'vendor.created', data: { a: 1 } });
    expect(JSON.parse(deliveryBody(vendor, 'B').payload)).toEqual({ event: 'vendor.created', timestamp: '2026-11-22T10:00:00.000Z', data: { b: 1 } });
    expect(deliveryBody(event('work_order.created', {}, {}), 'B').eventType).toBe('workorder.created');
    const customer = deliveryBody(event('customer.created', { a: 1 }, null), 'B');
    expect(JSON.parse(customer.payload)).toMatchObject({ event_type: 'customer.created', data: { a: 1 } });
    const po = deliveryBody(event('po.created', null, { b: 1 }), 'A');
    expect(po.eventType).toBe('po.created');
    expect(JSON.parse(po.payload)).toMatchObject({ event_id: expect.any(String), event_type: 'po.created', data: { b: 1 } });
  });
});
