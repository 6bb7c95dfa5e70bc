import { restClient } from '../helpers/api-client';
import { type Delivery, eventDataProblems, SHAPE_A_ENVELOPE, SHAPE_B_ENVELOPE } from '../helpers/event-contract';
import { type EventDeliveries, type OutboxRow, startEventDeliveries } from '../helpers/event-deliveries';
import { outboxOf } from '../helpers/fixtures';
import { createTenant, type JsonResponse, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { type RegisteredEndpoint, verifiedAsReceiver } from '../helpers/webhooks';

const EVENT_NAMES = [
  'contact.created',
  'contact.deleted',
  'contact.updated',
  'customer.created',
  'customer.deleted',
  'customer.updated',
  'location.created',
  'location.deleted',
  'location.updated',
  'vendor.created',
  'vendor.deleted',
  'vendor.updated',
];
/** The events shape B (webhooks.md 6.2) describes; the others reach shape B endpoints in shape A. */
const SHAPE_B_NAMES = ['vendor.created', 'vendor.updated', 'vendor.deleted'];

/**
 * Every customer, location, contact and vendor event, made through REST and through inbound operations,
 * delivered over HTTPS to a shape A and a shape B endpoint subscribed to `*`, and checked against
 * webhooks.md 6, 6.1, 6.2 and schemas/events/.
 */
describe('customer, location, contact and vendor events on real HTTPS deliveries (shapes A and B)', () => {
  let events: EventDeliveries;
  let stack: TestStack;
  let owner: Tenant; // owns the endpoints; makes no changes, so echo prevention keeps nothing back
  let restKey: Tenant; // makes the REST changes
  let inboundKey: Tenant; // sends the inbound operations
  let endpointA: RegisteredEndpoint;
  let endpointB: RegisteredEndpoint;
  let outbox: OutboxRow[];
  let inA: Delivery[];
  let inB: Delivery[];
  /** Outbox size around updates that change nothing. */
  const noOps: { what: string; before: number; after: number }[] = [];
  /** Inbound responses by operation. */
  const inbound: Record<string, JsonResponse> = {};
  /** Who made each record's changes: record id → API key id. */
  const madeBy = new Map<string, string>();
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    events = await startEventDeliveries();
    ({ stack, owner, restKey, inboundKey, endpointA, endpointB } = events);
    const rest = events.rest;
    const send = async (eventType: string, data: Record<string, unknown>) => {
      const response = await events.send(eventType, data);
      inbound[`${eventType} ${Object.keys(inbound).filter((k) => k.startsWith(eventType)).length}`] = response;
      madeBy.set(response.body.record_id, inboundKey.apiKeyId);
      return response.body;
    };
    const eventCount = async () => (await outboxOf(stack, owner.companyId)).length;
    const noOp = async (what: string, change: () => Promise<unknown>) => {
      const before = await eventCount();
      await change();
      noOps.push({ what, before, after: await eventCount() });
    };

    // Through REST.
    const customer = await rest('POST', '/customers', {
      name: 'Northwind Properties',
      type: 'commercial',
      email: 'facilities@northwind.example.com',
      phone: '+1-416-555-0100',
      billing_address: { address_line_1: '200 Bay St', city: 'Toronto', province: 'ON', postal_code: 'M5J 2J2', country: 'Canada' },
    });
    await rest('PUT', `/customers/${customer.id}`, { phone: '+1-416-555-0101' });
    await noOp('a REST customer update with the current values', () => rest('PUT', `/customers/${customer.id}`, { phone: '+1-416-555-0101', type: 'commercial' }));
    const tower = await rest('POST', '/locations', {
      customer_id: customer.id,
      name: 'Harbourfront Tower',
      address_line_1: '10 Queens Quay W',
      city: 'Toronto',
      province: 'ON',
      postal_code: 'M5J 2R9',
      country: 'Canada',
      coordinates: { latitude: 43.6405, longitude: -79.3781 },
    });
    const lot = await rest('POST', '/locations', { customer_id: customer.id, name: 'Bare Lot' });
    await rest('PUT', `/locations/${tower.id}`, { address_line_2: 'Level 2' });
    const jordan = await rest('POST', '/contacts', {
      customer_id: customer.id,
      location_id: tower.id,
      first_name: 'Jordan',
      last_name: 'Reyes',
      title: 'Facilities Manager',
      email: 'jordan.reyes@northwind.example.com',
      phone: '+1-416-555-0111',
      is_primary: true,
    });
    await rest('PUT', `/contacts/${jordan.id}`, { mobile: '+1-416-555-0199' });
    const apex = await rest('POST', '/vendors', {
      vendor_name: 'Apex Electrical Ltd.',
      type: 'subcontractor',
      trade_specialty: ['Electrical', 'Low voltage'],
      primary_contact_name: 'Priya Nair',
      primary_contact_email: 'priya@apexelectrical.example.com',
      primary_contact_phone: '+1-905-555-0123',
      address: '55 Industrial Rd',
      city: 'Mississauga',
      state: 'Ontario',
      zip_code: 'L5T 1A1',
      country: 'Canada',
      rating: 4.5,
      regions: ['Toronto', 'Peel'],
      insurance_expiry_date: '2026-12-31',
      compliance_expiry_date: '2027-03-31',
      certifications: ['ESA Licensed'],
    });
    await rest('PUT', `/vendors/${apex.id}`, { rating: 4.8, regions: ['Peel', 'Hamilton'], notes: 'Preferred for towers', type: 'subcontractor' });
    await noOp('a REST vendor update with the current values in other forms', () => rest('PUT', `/vendors/${apex.id}`, { rating: 4.8, state: 'ontario', trade_specialty: 'Electrical, Low voltage' }));
    await rest('DELETE', `/contacts/${jordan.id}`);
    await rest('DELETE', `/locations/${lot.id}`);
    await rest('DELETE', `/vendors/${apex.id}`);
    // Deletes Harbourfront Tower with it.
    await rest('DELETE', `/customers/${customer.id}`);
    for (const id of [customer.id, tower.id, lot.id, jordan.id, apex.id]) madeBy.set(id, restKey.apiKeyId);
    Object.assign(ids, { customer: customer.id, tower: tower.id, lot: lot.id, jordan: jordan.id, apex: apex.id });

    // Through inbound operations.
    ids.harbour = (await send('customer.created', { name: 'Harbour Holdings', type: 'commercial', email: 'info@harbour.example' })).record_id;
    await send('customer.updated', { customer_name: 'HARBOUR holdings', name: 'Harbour Group', phone: '+1-902-555-0100' });
    await noOp('an inbound customer update with the current values', () => send('customer.updated', { customer_name: 'harbour group', phone: '+1-902-555-0100' }));
    ids.pier = (await send('location.created', { customer_name: 'Harbour Group', name: 'Pier 21', city: 'Halifax', province: 'NS' })).record_id;
    await send('location.updated', { customer_name: 'harbour group', location_name: 'PIER 21', postal_code: 'B3H 4P7' });
    ids.sam = (await send('contact.created', { customer_name: 'Harbour Group', first_name: 'Sam', last_name: 'Doucet', title: 'Owner Rep', location_name: 'pier 21' })).record_id;
    await send('contact.updated', { customer_name: 'Harbour Group', first_name: 'sam', last_name: 'doucet', phone: '+1-902-555-0111' });
    ids.maple = (
      await send('vendor.created', {
        vendor_name: 'Maple Masonry',
        type: 'supplier',
        trade_specialty: 'Masonry, Stone',
        address: '9 Quarry Rd, Unit 2, Halifax, Nova Scotia B3K 5M7, Canada',
        rating: 3,
        regions: ['Halifax'],
      })
    ).record_id;
    await send('vendor.updated', { vendor_name: 'MAPLE masonry', rating: 3.5, regions: ['Halifax', 'Dartmouth'], trade_specialty: ['Masonry'] });
    await send('contact.deleted', { customer_name: 'Harbour Group', first_name: 'Sam', last_name: 'Doucet' });
    await send('location.deleted', { customer_name: 'Harbour Group', location_name: 'Pier 21' });
    await send('vendor.deleted', { vendor_name: 'Maple Masonry' });
    await send('customer.deleted', { customer_name: 'Harbour Group' });

    ({ outbox, inA, inB } = await events.collect());
  });

  afterAll(() => events?.close());

  const byEventId = (deliveries: Delivery[], eventId: string) => deliveries.find((d) => (d.body.event_id ?? null) === eventId);
  /** The shape A deliveries of an event about a record. */
  const aboutA = (event: string, recordId: string) => inA.filter((d) => d.event === event && d.body.data.id === recordId);
  const aboutB = (event: string, recordId: string) => inB.filter((d) => d.event === event && d.body.data.id === recordId);

  it('delivers every event of these records, once, to both endpoints', () => {
    expect([...new Set(outbox.map((e) => e.event_type))].sort()).toEqual(EVENT_NAMES);
    expect([...new Set(inA.map((d) => d.event))].sort()).toEqual(EVENT_NAMES);
    expect([...new Set(inB.map((d) => d.event))].sort()).toEqual(EVENT_NAMES);
    expect(inA).toHaveLength(outbox.length);
    expect(inB).toHaveLength(outbox.length);
    expect(new Set(inA.map((d) => d.request.headers['x-webhook-id'])).size).toBe(outbox.length);
    expect(inA.map((d) => d.body.event_id).sort()).toEqual(outbox.map((e) => e.id).sort());
  });

  it('signs every delivery with its endpoint secret, as a receiver verifies it', () => {
    expect(inA.filter((d) => !verifiedAsReceiver(endpointA.secret, d.request)).map((d) => d.event)).toEqual([]);
    expect(inB.filter((d) => !verifiedAsReceiver(endpointB.secret, d.request)).map((d) => d.event)).toEqual([]);
    expect(verifiedAsReceiver(endpointB.secret, inA[0]!.request)).toBe(false);
  });

  it('sends shape A envelopes: event_id of the outbox event, event_type as X-Webhook-Event, timestamp, company_id, data', () => {
    for (const delivery of inA) {
      const event = outbox.find((e) => e.id === delivery.body.event_id);
      expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: SHAPE_A_ENVELOPE });
      expect(delivery.body).toEqual({
        event_id: event!.id,
        event_type: delivery.event,
        timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        company_id: owner.companyId,
        data: event!.data,
      });
      expect(delivery.event).toBe(event!.event_type);
    }
  });

  it('sends shape A data with exactly the keys of schemas/events/a/<event>.json, conforming to it', () => {
    const problems = Object.fromEntries(inA.map((d) => [`${d.event} ${d.body.event_id}`, eventDataProblems('a', d.event, d.body.data)]).filter(([, p]) => p.length));
    expect(problems).toEqual({});
  });

  it('sends vendor events to shape B in the shape B envelope (event, timestamp, data), data exactly as schemas/events/b/<event>.json', () => {
    const vendorDeliveries = inB.filter((d) => SHAPE_B_NAMES.includes(d.event));
    expect(vendorDeliveries.length).toBe(outbox.filter((e) => SHAPE_B_NAMES.includes(e.event_type)).length);
    for (const delivery of vendorDeliveries) {
      expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: SHAPE_B_ENVELOPE });
      expect(delivery.body.event).toBe(delivery.event);
      expect(delivery.body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect({ event: delivery.event, problems: eventDataProblems('b', delivery.event, delivery.body.data) }).toEqual({ event: delivery.event, problems: [] });
      expect(outbox.find((e) => e.catalog_data?.id === delivery.body.data.id && e.event_type === delivery.event)).toBeDefined();
    }
  });

  it('sends customer, location and contact events to shape B in the shape A envelope, with shape A data', () => {
    const others = inB.filter((d) => !SHAPE_B_NAMES.includes(d.event));
    expect(others.length).toBe(outbox.filter((e) => !SHAPE_B_NAMES.includes(e.event_type)).length);
    for (const delivery of others) {
      expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: SHAPE_A_ENVELOPE });
      expect(delivery.body).toEqual({ ...byEventId(inA, delivery.body.event_id)!.body, timestamp: expect.any(String) });
      expect({ event: delivery.event, problems: eventDataProblems('a', delivery.event, delivery.body.data) }).toEqual({ event: delivery.event, problems: [] });
    }
  });

  it('describes vendors in each shape: trade_specialty one string in A, a list in B; regions only in B', () => {
    const [a] = aboutA('vendor.created', ids.apex!);
    const [b] = aboutB('vendor.created', ids.apex!);
    expect(a!.body.data).toEqual({
      id: ids.apex,
      vendor_name: 'Apex Electrical Ltd.',
      type: 'subcontractor',
      trade_specialty: 'Electrical, Low voltage',
      primary_contact_name: 'Priya Nair',
      primary_contact_email: 'priya@apexelectrical.example.com',
      primary_contact_phone: '+1-905-555-0123',
      address: { address_line_1: '55 Industrial Rd', city: 'Mississauga', province: 'ON', postal_code: 'L5T 1A1', country: 'Canada' },
      rating: 4.5,
      insurance_expiry_date: '2026-12-31',
      compliance_expiry_date: '2027-03-31',
      certifications: ['ESA Licensed'],
      created_at: expect.any(String),
      created_by: restKey.apiKeyId,
    });
    expect(b!.body.data).toEqual({
      id: ids.apex,
      vendor_name: 'Apex Electrical Ltd.',
      type: 'subcontractor',
      trade_specialty: ['Electrical', 'Low voltage'],
      primary_contact_name: 'Priya Nair',
      primary_contact_email: 'priya@apexelectrical.example.com',
      primary_contact_phone: '+1-905-555-0123',
      rating: 4.5,
      insurance_expiry_date: '2026-12-31',
      compliance_expiry_date: '2027-03-31',
      regions: ['Toronto', 'Peel'],
    });
    // Inbound input forms arrive normalised.
    expect(aboutB('vendor.created', ids.maple!)[0]!.body.data.trade_specialty).toEqual(['Masonry', 'Stone']);
    expect(aboutA('vendor.created', ids.maple!)[0]!.body.data.address).toEqual({ address_line_1: '9 Quarry Rd', city: 'Halifax', province: 'NS', postal_code: 'B3K 5M7', country: 'Canada' });
  });

  it('puts only the fields that changed in vendor.updated changes: {old, new} in A, {from, to} in B, regions as {added, removed}', () => {
    const restA = aboutA('vendor.updated', ids.apex!);
    const restB = aboutB('vendor.updated', ids.apex!);
    expect(restA).toHaveLength(1);
    expect(restB).toHaveLength(1);
    expect(restA[0]!.body.data.changes).toEqual({
      rating: { old: 4.5, new: 4.8 },
      regions: { added: ['Hamilton'], removed: ['Toronto'] },
      notes: { old: null, new: 'Preferred for towers' },
    });
    expect(restB[0]!.body.data.changes).toEqual({
      rating: { from: 4.5, to: 4.8 },
      regions: { added: ['Hamilton'], removed: ['Toronto'] },
      notes: { from: null, to: 'Preferred for towers' },
    });
    expect(restA[0]!.body.data).toMatchObject({ rating: 4.8, updated_by: restKey.apiKeyId });
    expect(restB[0]!.body.data).toMatchObject({ rating: 4.8, regions: ['Peel', 'Hamilton'] });

    const [inboundA] = aboutA('vendor.updated', ids.maple!);
    const [inboundB] = aboutB('vendor.updated', ids.maple!);
    expect(inboundA!.body.data.changes).toEqual({
      rating: { old: 3, new: 3.5 },
      regions: { added: ['Dartmouth'], removed: [] },
      trade_specialty: { old: ['Masonry', 'Stone'], new: ['Masonry'] },
    });
    expect(inboundB!.body.data.changes).toEqual({
      rating: { from: 3, to: 3.5 },
      regions: { added: ['Dartmouth'], removed: [] },
      trade_specialty: { from: ['Masonry', 'Stone'], to: ['Masonry'] },
    });
  });

  it('emits no event for an update that changes nothing', () => {
    expect(noOps).toHaveLength(3);
    for (const { what, before, after } of noOps) expect({ what, events: after - before }).toEqual({ what, events: 0 });
    expect(inA.filter((d) => d.event === 'vendor.updated')).toHaveLength(2);
    expect(inA.filter((d) => d.event === 'customer.updated')).toHaveLength(2);
  });

  it('carries coordinates in location.created as an object, with null members when unknown', () => {
    expect(aboutA('location.created', ids.tower!)[0]!.body.data.coordinates).toEqual({ latitude: 43.6405, longitude: -79.3781 });
    expect(aboutA('location.created', ids.lot!)[0]!.body.data.coordinates).toEqual({ latitude: null, longitude: null });
    expect(aboutB('location.created', ids.pier!)[0]!.body.data.coordinates).toEqual({ latitude: null, longitude: null });
    expect(aboutA('location.created', ids.tower!)[0]!.body.data.customer).toEqual({ id: ids.customer, name: 'Northwind Properties' });
  });

  it('carries the current record in customer.updated and location.updated', () => {
    expect(aboutA('customer.updated', ids.harbour!)[0]!.body.data).toMatchObject({ name: 'Harbour Group', phone: '+1-902-555-0100', email: 'info@harbour.example', type: 'commercial' });
    expect(aboutA('location.updated', ids.pier!)[0]!.body.data).toMatchObject({ name: 'Pier 21', city: 'Halifax', postal_code: 'B3H 4P7', customer: { name: 'Harbour Group' } });
    expect(aboutA('contact.updated', ids.sam!)[0]!.body.data).toMatchObject({ customer_name: 'Harbour Group', title: 'Owner Rep', phone: '+1-902-555-0111' });
    expect(aboutA('location.updated', ids.tower!)[0]!.body.data.address_line_2).toBe('Level 2');
  });

  it('names the API key that made each change in created_by, updated_by and deleted_by', () => {
    const wrong = inA
      .map((d) => {
        const by = d.body.data.created_by ?? d.body.data.updated_by ?? d.body.data.deleted_by;
        return { event: d.event, record: d.body.data.id, by, expected: madeBy.get(d.body.data.id) };
      })
      .filter((x) => x.by !== x.expected);
    expect(wrong).toEqual([]);
    const deletions = inA.filter((d) => d.event.endsWith('.deleted'));
    // Four deletes through each channel, and the location the REST customer delete took with it.
    expect(deletions).toHaveLength(9);
    expect(deletions.every((d) => typeof d.body.data.deleted_by === 'string' && typeof d.body.data.deleted_at === 'string')).toBe(true);
    expect(aboutA('location.deleted', ids.tower!)[0]!.body.data.deleted_by).toBe(restKey.apiKeyId);
    expect(aboutB('vendor.deleted', ids.maple!)[0]!.body.data).toEqual({ id: ids.maple, vendor_name: 'Maple Masonry', deleted_at: expect.any(String), deleted_by: inboundKey.apiKeyId });
  });

  it('delivers each inbound change with the event_id its response gave', () => {
    const mismatched = Object.entries(inbound)
      .filter(([operation]) => !operation.startsWith('customer.updated 1'))
      .map(([operation, response]) => ({ operation, delivered: byEventId(inA, response.body.event_id)?.event ?? null }))
      .filter(({ operation, delivered }) => operation.split(' ')[0] !== delivered);
    expect(mismatched).toEqual([]);
    expect(Object.keys(inbound)).toHaveLength(13);
  });
});

