import type { EntityManager } from '@mikro-orm/postgresql';
import { contacts } from '../src/domain/business/contacts';
import { Contact } from '../src/domain/business/contact.entity';
import { Customer } from '../src/domain/business/customer.entity';
import { customers } from '../src/domain/business/customers';
import { Location } from '../src/domain/business/location.entity';
import { locations } from '../src/domain/business/locations';
import { Employee } from '../src/domain/people/employee.entity';
import { resolveEmployeeNumbers } from '../src/domain/people/employee-numbers';
import type { EmployeeRef, ProjectCreationInput, ProjectCreationResult } from '../workflows/project-creation.contract';
import { createProject, projects } from '../src/domain/work/projects';
import { ApiError } from '../src/errors';
import type { ActivityDeps } from './deps';

export interface ResolvedManagers {
  accountManagerId: string | null;
  internalManagerId: string | null;
}

async function employeeId(em: EntityManager, companyId: string, ref: EmployeeRef | null): Promise<string | null> {
  if (!ref) return null;
  if ('empNumber' in ref) return (await resolveEmployeeNumbers(em, companyId, { [ref.field]: ref.empNumber }))[ref.field]!;
  if ((await em.count(Employee, { id: ref.id, company: companyId })) === 0) throw ApiError.invalid(ref.field, 'does not match an employee of your company');
  return ref.id;
}

/**
 * The steps of project creation: a read-only check, then one transaction that finds or creates the customer,
 * location and contacts and creates the project, with the events of what it created. A failure anywhere
 * leaves nothing behind and no event of a record that would end up unused; a retry after a crash finds what
 * a committed attempt wrote (the project id is chosen before the workflow starts).
 */
export function createProjectCreationActivities({ orm }: ActivityDeps) {
  return {
    /** Everything that can make the operation fail for the caller's reasons, checked before anything is written. */
    async checkProjectCreation(input: ProjectCreationInput): Promise<ResolvedManagers> {
      const em = orm.em.fork();
      const { companyId } = input.actor;
      const existing = await projects.findIdByKey(em, companyId, [input.project.project_code]);
      if (existing && existing !== input.projectId) {
        throw ApiError.conflict('project_code', `A project with project_code "${input.project.project_code}" already exists`);
      }
      if ('id' in input.customer && (await em.count(Customer, { id: input.customer.id, company: companyId })) === 0) {
        throw ApiError.invalid('customer_id', 'does not match a customer of your company');
      }
      return { accountManagerId: await employeeId(em, companyId, input.accountManager), internalManagerId: await employeeId(em, companyId, input.internalManager) };
    },

    /**
     * Customers match by name, locations by name under the customer, contacts by first and last name under the
     * customer, all case-insensitively; existing ones are used unchanged.
     */
    async createProjectWithParties(input: ProjectCreationInput, managers: ResolvedManagers): Promise<ProjectCreationResult> {
      return orm.em.fork().transactional(async (tx) => {
        const { actor } = input;
        const customerId = 'id' in input.customer ? input.customer.id : (await customers.findOrCreate(tx, actor, input.customer)).record.id;
        let locationId: string;
        if ('id' in input.location) {
          if ((await tx.count(Location, { id: input.location.id, customer: customerId })) === 0) throw ApiError.invalid('location_id', 'must be a location of the customer');
          locationId = input.location.id;
        } else {
          locationId = (await locations.findOrCreate(tx, actor, { ...input.location, customer_id: customerId })).record.id;
        }
        const contactIds: string[] = [];
        for (const id of input.contactIds) {
          if ((await tx.count(Contact, { id, customer: customerId })) === 0) throw ApiError.invalid('contact_ids', `contains ${id}, which is not a contact of the customer`);
          if (!contactIds.includes(id)) contactIds.push(id);
        }
        for (const person of input.contacts) {
          const { record } = await contacts.findOrCreate(tx, actor, { ...person, customer_id: customerId });
          if (!contactIds.includes(record.id)) contactIds.push(record.id);
        }
        const { created } = await createProject(
          tx,
          actor,
          {
            projectId: input.projectId,
            project: {
              ...input.project,
              customer_id: customerId,
              location_id: locationId,
              contact_ids: contactIds,
              account_manager_id: managers.accountManagerId,
              internal_manager_id: managers.internalManagerId,
            },
          },
          input.eventId,
        );
        return { projectId: input.projectId, eventId: input.eventId, created };
      });
    },
  };
}

export type ProjectCreationActivities = ReturnType<typeof createProjectCreationActivities>;
