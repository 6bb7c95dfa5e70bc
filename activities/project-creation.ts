import type { Actor } from '../src/domain/accounts/actor';
import { contacts } from '../src/domain/business/contacts';
import { customers } from '../src/domain/business/customers';
import { locations } from '../src/domain/business/locations';
import type { ProjectCreationInput, ProjectCreationResult } from '../src/domain/work/project-creation';
import { Project } from '../src/domain/work/project.entity';
import { createProject, resolveEmployeeNumbers } from '../src/domain/work/projects-service';
import { ApiError } from '../src/errors';
import type { ContactCreate, CustomerCreate, LocationCreate } from '../src/generated/schemas';
import type { ActivityDeps } from './deps';

export interface ResolvedManagers {
  accountManagerId: string | null;
  internalManagerId: string | null;
}

/**
 * The steps of project.created. Each is idempotent (a retry finds what an earlier attempt wrote) and each
 * returns ids only, so workflow history stays small.
 */
export function createProjectCreationActivities({ orm }: ActivityDeps) {
  return {
    /** Everything that can make the operation fail, checked before anything is written. */
    async checkProjectCreation(input: ProjectCreationInput): Promise<ResolvedManagers> {
      const em = orm.em.fork();
      const existing = await em.findOne(Project, { company: input.actor.companyId, projectCode: input.project.projectCode });
      if (existing && existing.id !== input.projectId) {
        throw ApiError.conflict('project_code', `A project with project_code "${input.project.projectCode}" already exists`);
      }
      const ids = await resolveEmployeeNumbers(em, input.actor.companyId, {
        account_manager_emp_number: input.accountManagerEmpNumber,
        internal_manager_emp_number: input.internalManagerEmpNumber,
      });
      return { accountManagerId: ids.account_manager_emp_number ?? null, internalManagerId: ids.internal_manager_emp_number ?? null };
    },

    /** Customers match by name, case-insensitively; an existing one is used unchanged. */
    async ensureCustomer(actor: Actor, customer: CustomerCreate): Promise<string> {
      return (await customers.findOrCreate(orm.em.fork(), actor, customer)).record.id;
    },

    /** Locations match by name under the customer. */
    async ensureLocation(actor: Actor, customerId: string, location: Omit<LocationCreate, 'customer_id'>): Promise<string> {
      return (await locations.findOrCreate(orm.em.fork(), actor, { ...location, customer_id: customerId })).record.id;
    },

    /** Contacts match by first and last name under the customer; the ids come back in the order given. */
    async ensureContacts(actor: Actor, customerId: string, people: Omit<ContactCreate, 'customer_id'>[]): Promise<string[]> {
      const ids: string[] = [];
      for (const person of people) ids.push((await contacts.findOrCreate(orm.em.fork(), actor, { ...person, customer_id: customerId })).record.id);
      return [...new Set(ids)];
    },

    async createProject(
      input: ProjectCreationInput,
      refs: { customerId: string; locationId: string; contactIds: string[]; managers: ResolvedManagers },
    ): Promise<ProjectCreationResult> {
      const { created } = await createProject(
        orm.em.fork(),
        input.actor,
        {
          ...input.project,
          projectId: input.projectId,
          customerId: refs.customerId,
          locationId: refs.locationId,
          contactIds: refs.contactIds,
          accountManagerId: refs.managers.accountManagerId,
          internalManagerId: refs.managers.internalManagerId,
        },
        input.eventId,
      );
      return { projectId: input.projectId, eventId: input.eventId, created };
    },
  };
}

export type ProjectCreationActivities = ReturnType<typeof createProjectCreationActivities>;
