import type { Employee } from '../people/employee.entity';
import type { ChangeContext, RecordedEvent } from '../records/record-service';
import type { WorkOrder, WorkOrderStatus } from './work-order.entity';
import type { WorkOrder as WorkOrderRecord } from '../../generated/schemas';
import { changesBetween } from '../../events/changes';
import { employeeAssigned, projectRef, siteAddress } from './project-events';
import { stamp } from '../event-format';

/*
 * Work order events (6.1 work_order.*, 6.2 workorder.*). They read the work order with its project (and the
 * project's customer and location), its site lead and its crew loaded.
 */

const siteLeadOf = (workOrder: WorkOrder): Employee | null => workOrder.siteLead?.getEntity() ?? null;
const crewOf = (workOrder: WorkOrder): Employee[] => workOrder.assignees.getItems();

/** How shape A names a work order: its number and phase. */
const named = (workOrder: WorkOrder) => ({ id: workOrder.id, work_order_number: workOrder.workOrderNumber, phase_name: workOrder.title });

/** The fields shape A's created and updated events both lead with. */
const summary = (workOrder: WorkOrder) => ({
  ...named(workOrder),
  status: workOrder.status,
  priority: workOrder.priority,
  start_date: workOrder.startDate,
  end_date: workOrder.endDate,
});

const catalogBase = (workOrder: WorkOrder) => ({
  id: workOrder.id,
  workOrderNumber: workOrder.workOrderNumber,
  title: workOrder.title,
  status: workOrder.status,
  priority: workOrder.priority,
  projectId: workOrder.project.id,
});

function workOrderCreated(workOrder: WorkOrder, ctx: ChangeContext): RecordedEvent {
  const project = workOrder.project.getEntity();
  const lead = siteLeadOf(workOrder);
  return {
    key: 'work_order.created',
    payload: {
      a: {
        ...summary(workOrder),
        start_time: workOrder.startTime,
        end_time: workOrder.endTime,
        expected_start_date: workOrder.expectedStartDate,
        expected_end_date: workOrder.expectedEndDate,
        expected_start_time: workOrder.expectedStartTime,
        expected_end_time: workOrder.expectedEndTime,
        people_required: workOrder.peopleRequired,
        estimated_hours: workOrder.daysHoursRequired,
        travel_time_hours: workOrder.travelTimeHours,
        additional_labor_cost: workOrder.additionalLaborCost,
        performed_by: workOrder.performedBy,
        require_daily_report: workOrder.requireDailyReport,
        require_completion_report: workOrder.requireCompletionReport,
        display_order: workOrder.displayOrder,
        project: {
          id: project.id,
          project_code: project.projectCode,
          project_name: project.name,
          customer_name: project.customer.getEntity().name,
          site_address: siteAddress(project.location.getEntity()),
        },
        site_lead: lead && { id: lead.id, emp_number: lead.empNumber, name: lead.name, email: lead.email, phone: lead.phone },
        scope_of_work: workOrder.scopeOfWork,
        equipment: workOrder.equipment,
        specialty_materials: workOrder.specialtyMaterials,
        scheduler_notes: workOrder.schedulerNotes,
        custom_fields: workOrder.customFields,
        ...stamp('created', ctx.at, ctx.actor.apiKeyId),
      },
      b: catalogBase(workOrder),
    },
  };
}

/** Fields that are the same thing said twice on the wire: changes list the dates and times once. */
const DERIVED = ['scheduled_start', 'scheduled_end'];
const withoutDerived = (record: WorkOrderRecord) => Object.fromEntries(Object.entries(record).filter(([k]) => !DERIVED.includes(k)));
/** Shape A names the phase as the webhook interface does. */
const inboundNames = (record: WorkOrderRecord) => Object.fromEntries(Object.entries(withoutDerived(record)).map(([k, v]) => [k === 'title' ? 'phase_name' : k, v]));

function workOrderUpdated(workOrder: WorkOrder, change: { before: WorkOrderRecord; after: WorkOrderRecord }, ctx: ChangeContext): RecordedEvent {
  return {
    key: 'work_order.updated',
    payload: {
      a: {
        ...summary(workOrder),
        people_required: workOrder.peopleRequired,
        changes: changesBetween(inboundNames(change.before), inboundNames(change.after), 'A'),
        project: projectRef(workOrder.project.getEntity()),
        ...stamp('updated', ctx.at, ctx.actor.apiKeyId),
      },
      b: {
        ...catalogBase(workOrder),
        assignedTo: crewOf(workOrder).map((e) => e.id),
        changes: changesBetween(withoutDerived(change.before), withoutDerived(change.after), 'B'),
      },
    },
  };
}

