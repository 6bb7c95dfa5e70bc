import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import type { WorkOrderCreate, WorkOrder as WorkOrderRecord } from '../../generated/schemas';
import { recordEvent } from '../../events/outbox';
import { workOrderCreatedPayload } from '../../events/payloads/work';
import type { Actor } from '../accounts/actor';
import { Employee } from '../people/employee.entity';
import { Project } from './project.entity';
import { WorkOrder } from './work-order.entity';

/** The REST form of a work order (the create body's fields plus what the service assigns); assignees loaded. */
export function workOrderRecord(workOrder: WorkOrder): WorkOrderRecord {
  return {
    id: workOrder.id,
    work_order_number: workOrder.workOrderNumber,
    title: workOrder.title,
    project_id: workOrder.project.id,
    assigned_to: workOrder.assignees.getItems().map((e) => e.id),
    scheduled_start: workOrder.scheduledStart?.toISOString() ?? null,
    scheduled_end: workOrder.scheduledEnd?.toISOString() ?? null,
    priority: workOrder.priority,
    status: workOrder.status,
    created_at: workOrder.createdAt.toISOString(),
    updated_at: workOrder.updatedAt.toISOString(),
  };
}

/** Next per-company number (WO-000001, …), taken under the company row's lock so numbers never repeat. */
async function nextWorkOrderNumber(em: EntityManager, companyId: string): Promise<string> {
  const [row] = await em.execute<{ work_order_sequence: number }[]>(
    'update companies set work_order_sequence = work_order_sequence + 1 where id = ? returning work_order_sequence',
    [companyId],
  );
  return `WO-${String(row!.work_order_sequence).padStart(6, '0')}`;
}

export async function createWorkOrder(em: EntityManager, actor: Actor, body: WorkOrderCreate): Promise<WorkOrderRecord> {
  const input = {
    title: body.title,
    projectId: body.project_id,
    assigneeIds: body.assigned_to ?? [],
    scheduledStart: body.scheduled_start ? new Date(body.scheduled_start) : null,
    scheduledEnd: body.scheduled_end ? new Date(body.scheduled_end) : null,
    priority: body.priority,
  };
  if (input.scheduledStart && input.scheduledEnd && input.scheduledEnd < input.scheduledStart) {
    throw ApiError.invalid('scheduled_end', 'must not be before scheduled_start');
  }
  return em.transactional(async (tx) => {
    const project = await tx.findOne(Project, { id: input.projectId, company: actor.companyId }, { populate: ['customer', 'location'] });
    if (!project) throw ApiError.invalid('project_id', 'does not match a project of your company');
    const assignees = input.assigneeIds.length
      ? await tx.find(Employee, { id: { $in: input.assigneeIds }, company: actor.companyId })
      : [];
    const unknown = input.assigneeIds.filter((id) => !assignees.some((e) => e.id === id));
    if (unknown.length > 0) throw ApiError.invalid('assigned_to', `contains ids that match no employee of your company: ${unknown.join(', ')}`);

    const workOrder = tx.create(WorkOrder, {
      company: actor.companyId,
      project,
      workOrderNumber: await nextWorkOrderNumber(tx, actor.companyId),
      title: input.title,
      status: input.scheduledStart ? 'scheduled' : 'open',
      priority: input.priority ?? 'normal',
      scheduledStart: input.scheduledStart,
      scheduledEnd: input.scheduledEnd,
    });
    const ordered = input.assigneeIds.map((id) => assignees.find((e) => e.id === id)!);
    workOrder.assignees.set(ordered);
    recordEvent(
      tx,
      actor,
      'work_order.created',
      workOrderCreatedPayload(
        { workOrder, project, customer: project.customer.getEntity(), location: project.location.getEntity(), assignees: ordered },
        actor.apiKeyId,
      ),
    );
    return workOrderRecord(workOrder);
  });
}

export async function getWorkOrder(em: EntityManager, companyId: string, id: string): Promise<WorkOrderRecord> {
  const workOrder = await em.findOne(WorkOrder, { id, company: companyId }, { populate: ['assignees'] });
  if (!workOrder) throw ApiError.notFound('Work order');
  return workOrderRecord(workOrder);
}
