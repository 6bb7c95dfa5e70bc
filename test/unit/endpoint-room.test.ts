import { loadConfig } from '../../src/config';
import { type EndpointRoom, hadRoom, isFlowing, roomOf, runsPerEndpoint } from '../../src/delivery/outbox/endpoint-room';

/** The rule of an endpoint's room (src/delivery/outbox/endpoint-room.ts): its numbers, pinned. */
describe("an endpoint's room", () => {
  const defaults = loadConfig({ DATABASE_URL: 'postgres://u:p@localhost:5432/db', TEMPORAL_ADDRESS: 'localhost:7233', ENCRYPTION_KEY: '00'.repeat(32) });
  const maxInFlight = defaults.webhooks.admission.maxInFlight;
  const budgets = runsPerEndpoint(defaults.webhooks.admission);
  const healthy: EndpointRoom = { open: 0, budget: budgets.maxRunsPerEndpoint, deferring: false, in_trouble: false, stalled: false, busy: 0, has_delivered: true };
  const troubled: EndpointRoom = { ...healthy, in_trouble: true, open: 3 };

  it('budgets an endpoint in trouble 12 runs (3 per attempt in flight), and 5 (its breaker’s threshold) until its first delivery', () => {
    expect(budgets).toEqual({ maxRunsPerEndpoint: 12, maxRunsBeforeFirstDelivery: 5 });
    expect(runsPerEndpoint({ maxInFlight: 1, failureThreshold: 5 })).toEqual({ maxRunsPerEndpoint: 5, maxRunsBeforeFirstDelivery: 5 });
  });

  it('gives a healthy endpoint a pipeline of 2 runs per attempt in flight, 1 until its first delivery, less its busy runs', () => {
    expect(roomOf(healthy, maxInFlight)).toBe(8);
    expect(roomOf({ ...healthy, busy: 3 }, maxInFlight)).toBe(5);
    expect(roomOf({ ...healthy, has_delivered: false }, maxInFlight)).toBe(1);
    expect(roomOf({ ...healthy, has_delivered: false, busy: 2 }, maxInFlight)).toBe(0);
  });

  it('gives one in trouble what its budget leaves, and none behind deferred deliveries', () => {
    expect(roomOf(troubled, maxInFlight)).toBe(9);
    expect(roomOf({ ...troubled, open: 14 }, maxInFlight)).toBe(0);
    expect(roomOf({ ...healthy, deferring: true }, maxInFlight)).toBe(0);
    expect([hadRoom(troubled), hadRoom({ ...troubled, open: 12 }), hadRoom(undefined)]).toEqual([true, false, false]);
  });

  it('lets a healthy endpoint that has delivered flow; not one stalled, in trouble, deferring or new', () => {
    expect(isFlowing(healthy)).toBe(true);
    expect([{ stalled: true }, { in_trouble: true }, { deferring: true }, { has_delivered: false }].map((change) => isFlowing({ ...healthy, ...change }))).toEqual([false, false, false, false]);
  });
});