/** work_order.status_changed, and the catalog's workorder.started / completed / cancelled when it is one of those. */
export function statusChanged(workOrder: WorkOrder, previous: WorkOrderStatus, ctx: ChangeContext): RecordedEvent[] {
  const project = workOrder.project.getEntity();
  const events: RecordedEvent[] = [
    {
      key: 'work_order.status_changed',
      payload: {
        a: {
          ...named(workOrder),
          previous_status: previous,
          new_status: workOrder.status,
          ...stamp('status_changed', ctx.at, ctx.actor.apiKeyId),
          project: projectRef(project),
        },
      },
    },
  ];
  const transition = {
    id: workOrder.id,
    workOrderNumber: workOrder.workOrderNumber,
    title: workOrder.title,
    previousStatus: previous,
    projectId: project.id,
    changedAt: ctx.at.toISOString(),
    changedBy: ctx.actor.apiKeyId,
  };
  if (workOrder.status === 'in_progress') events.push({ key: 'workorder.started', payload: { b: { ...transition, status: 'in_progress' } } });
  if (workOrder.status === 'complete') events.push({ key: 'workorder.completed', payload: { b: { ...transition, status: 'complete' } } });
  if (workOrder.status === 'cancelled') events.push({ key: 'workorder.cancelled', payload: { b: { ...transition, status: 'cancelled', reason: ctx.reason ?? null } } });
  return events;
}

/** work_order.scheduled: the dates and who is on it (the site lead first), when either is set or changes. */
function workOrderScheduled(workOrder: WorkOrder, ctx: ChangeContext): RecordedEvent {
  const lead = siteLeadOf(workOrder);
  const crew = crewOf(workOrder).filter((e) => e.id !== lead?.id);
  const employee = (e: Employee, role: string) => ({ id: e.id, emp_number: e.empNumber, name: e.name, role });
  return {
    key: 'work_order.scheduled',
    payload: {
      a: {
        ...named(workOrder),
        status: workOrder.status,
        start_date: workOrder.startDate,
        end_date: workOrder.endDate,
        start_time: workOrder.startTime,
        end_time: workOrder.endTime,
        assigned_employees: [...(lead ? [employee(lead, 'site_lead')] : []), ...crew.map((e) => employee(e, 'crew_member'))],
        project: projectRef(workOrder.project.getEntity()),
        ...stamp('scheduled', ctx.at, ctx.actor.apiKeyId),
      },
    },
  };
}

/** employee.assigned for each employee newly on the work order (site lead or crew). */
function assignments(workOrder: WorkOrder, before: { siteLead: string | null; crew: string[] }, ctx: ChangeContext): RecordedEvent[] {
  const on = { project: workOrder.project.getEntity(), workOrder };
  const lead = siteLeadOf(workOrder);
  const events: RecordedEvent[] = [];
  if (lead && lead.id !== before.siteLead) events.push(employeeAssigned(lead, 'site_lead', on, ctx));
  for (const member of crewOf(workOrder)) {
    if (!before.crew.includes(member.id) && member.id !== lead?.id) events.push(employeeAssigned(member, 'crew_member', on, ctx));
  }
  return events;
}

const SCHEDULE_FIELDS = ['start_date', 'end_date', 'start_time', 'end_time', 'site_lead_id', 'assigned_to'] as const;

export function workOrderCreatedEvents(workOrder: WorkOrder, ctx: ChangeContext): RecordedEvent[] {
  const events = [workOrderCreated(workOrder, ctx)];
  if (workOrder.startDate) events.push(workOrderScheduled(workOrder, ctx));
  return [...events, ...assignments(workOrder, { siteLead: null, crew: [] }, ctx)];
}

export function workOrderUpdatedEvents(workOrder: WorkOrder, change: { before: WorkOrderRecord; after: WorkOrderRecord }, ctx: ChangeContext): RecordedEvent[] {
  const { before, after } = change;
  const events = [workOrderUpdated(workOrder, change, ctx)];
  if (before.status !== after.status) events.push(...statusChanged(workOrder, before.status, ctx));
  const rescheduled = SCHEDULE_FIELDS.some((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
  if (rescheduled && workOrder.startDate) events.push(workOrderScheduled(workOrder, ctx));
  return [...events, ...assignments(workOrder, { siteLead: before.site_lead_id, crew: before.assigned_to }, ctx)];
}

export function workOrderDeletedEvent(workOrder: WorkOrder, ctx: ChangeContext): RecordedEvent {
  return {
    key: 'work_order.deleted',
    payload: {
      a: {
        ...named(workOrder),
        project: projectRef(workOrder.project.getEntity()),
        ...stamp('deleted', ctx.at, ctx.actor.apiKeyId),
      },
      b: {
        id: workOrder.id,
        workOrderNumber: workOrder.workOrderNumber,
        title: workOrder.title,
        projectId: workOrder.project.id,
        deletedBy: ctx.actor.apiKeyId,
        reason: ctx.reason ?? null,
      },
    },
  };
}
