import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { statusChanged, workOrderCreatedEvents, workOrderDeletedEvent, workOrderUpdatedEvents } from './work-order-events';
import type { WorkOrderCreate, WorkOrder as WorkOrderRecord, WorkOrderUpdate } from '../../generated/schemas';
import { parseTimestamp } from '../../schemas/formats';
import { Employee } from '../people/employee.entity';
import { RecordService } from '../records/record-service';
import type { FieldMapping } from '../records/wire-mapping';
import { Project } from './project.entity';
import { WorkOrder, type WorkOrderStatus } from './work-order.entity';
import { assertTransition, CREATABLE_STATUSES, INCOMPLETE_STATUSES } from './work-order-status';
import type { Actor } from '../accounts/actor';

/** Next per-company number (WO-000001, …), taken under the company row's lock; numbers a sender chose are skipped. */
async function nextWorkOrderNumber(em: EntityManager, companyId: string): Promise<string> {
  for (let tries = 0; tries < 1000; tries++) {
    const [row] = await em.execute<{ work_order_sequence: number }[]>(
      'update companies set work_order_sequence = work_order_sequence + 1 where id = ? returning work_order_sequence',
      [companyId],
    );
    const number = `WO-${String(row!.work_order_sequence).padStart(6, '0')}`;
    if ((await em.count(WorkOrder, { company: companyId, workOrderNumber: number })) === 0) return number;
  }
  throw new Error(`No free work order number for company ${companyId}`);
}

/** `scheduled_start` (a UTC timestamp) ↔ the start date and time; the same for the end. */
function timestampField(field: string, date: 'startDate' | 'endDate', time: 'startTime' | 'endTime'): FieldMapping<WorkOrder> {
  return {
    read: (view) => {
      const { [date]: day, [time]: clock } = view as unknown as WorkOrder;
      return day ? new Date(`${day}T${clock ?? '00:00'}:00.000Z`).toISOString() : null;
    },
    write: (workOrder, value) => {
      const instant = value === null ? null : parseTimestamp(value as string)!;
      // Work orders are scheduled to the minute; dropping seconds silently would change what was sent.
      if (instant && instant.getTime() % 60_000 !== 0) throw ApiError.invalid(field, 'must be on a whole minute (seconds 00)');
      workOrder[date] = instant ? instant.toISOString().slice(0, 10) : null;
      workOrder[time] = instant ? instant.toISOString().slice(11, 16) : null;
    },
  };
}

/** The crew, in order; every id must be an employee of the company. */
const crewField: FieldMapping<WorkOrder> = {
  read: (view) => {
    const crew = (view as unknown as { assignees: unknown }).assignees;
    return Array.isArray(crew) ? crew : (crew as WorkOrder['assignees']).getItems().map((e) => e.id);
  },
  async write(workOrder, value, { em, companyId }) {
    const ids = value as string[];
    const found = ids.length ? await em.find(Employee, { id: { $in: ids }, company: companyId }) : [];
    const unknown = ids.filter((id) => !found.some((e) => e.id === id));
    if (unknown.length) throw ApiError.invalid('assigned_to', `contains ids that match no employee of your company: ${unknown.join(', ')}`);
    workOrder.assignees.set(ids.map((id) => found.find((e) => e.id === id)!));
  },
};

/** Only the members given change. */
const schedulerNotesField: FieldMapping<WorkOrder> = {
  read: (view) => (view as unknown as WorkOrder).schedulerNotes,
  write: (workOrder, value) => {
    workOrder.schedulerNotes = { ...workOrder.schedulerNotes, ...(value as object) };
  },
};

/** New work orders whose sender gave a status (it stays then, start date or not). */
const statusGiven = new WeakSet<WorkOrder>();
const statusField: FieldMapping<WorkOrder> = {
  read: (view) => (view as unknown as WorkOrder).status,
  write: (workOrder, value) => {
    workOrder.status = value as WorkOrderStatus;
    statusGiven.add(workOrder);
  },
};

/** The date (and time) a range starts or ends, comparable as text. */
const moment = (date: string | null, time: string | null) => (date ? `${date}T${time ?? '00:00'}` : null);

/**
 * Work orders (rest-api.md 2.2, webhooks.md 2.2). Statuses move only along the transitions of
 * work-order-status.ts; a closed work order does not change any more.
 */
