import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { employeeAssigned, projectClosedPayload, projectCreatedPayload, projectDeletedPayload, projectUpdatedPayload } from './project-events';
import { statusChanged } from './work-order-events';
import type { ProjectCreate, Project as ProjectRecord, ProjectUpdate } from '../../generated/schemas';
import type { Actor } from '../accounts/actor';
import { Company } from '../accounts/company.entity';
import { Contact } from '../business/contact.entity';
import { Customer } from '../business/customer.entity';
import { Location } from '../business/location.entity';
import { lockNaturalKey } from '../natural-keys';
import { Employee } from '../people/employee.entity';
import { refuseWithPurchaseOrders } from '../supply/purchase-order.entity';
import { type ChangeContext, type RecordedEvent, RecordService } from '../records/record-service';
import { applyWire, type FieldMapping, toWire, type WireMapping } from '../records/wire-mapping';
import { Project } from './project.entity';
import { WorkOrder } from './work-order.entity';
import { INCOMPLETE_STATUSES } from './work-order-status';
import { workOrders } from './work-orders';

/** The project's contacts (its customer's), in order. */
const contactsField: FieldMapping<Project> = {
  read: (view) => {
    const contacts = (view as unknown as { contacts: unknown }).contacts;
    return Array.isArray(contacts) ? contacts : (contacts as Project['contacts']).getItems().map((c) => c.id);
  },
  async write(project, value, { em, companyId }) {
    const ids = value as string[];
    const found = ids.length ? await em.find(Contact, { id: { $in: ids }, company: companyId }) : [];
    const unknown = ids.filter((id) => !found.some((c) => c.id === id));
    if (unknown.length) throw ApiError.invalid('contact_ids', `contains ids that match no contact of your company: ${unknown.join(', ')}`);
    project.contacts.set(ids.map((id) => found.find((c) => c.id === id)!));
  },
};

/** Who newly manages the project: employee.assigned for each. */
function managerAssignments(project: Project, before: { account: string | null; owner: string | null }, ctx: ChangeContext): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  const account = project.accountManager?.getEntity();
  const owner = project.internalManager?.getEntity();
  if (account && account.id !== before.account) events.push(employeeAssigned(account, 'account_manager', { project }, ctx));
  if (owner && owner.id !== before.owner) events.push(employeeAssigned(owner, 'project_owner', { project }, ctx));
  return events;
}

/**
 * Projects (rest-api.md 2.1, webhooks.md 2.3), identified to other systems by project_code. Created by the
 * projectCreation workflow (see createProject), closed by the projectClosing workflow; a closed project does
 * not change any more. Deleting a project deletes its work orders, each with its event.
 */
export const projects = new RecordService<Project, ProjectRecord, never, ProjectUpdate>({
  entity: Project,
  label: 'Project',
  wire: {
    project_code: 'projectCode',
    name: 'name',
    description: 'description',
    status: 'status',
    priority: 'priority',
    color_index: 'colorIndex',
    customer_id: { relation: 'customer', target: Customer, label: 'a customer' },
    location_id: { relation: 'location', target: Location, label: 'a location' },
    contact_ids: contactsField,
    account_manager_id: { relation: 'accountManager', target: Employee, label: 'an employee' },
    internal_manager_id: { relation: 'internalManager', target: Employee, label: 'an employee' },
    start_date: 'startDate',
    end_date: 'endDate',
    equipment: 'equipment',
    custom_fields: 'customFields',
    docs: 'docs',
    closed_at: { read: (view) => (view as unknown as Project).closedAt?.toISOString() ?? null },
  },
  naturalKey: { scope: null, fields: ['projectCode'], describe: (p) => `A project with project_code "${p.projectCode}" already exists` },
  setFields: ['contact_ids'],
  wireRelations: ['contacts'],
  populate: ['customer', 'location', 'contacts', 'accountManager', 'internalManager'],
  async check(em, project, before) {
    if (before?.status === 'closed') {
      throw new ApiError('CONFLICT', `Project ${project.projectCode} is closed and cannot change`, { field: null, reason: 'current status closed' });
    }
    if (project.startDate && project.endDate && project.endDate < project.startDate) throw ApiError.invalid('end_date', 'must not be before start_date');
    if ((await em.count(Location, { id: project.location.id, customer: project.customer.id })) === 0) {
      throw ApiError.invalid('location_id', "must be a location of the project's customer");
    }
    const contactIds = project.contacts.getItems().map((c) => c.id);
    if (contactIds.length && (await em.count(Contact, { id: { $in: contactIds }, customer: project.customer.id })) !== contactIds.length) {
      throw ApiError.invalid('contact_ids', "must be contacts of the project's customer");
    }
  },
  rowColumns: {
    contacts: "select coalesce(array_agg(c.contact_id::text order by c.position), '{}') from project_contacts c where c.project_id = r.id",
  },
  events: {
    updated: (project, change, ctx) => [
      { key: 'project.updated', payload: projectUpdatedPayload(project, change, ctx) },
      ...managerAssignments(project, { account: change.before.account_manager_id, owner: change.before.internal_manager_id }, ctx),
    ],
    deleted: (project, ctx) => ({ key: 'project.deleted', payload: projectDeletedPayload(project, ctx) }),
  },
  async beforeDelete(em, project, ctx) {
    await refuseWithPurchaseOrders(em, { project }, `Project ${project.projectCode}`);
    const orders = await em.find(WorkOrder, { project }, { orderBy: { createdAt: 'asc', id: 'asc' }, fields: ['id'] });
    for (const { id } of orders) await workOrders.remove(em, ctx.actor, id, { reason: ctx.reason ?? null });
  },
});

