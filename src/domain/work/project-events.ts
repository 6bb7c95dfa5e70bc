import type { Contact } from '../business/contact.entity';
import type { Customer } from '../business/customer.entity';
import type { Location } from '../business/location.entity';
import type { Employee } from '../people/employee.entity';
import type { ChangeContext, RecordedEvent } from '../records/record-service';
import type { Project } from './project.entity';
import type { CatalogEmployeeAssignedData, Project as ProjectRecord, ProjectRef } from '../../generated/schemas';
import { changesBetween } from '../../events/changes';
import type { EventPayload } from '../../events/registry';
import { joinAddress, postalAddressData, stamp } from '../event-format';

export interface ProjectSnapshot {
  project: Project;
  customer: Customer;
  location: Location;
  contacts: Contact[];
  owners: Employee[];
}

export const siteAddress = ({ address }: Location) =>
  joinAddress(address.line1, address.line2, address.city, address.province, address.postalCode, address.country);

export const projectRef = (project: Project): ProjectRef => ({ id: project.id, project_code: project.projectCode, project_name: project.name });

export function projectCreatedPayload(snapshot: ProjectSnapshot, createdBy: string): EventPayload<'project.created'> {
  const { project, customer, location, contacts, owners } = snapshot;
  return {
    a: {
      id: project.id,
      project_name: project.name,
      project_code: project.projectCode,
      description: project.description,
      priority: project.priority,
      status: project.status,
      start_date: project.startDate,
      end_date: project.endDate,
      customer: { id: customer.id, name: customer.name, type: customer.type, email: customer.email, phone: customer.phone },
      location: { id: location.id, name: location.name, ...postalAddressData(location.address) },
      contacts: contacts.map((c) => ({
        id: c.id,
        first_name: c.firstName,
        last_name: c.lastName,
        email: c.email,
        phone: c.phone,
        role: c.title,
      })),
      project_owners: owners.map((e) => ({ id: e.id, name: e.name, email: e.email, emp_number: e.empNumber })),
      ...stamp('created', project.createdAt, createdBy),
    },
    b: {
      id: project.id,
      projectNumber: project.projectCode,
      name: project.name,
      customer: customer.name,
      address: siteAddress(location),
      status: project.status,
      startDate: project.startDate,
      estimatedEndDate: project.endDate,
    },
  };
}

/** project.updated; `changes` over the project's REST form (closed_at and the timestamps left out). */
export function projectUpdatedPayload(project: Project, change: { before: ProjectRecord; after: ProjectRecord }, ctx: ChangeContext): EventPayload<'project.updated'> {
  return {
    a: {
      id: project.id,
      project_name: project.name,
      project_code: project.projectCode,
      priority: project.priority,
      end_date: project.endDate,
      changes: changesBetween(change.before, change.after, 'A', ['contact_ids']),
      ...stamp('updated', ctx.at, ctx.actor.apiKeyId),
    },
    b: {
      id: project.id,
      projectNumber: project.projectCode,
      name: project.name,
      status: project.status,
      changes: changesBetween(change.before, change.after, 'B', ['contact_ids']),
    },
  };
}

export function projectDeletedPayload(project: Project, ctx: ChangeContext): EventPayload<'project.deleted'> {
  return {
    a: { id: project.id, project_name: project.name, project_code: project.projectCode, ...stamp('deleted', ctx.at, ctx.actor.apiKeyId) },
    b: { id: project.id, projectNumber: project.projectCode, name: project.name, deletedBy: ctx.actor.apiKeyId, reason: ctx.reason ?? null },
  };
}

/** project.closed; 6.2 delivers it in shape A. */
export function projectClosedPayload(project: Project): EventPayload<'project.closed'> {
  return { a: { id: project.id, project_code: project.projectCode, project_name: project.name, closed_at: (project.closedAt ?? new Date()).toISOString() } };
}

/** employee.assigned (catalog only; our design, schemas/events/b/employee.assigned.json). */
export function employeeAssigned(
  employee: Employee,
  role: string,
  on: { project: Project; workOrder?: { id: string; workOrderNumber: string; title: string } },
  ctx: ChangeContext,
): RecordedEvent {
  const data: CatalogEmployeeAssignedData = {
    employee: { id: employee.id, emp_number: employee.empNumber, name: employee.name },
    assignment_type: on.workOrder ? 'work_order' : 'project',
    work_order: on.workOrder ? { id: on.workOrder.id, work_order_number: on.workOrder.workOrderNumber, phase_name: on.workOrder.title } : null,
    project: projectRef(on.project),
    role,
    ...stamp('assigned', ctx.at, ctx.actor.apiKeyId),
  };
  return { key: 'employee.assigned', payload: { b: data } };
}