describe('updates that change nothing', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  async function eventsAround(change: (api: ReturnType<typeof restClient>, vendorId: string) => Promise<unknown>) {
    const tenant = await createTenant(stack.orm);
    const api = restClient(stack, tenant);
    const vendor = await api.create('vendors', { vendor_name: 'Steady Supply', regions: ['North', 'South'], custom_fields: { crew: 4, union: true } });
    const before = (await outboxOf(stack, tenant.companyId)).length;
    await change(api, vendor.id);
    return (await outboxOf(stack, tenant.companyId)).slice(before).map((e) => ({ type: e.event_type, changes: e.data.changes }));
  }

  it('emits no vendor.updated for the same values given again', async () => {
    expect(await eventsAround((api, id) => api.put(`/vendors/${id}`, { regions: ['North', 'South'], custom_fields: { crew: 4, union: true } }))).toEqual([]);
  });

  it('emits no vendor.updated for the same custom_fields in another key order', async () => {
    expect(await eventsAround((api, id) => api.put(`/vendors/${id}`, { custom_fields: { union: true, crew: 4 } }))).toEqual([]);
  });

  it('emits no vendor.updated when only the order of regions changes (regions are a set)', async () => {
    expect(await eventsAround((api, id) => api.put(`/vendors/${id}`, { regions: ['South', 'North'] }))).toEqual([]);
  });
});
