import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { projectCreatedPayload } from '../../events/payloads/work';
import type { Actor } from '../accounts/actor';
import { Contact } from '../business/contact.entity';
import { Customer } from '../business/customer.entity';
import { Location } from '../business/location.entity';
import { lockNaturalKey } from '../natural-keys';
import type { Project as ProjectRecord } from '../../generated/schemas';
import { findPage, idOf, type Page, type View } from '../page';
import { Employee } from '../people/employee.entity';
import { type ProjectDoc, Project } from './project.entity';

export interface NewProject {
  /** Assigned before the creation starts, so a retried creation recognises the row it already wrote. */
  projectId: string;
  projectCode: string;
  name: string;
  description?: string;
  priority?: string;
  colorIndex?: number;
  startDate?: string;
  endDate?: string;
  equipment?: string[];
  customFields?: Record<string, string>;
  docs?: ProjectDoc[];
  customerId: string;
  locationId: string;
  contactIds: string[];
  accountManagerId: string | null;
  internalManagerId: string | null;
}

/** The REST form of a project (rest-api.md 2.1, plus the project code and descriptive fields). */
export function projectRecord(project: View<Project>): ProjectRecord {
  return {
    id: project.id,
    project_code: project.projectCode,
    name: project.name,
    description: project.description,
    status: project.status,
    priority: project.priority,
    customer_id: idOf(project.customer)!,
    location_id: idOf(project.location)!,
    start_date: project.startDate,
    end_date: project.endDate,
    created_at: project.createdAt.toISOString(),
    updated_at: project.updatedAt.toISOString(),
  };
}

export async function listProjects(em: EntityManager, companyId: string, page: Page, where: FilterQuery<Project> = {}) {
  const { items, total } = await findPage(em, Project, { ...(where as object), company: companyId }, { createdAt: 'asc', id: 'asc' }, page);
  return { items: items.map(projectRecord), total };
}

export async function assertProjectCodeAvailable(em: EntityManager, companyId: string, projectCode: string): Promise<void> {
  if ((await em.count(Project, { company: companyId, projectCode })) > 0) {
    throw ApiError.conflict('project_code', `A project with project_code "${projectCode}" already exists`);
  }
}

/** Maps employee numbers (by the field that names them) to employee ids; unknown numbers are a 400. */
export async function resolveEmployeeNumbers(
  em: EntityManager,
  companyId: string,
  byField: Record<string, string | undefined>,
): Promise<Record<string, string | null>> {
  const wanted = [...new Set(Object.values(byField).filter((n): n is string => !!n))];
  const found = wanted.length ? await em.find(Employee, { company: companyId, empNumber: { $in: wanted } }) : [];
  const idByNumber = new Map(found.map((e) => [e.empNumber, e.id]));
  const resolved: Record<string, string | null> = {};
  for (const [field, number] of Object.entries(byField)) {
    if (number && !idByNumber.has(number)) {
      throw ApiError.invalid(field, `does not match an employee (emp_number "${number}")`);
    }
    resolved[field] = number ? idByNumber.get(number)! : null;
  }
  return resolved;
}

/**
 * Creates the project, links its contacts and records project.created, in one transaction. Idempotent: when
 * the project with `input.projectId` already exists it is returned with `created: false`; another project
 * with the same code is a conflict.
 */
export async function createProject(
  em: EntityManager,
  actor: Actor,
  input: NewProject,
  eventId: string,
): Promise<{ project: Project; created: boolean }> {
  return em.transactional(async (tx) => {
    await lockNaturalKey(tx, actor.companyId, 'project', input.projectCode);
    const existing = await tx.findOne(Project, { company: actor.companyId, projectCode: input.projectCode });
    if (existing?.id === input.projectId) return { project: existing, created: false };
    if (existing) throw ApiError.conflict('project_code', `A project with project_code "${input.projectCode}" already exists`);

    const customer = await tx.findOneOrFail(Customer, { id: input.customerId, company: actor.companyId });
    const location = await tx.findOneOrFail(Location, { id: input.locationId, customer });
    const contacts = input.contactIds.length ? await tx.find(Contact, { id: { $in: input.contactIds }, customer }) : [];
    const managerIds = [input.internalManagerId, input.accountManagerId].filter((id): id is string => !!id);
    const managers = managerIds.length ? await tx.find(Employee, { id: { $in: managerIds }, company: actor.companyId }) : [];
    const byId = (id: string | null) => managers.find((e) => e.id === id) ?? null;

    const project = tx.create(Project, {
      id: input.projectId,
      company: actor.companyId,
      projectCode: input.projectCode,
      name: input.name,
      description: input.description ?? null,
      priority: input.priority ?? null,
      colorIndex: input.colorIndex ?? null,
      customer,
      location,
      accountManager: byId(input.accountManagerId),
      internalManager: byId(input.internalManagerId),
      startDate: input.startDate ?? null,
      endDate: input.endDate ?? null,
      equipment: input.equipment ?? [],
      customFields: input.customFields ?? {},
      docs: input.docs ?? [],
    });
    project.contacts.set(contacts);
    const ordered = input.contactIds.map((id) => contacts.find((c) => c.id === id)).filter((c): c is Contact => !!c);
    const owners = [byId(input.internalManagerId)].filter((e): e is Employee => !!e);
    recordEvent(
      tx,
      actor,
      'project.created',
      projectCreatedPayload({ project, customer, location, contacts: ordered, owners }, actor.apiKeyId),
      eventId,
    );
    return { project, created: true };
  });
}
