import { WORK_ORDER_STATUSES, type WorkOrderStatus } from '../../src/domain/work/work-order.entity';
import { TRANSITIONS } from '../../src/domain/work/work-order-status';
import { type RestClient, restClient } from '../helpers/api-client';
import { outboxOf, seedProject } from '../helpers/fixtures';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';

/** The documented lifecycle (docs/decisions.md), written out so a change to TRANSITIONS must change this too. */
const LEGAL: Record<WorkOrderStatus, WorkOrderStatus[]> = {
  open: ['scheduled', 'in_progress', 'on_hold', 'cancelled'],
  scheduled: ['open', 'in_progress', 'on_hold', 'cancelled'],
  in_progress: ['on_hold', 'complete', 'cancelled'],
  on_hold: ['open', 'scheduled', 'in_progress', 'cancelled'],
  complete: ['in_progress', 'closed'],
  closed: [],
  cancelled: ['open'],
};

/** How to bring a new (open) work order to each status through legal steps. */
const PATH: Record<WorkOrderStatus, WorkOrderStatus[]> = {
  open: [],
  scheduled: ['scheduled'],
  in_progress: ['in_progress'],
  on_hold: ['on_hold'],
  complete: ['in_progress', 'complete'],
  closed: ['in_progress', 'complete', 'closed'],
  cancelled: ['cancelled'],
};

/** The shape B event a move into a status fires besides work_order.status_changed. */
const SHAPE_B_EVENT: Partial<Record<WorkOrderStatus, string>> = { in_progress: 'workorder.started', complete: 'workorder.completed', cancelled: 'workorder.cancelled' };

const pairs = WORK_ORDER_STATUSES.flatMap((from) => WORK_ORDER_STATUSES.filter((to) => to !== from).map((to) => [from, to] as const));

describe('work order status transitions (PUT /work-orders/{id} with status)', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let api: RestClient;
  let projectId: string;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    tenant = await createTenant(stack.orm, ['admin']);
    api = restClient(stack, tenant);
    projectId = await seedProject(stack, tenant);
  });
  afterAll(() => stack.close());

  async function workOrderIn(status: WorkOrderStatus) {
    const created = await api.create('work-orders', { title: `To ${status}`, project_id: projectId });
    for (const step of PATH[status]) {
      const moved = await api.put(`/work-orders/${created.id}`, { status: step });
      if (moved.status !== 200) throw new Error(`${created.status} → ${step}: ${moved.status} ${JSON.stringify(moved.body)}`);
    }
    return (await api.get(`/work-orders/${created.id}`)).body;
  }

  it('documents exactly the transitions the service applies', () => {
    expect(TRANSITIONS).toEqual(LEGAL);
  });

  it.each(pairs.filter(([from, to]) => LEGAL[from].includes(to)))('%s → %s is allowed: 200, work_order.status_changed and the shape B event of the new status', async (from, to) => {
    const workOrder = await workOrderIn(from);
    expect(workOrder.status).toBe(from);
    const before = (await outboxOf(stack, tenant.companyId)).length;
    const response = await api.put(`/work-orders/${workOrder.id}`, { status: to });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe(to);
    const events = (await outboxOf(stack, tenant.companyId)).slice(before);
    expect(events.map((e) => e.event_type)).toEqual(['work_order.updated', 'work_order.status_changed', ...(SHAPE_B_EVENT[to] ? [SHAPE_B_EVENT[to]] : [])]);
    expect(events[1]!.data).toMatchObject({ id: workOrder.id, previous_status: from, new_status: to });
    if (SHAPE_B_EVENT[to]) expect(events[2]!.catalog_data).toMatchObject({ id: workOrder.id, previousStatus: from, status: to });
  });

  it.each(pairs.filter(([from, to]) => !LEGAL[from].includes(to)))('%s → %s is refused: 409 naming the current status, nothing changes', async (from, to) => {
    const workOrder = await workOrderIn(from);
    const before = (await outboxOf(stack, tenant.companyId)).length;
    const response = await api.put(`/work-orders/${workOrder.id}`, { status: to, priority: 'urgent' });
    expect(response.status).toBe(409);
    expect(response.body.error).toEqual({
      code: 'CONFLICT',
      message: expect.stringContaining(`is ${from}`),
      details: { field: from === 'closed' ? null : 'status', reason: `current status ${from}` },
    });
    expect((await api.get(`/work-orders/${workOrder.id}`)).body).toEqual(workOrder);
    expect((await outboxOf(stack, tenant.companyId)).length).toBe(before);
  });

  it.each(WORK_ORDER_STATUSES.filter((s) => s !== 'closed'))('%s → %s (the same status) is no change: 200 and no event', async (status) => {
    const workOrder = await workOrderIn(status);
    const before = (await outboxOf(stack, tenant.companyId)).length;
    const response = await api.put(`/work-orders/${workOrder.id}`, { status });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(workOrder);
    expect((await outboxOf(stack, tenant.companyId)).length).toBe(before);
  });

  it('refuses any change to a closed work order, even one without a status', async () => {
    const workOrder = await workOrderIn('closed');
    const response = await api.put(`/work-orders/${workOrder.id}`, { priority: 'low' });
    expect(response.status).toBe(409);
    expect(response.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'current status closed' } });
  });

  it('may create work orders in open, scheduled, in_progress and on_hold only', async () => {
    for (const status of WORK_ORDER_STATUSES) {
      const response = await api.post('/work-orders', { title: `Born ${status}`, project_id: projectId, status });
      expect({ status, code: response.status }).toEqual({ status, code: ['open', 'scheduled', 'in_progress', 'on_hold'].includes(status) ? 201 : 400 });
    }
  });
});
