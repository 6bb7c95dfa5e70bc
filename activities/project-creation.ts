import type { Actor } from '../src/domain/accounts/actor';
import { type ContactDetails, type CustomerDetails, ensureContacts, ensureCustomer, ensureLocation, type LocationDetails } from '../src/domain/business/customers-service';
import type { ProjectCreationInput, ProjectCreationResult } from '../src/domain/work/project-creation';
import { Project } from '../src/domain/work/project.entity';
import { createProject, resolveEmployeeNumbers } from '../src/domain/work/projects-service';
import { ApiError } from '../src/errors';
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

    async ensureCustomer(actor: Actor, details: CustomerDetails): Promise<string> {
      return (await ensureCustomer(orm.em.fork(), actor, details)).id;
    },

    async ensureLocation(actor: Actor, customerId: string, details: LocationDetails): Promise<string> {
      return (await ensureLocation(orm.em.fork(), actor, customerId, details)).id;
    },

    async ensureContacts(actor: Actor, customerId: string, contacts: ContactDetails[]): Promise<string[]> {
      return (await ensureContacts(orm.em.fork(), actor, customerId, contacts)).map((c) => c.id);
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