/** A project to create, its related records already found or created (ids of the company's records). */
export type NewProject = Omit<ProjectCreate, 'customer' | 'location' | 'contacts' | 'status'> & { customer_id: string; location_id: string };

/**
 * Creates the project and records project.created, in the caller's transaction or its own. Idempotent: when
 * the project with `projectId` exists it is returned with `created: false`; another project with the same
 * code is a conflict.
 */
export async function createProject(
  em: EntityManager,
  actor: Actor,
  input: { projectId: string; project: NewProject },
  eventId: string,
): Promise<{ project: ProjectRecord; created: boolean }> {
  return em.transactional(async (tx) => {
    const code = input.project.project_code;
    await lockNaturalKey(tx, actor.companyId, 'projects', code);
    const existingId = await projects.findIdByKey(tx, actor.companyId, [code]);
    if (existingId === input.projectId) return { project: await projects.get(tx, actor.companyId, existingId), created: false };
    if (existingId) throw ApiError.conflict('project_code', `A project with project_code "${code}" already exists`);

    const project = new Project();
    project.id = input.projectId;
    project.company = tx.getReference(Company, actor.companyId, { wrapped: true });
    await applyWire(tx, actor.companyId, projects.spec.wire as WireMapping<Project, object>, project, input.project);
    await projects.spec.check!(tx, project);
    tx.persist(project);
    await tx.flush();
    await tx.populate(project, projects.spec.populate as never);
    const ctx = { actor, at: project.createdAt };
    const owner = project.internalManager?.getEntity();
    const snapshot = {
      project,
      customer: project.customer.getEntity(),
      location: project.location.getEntity(),
      contacts: project.contacts.getItems(),
      owners: owner ? [owner] : [],
    };
    recordEvent(tx, actor, 'project.created', projectCreatedPayload(snapshot, actor.apiKeyId), eventId);
    for (const event of managerAssignments(project, { account: null, owner: null }, ctx)) recordEvent(tx, actor, event.key, event.payload as never);
    return { project: toWire(projects.spec.wire, project), created: true };
  });
}

/** The project with this code, or 404 naming `field`. */
export async function projectIdByCode(em: EntityManager, companyId: string, code: string, field = 'project_code'): Promise<string> {
  const id = await projects.findIdByKey(em, companyId, [code]);
  if (!id) throw new ApiError('NOT_FOUND', `Project "${code}" not found`, { field, reason: 'does not exist' });
  return id;
}

export async function assertProjectCodeAvailable(em: EntityManager, companyId: string, projectCode: string): Promise<void> {
  if (await projects.findIdByKey(em, companyId, [projectCode])) {
    throw ApiError.conflict('project_code', `A project with project_code "${projectCode}" already exists`);
  }
}

/** The incomplete work orders of a project, oldest first: what keeps it from closing. */
export async function incompleteWorkOrders(em: EntityManager, companyId: string, projectId: string) {
  return em.find(
    WorkOrder,
    { company: companyId, project: projectId, status: { $in: [...INCOMPLETE_STATUSES] } },
    { orderBy: { createdAt: 'asc', id: 'asc' }, fields: ['id', 'workOrderNumber', 'status'] },
  );
}

/** Closes an incomplete work order with its project, recording status_changed; a closed one is left as it is. */
export async function closeWorkOrderWithProject(em: EntityManager, actor: Actor, workOrderId: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const workOrder = await workOrders.loadForUpdate(tx, actor.companyId, workOrderId);
    if (!INCOMPLETE_STATUSES.includes(workOrder.status)) return false;
    const previous = workOrder.status;
    workOrder.status = 'closed';
    await tx.flush();
    for (const event of statusChanged(workOrder, previous, { actor, at: workOrder.updatedAt })) recordEvent(tx, actor, event.key, event.payload as never);
    return true;
  });
}

/** Marks the project closed and records project.closed with `eventId`; a project already closed is left as it is. */
export async function markProjectClosed(em: EntityManager, actor: Actor, projectId: string, eventId: string): Promise<ProjectRecord> {
  return em.transactional(async (tx) => {
    const project = await projects.loadForUpdate(tx, actor.companyId, projectId);
    if (project.status !== 'closed') {
      project.status = 'closed';
      project.closedAt = new Date();
      await tx.flush();
      recordEvent(tx, actor, 'project.closed', projectClosedPayload(project), eventId);
    }
    return toWire(projects.spec.wire, project);
  });
}