export const workOrders = new RecordService<WorkOrder, WorkOrderRecord, WorkOrderCreate, WorkOrderUpdate>({
  entity: WorkOrder,
  label: 'Work order',
  wire: {
    work_order_number: 'workOrderNumber',
    title: 'title',
    project_id: { relation: 'project', target: Project, label: 'a project' },
    status: statusField,
    priority: 'priority',
    scheduled_start: timestampField('scheduled_start', 'startDate', 'startTime'),
    scheduled_end: timestampField('scheduled_end', 'endDate', 'endTime'),
    start_date: 'startDate',
    end_date: 'endDate',
    start_time: 'startTime',
    end_time: 'endTime',
    expected_start_date: 'expectedStartDate',
    expected_end_date: 'expectedEndDate',
    expected_start_time: 'expectedStartTime',
    expected_end_time: 'expectedEndTime',
    people_required: 'peopleRequired',
    people_skill_requirements: 'peopleSkillRequirements',
    days_hours_required: 'daysHoursRequired',
    performed_by: 'performedBy',
    site_lead_id: { relation: 'siteLead', target: Employee, label: 'an employee' },
    assigned_to: crewField,
    scope_of_work: 'scopeOfWork',
    equipment: 'equipment',
    specialty_materials: 'specialtyMaterials',
    scheduler_notes: schedulerNotesField,
    custom_fields: 'customFields',
    display_order: 'displayOrder',
    require_daily_report: 'requireDailyReport',
    require_completion_report: 'requireCompletionReport',
    travel_time_hours: 'travelTimeHours',
    additional_labor_cost: 'additionalLaborCost',
  },
  naturalKey: { scope: null, fields: ['workOrderNumber'], describe: (w) => `A work order numbered "${w.workOrderNumber}" already exists` },
  wireRelations: ['assignees'],
  populate: ['project', 'project.customer', 'project.location', 'siteLead', 'assignees'],
  prepare(input) {
    for (const [stamp, date, time] of [
      ['scheduled_start', 'start_date', 'start_time'],
      ['scheduled_end', 'end_date', 'end_time'],
    ] as const) {
      if (input[stamp] !== undefined && (input[date] !== undefined || input[time] !== undefined)) {
        throw ApiError.invalid(stamp, `cannot be given with ${date} or ${time}: send one or the other`);
      }
    }
    const [start, end] = [input.scheduled_start, input.scheduled_end] as (string | null | undefined)[];
    if (start && end && parseTimestamp(end)! < parseTimestamp(start)!) throw ApiError.invalid('scheduled_end', 'must not be before scheduled_start');
    return input;
  },
  async check(_em, workOrder, before) {
    if (workOrder.startTime && !workOrder.startDate) throw ApiError.invalid('start_time', 'needs a start_date');
    if (workOrder.endTime && !workOrder.endDate) throw ApiError.invalid('end_time', 'needs an end_date');
    const start = moment(workOrder.startDate, workOrder.startTime);
    const end = moment(workOrder.endDate, workOrder.endTime);
    if (start && end && end < start) throw ApiError.invalid('end_date', 'must not be before the start');
    if (!before) {
      if (!CREATABLE_STATUSES.includes(workOrder.status)) {
        throw ApiError.invalid('status', `of a new work order must be one of: ${CREATABLE_STATUSES.join(', ')}`);
      }
      return;
    }
    if (before.status === 'closed') {
      throw new ApiError('CONFLICT', `Work order ${workOrder.workOrderNumber} is closed and cannot change`, { field: null, reason: 'current status closed' });
    }
    assertTransition(workOrder.workOrderNumber, before.status, workOrder.status);
  },
  async beforeInsert(em, workOrder) {
    workOrder.workOrderNumber ??= await nextWorkOrderNumber(em, workOrder.company.id);
    // A work order created with a start date is scheduled unless its sender said otherwise.
    if (workOrder.status === 'open' && workOrder.startDate && !statusGiven.has(workOrder)) workOrder.status = 'scheduled';
  },
  rowColumns: {
    assignees: "select coalesce(array_agg(a.employee_id::text order by a.position), '{}') from work_order_assignees a where a.work_order_id = r.id",
  },
  events: {
    created: workOrderCreatedEvents,
    updated: workOrderUpdatedEvents,
    deleted: workOrderDeletedEvent,
  },
});

/**
 * An approved completion report completes its work order from any incomplete status (webhooks.md 3, "any with a
 * pending completion report"), with work_order.status_changed and workorder.completed, in the caller's
 * transaction. One completed, closed or cancelled meanwhile is left as it is. Whether it changed.
 */
export async function completeWorkOrder(em: EntityManager, actor: Actor, workOrderId: string): Promise<boolean> {
  const workOrder = await workOrders.loadForUpdate(em, actor.companyId, workOrderId);
  if (!INCOMPLETE_STATUSES.includes(workOrder.status)) return false;
  const previous = workOrder.status;
  workOrder.status = 'complete';
  await em.flush();
  for (const event of statusChanged(workOrder, previous, { actor, at: workOrder.updatedAt })) recordEvent(em, actor, event.key, event.payload as never);
  return true;
}
