import { contacts } from '../src/domain/business/contacts';
import { customers } from '../src/domain/business/customers';
import { locations } from '../src/domain/business/locations';
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
 * The steps of project.created: a read-only check, then one transaction that finds or creates the customer,
 * location and contacts and creates the project, with the events of what it created. A failure anywhere
 * leaves nothing behind and no event of a record that would end up unused; a retry after a crash finds what
 * a committed attempt wrote (the project id is chosen before the workflow starts).
 */
export function createProjectCreationActivities({ orm }: ActivityDeps) {
  return {
    /** Everything that can make the operation fail for the caller's reasons, checked before anything is written. */
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

    /**
     * Customers match by name, locations by name under the customer, contacts by first and last name under the
     * customer, all case-insensitively; existing ones are used unchanged.
     */
    async createProjectWithParties(input: ProjectCreationInput, managers: ResolvedManagers): Promise<ProjectCreationResult> {
      return orm.em.fork().transactional(async (tx) => {
        const { actor } = input;
        const customer = (await customers.findOrCreate(tx, actor, input.customer)).record;
        const location = (await locations.findOrCreate(tx, actor, { ...input.location, customer_id: customer.id })).record;
        const contactIds: string[] = [];
        for (const person of input.contacts) {
          const { record } = await contacts.findOrCreate(tx, actor, { ...person, customer_id: customer.id });
          if (!contactIds.includes(record.id)) contactIds.push(record.id);
        }
        const { created } = await createProject(
          tx,
          actor,
          { ...input.project, projectId: input.projectId, customerId: customer.id, locationId: location.id, contactIds, ...managers },
          input.eventId,
        );
        return { projectId: input.projectId, eventId: input.eventId, created };
      });
    },
  };
}

export type ProjectCreationActivities = ReturnType<typeof createProjectCreationActivities>;
