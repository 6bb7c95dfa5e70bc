import { v7 as uuidv7 } from 'uuid';
import { contacts } from '../../../../domain/business/contacts';
import { customers } from '../../../../domain/business/customers';
import { locations } from '../../../../domain/business/locations';
import { runProjectClosing } from '../../../../domain/work/project-closing';
import { runProjectCreation } from '../../../../domain/work/project-creation';
import type { EmployeeRef } from '../../../../../workflows/project-creation.contract';
import { assertProjectCodeAvailable, projectIdByCode, projects } from '../../../../domain/work/projects';
import { searchProjects } from '../../../../domain/work/work-queries';
import { ApiError } from '../../../../errors';
import type { ProjectClosedInput, ProjectCreatedInput, ProjectDeletedInput, ProjectSearchInput, ProjectUpdate, ProjectUpdatedInput } from '../../../../generated/schemas';
import { defineOperation } from '../operation';
import { employeeIdByNumber } from '../references';

const SCHEMA = 'inbound/project.json#/$defs';

/** Only what was given: an inbound update changes the fields it names. */
const given = <T extends object>(fields: T): Partial<T> => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;

type ProjectData = ProjectCreatedInput | ProjectUpdatedInput;

const customerDetails = (data: ProjectData) =>
  given({
    type: data.customer_type,
    email: data.customer_email,
    phone: data.customer_phone,
    website: data.customer_website,
    status: data.customer_status,
    notes: data.customer_notes,
  });

const locationDetails = (data: ProjectData) =>
  given({
    address_line_1: data.location_address_line_1,
    address_line_2: data.location_address_line_2,
    city: data.location_city,
    province: data.location_province,
    postal_code: data.location_postal_code,
    country: data.location_country,
    notes: data.location_notes,
  });

const projectFields = (data: ProjectData) =>
  given({
    name: data.project_name,
    description: data.description,
    priority: data.priority,
    color_index: data.color_index,
    start_date: data.start_date,
    end_date: data.end_date,
    equipment: data.equipment,
    custom_fields: data.custom_fields,
    docs: data.docs,
  });

const byNumber = (field: string, empNumber: string | null | undefined): EmployeeRef | null => (empNumber ? { field, empNumber } : null);

/** A multi-step operation: the projectCreation workflow (check, then customer, location, contacts and project in one transaction). */
export const projectCreated = defineOperation<ProjectCreatedInput>({
  eventType: 'project.created',
  schema: `${SCHEMA}/created`,
  summary: 'Creates a project with its customer, location and contacts (a workflow; a resend never duplicates anything).',
  async handle({ data, actor, eventId, em, deps }) {
    // A resend of a finished creation is answered here without starting a workflow.
    await assertProjectCodeAvailable(em, actor.companyId, data.project_code);
    const outcome = await runProjectCreation(
      deps.workflows,
      {
        actor,
        eventId,
        projectId: uuidv7(),
        project: { project_code: data.project_code, name: data.project_name, ...projectFields(data) },
        customer: { name: data.customer_name, ...customerDetails(data) },
        location: { name: data.location_name, ...locationDetails(data) },
        contacts: data.contacts ?? [],
        contactIds: [],
        accountManager: byNumber('account_manager_emp_number', data.account_manager_emp_number),
        internalManager: byNumber('internal_manager_emp_number', data.internal_manager_emp_number),
      },
      deps.config.inboundWaitMs,
    );
    if (outcome.state === 'running') {
      return {
        status: 202,
        message: `Project ${data.project_code} accepted and still being created (workflow ${outcome.workflowId})`,
        recordId: outcome.projectId,
        eventId: outcome.eventId,
      };
    }
    return { message: `Project ${data.project_code} created`, recordId: outcome.result.projectId, eventId: outcome.result.eventId };
  },
});

/**
 * Updates a project in one transaction: customer_name and location_name switch them (found by name or
 * created, as creation does), customer_* and location_* fields update the (new) customer's and location's
 * details, contacts are found or created and linked, and the project changes last.
 */
export const projectUpdated = defineOperation<ProjectUpdatedInput>({
  eventType: 'project.updated',
  schema: `${SCHEMA}/updated`,
  summary: 'Updates the project with this project_code; may switch or update its customer and location, and link contacts.',
  async handle({ data, actor, eventId, em }) {
    const { companyId } = actor;
    const changed = await em.transactional(async (tx) => {
      const projectId = await projectIdByCode(tx, companyId, data.project_code);
      const current = await projects.get(tx, companyId, projectId);
      const customerId = data.customer_name
        ? (await customers.findOrCreate(tx, actor, { name: data.customer_name, ...customerDetails(data) })).record.id
        : current.customer_id;
      if (Object.keys(customerDetails(data)).length) await customers.update(tx, actor, customerId, customerDetails(data));
      if (customerId !== current.customer_id && !data.location_name) {
        throw ApiError.invalid('location_name', "is needed when the customer changes: the project's location must be the new customer's");
      }
      const locationId = data.location_name
        ? (await locations.findOrCreate(tx, actor, { customer_id: customerId, name: data.location_name, ...locationDetails(data) })).record.id
        : current.location_id;
      if (Object.keys(locationDetails(data)).length) await locations.update(tx, actor, locationId, locationDetails(data));
      const linked = customerId === current.customer_id ? [...current.contact_ids] : [];
      for (const person of data.contacts ?? []) {
        const { record } = await contacts.findOrCreate(tx, actor, { ...person, customer_id: customerId });
        if (!linked.includes(record.id)) linked.push(record.id);
      }
      const patch: ProjectUpdate = {
        ...projectFields(data),
        customer_id: customerId,
        location_id: locationId,
        contact_ids: linked,
        ...given({
          account_manager_id: await employeeIdByNumber(tx, companyId, data.account_manager_emp_number, 'account_manager_emp_number'),
          internal_manager_id: await employeeIdByNumber(tx, companyId, data.internal_manager_emp_number, 'internal_manager_emp_number'),
        }),
      };
      return (await projects.change(tx, actor, projectId, patch, { eventId })).changed;
    });
    const project = `Project ${data.project_code}`;
    return { message: changed ? `${project} updated` : `${project} unchanged: it already had these values, so no event was sent`, recordId: await projectIdByCode(em, companyId, data.project_code) };
  },
});

export const projectDeleted = defineOperation<ProjectDeletedInput>({
  eventType: 'project.deleted',
  schema: `${SCHEMA}/deleted`,
  summary: 'Deletes the project with this project_code, and its work orders.',
  async handle({ data, actor, eventId, em }) {
    const projectId = await projectIdByCode(em, actor.companyId, data.project_code);
    await projects.remove(em, actor, projectId, { eventId, reason: data.reason ?? null });
    return { message: `Project ${data.project_code} deleted`, recordId: projectId };
  },
});

/** A multi-step operation: the projectClosing workflow. */
export const projectClosed = defineOperation<ProjectClosedInput>({
  eventType: 'project.closed',
  schema: `${SCHEMA}/closed`,
  summary: 'Closes the project; while work orders are incomplete it fails (409, naming them) unless close_work_orders is true, which closes them too (a workflow).',
  async handle({ data, actor, eventId, em, deps }) {
    const projectId = await projectIdByCode(em, actor.companyId, data.project_code);
    const input = { actor, eventId, projectId, projectCode: data.project_code, closeWorkOrders: data.close_work_orders ?? false };
    const outcome = await runProjectClosing(deps.workflows, input, deps.config.inboundWaitMs);
    if (outcome.state === 'running') {
      return { status: 202, message: `Project ${data.project_code} is being closed (workflow ${outcome.workflowId})`, recordId: projectId };
    }
    const { result } = outcome;
    if (!result.eventId) return { message: `Project ${data.project_code} was closed already`, recordId: projectId };
    const orders = result.closedWorkOrders ? ` with ${result.closedWorkOrders} work order(s)` : '';
    return { message: `Project ${data.project_code} closed${orders}`, recordId: projectId, eventId: result.eventId };
  },
});

export const projectSearch = defineOperation<ProjectSearchInput>({
  eventType: 'project.search',
  schema: `${SCHEMA}/search`,
  summary: 'Finds projects by name (default) or code: the whole value, or with exact_match false (default) any part of it, ignoring case.',
  async handle({ data, actor, em }) {
    const results = await searchProjects(em, actor.companyId, { term: data.search_term, field: data.search_field ?? 'project_name', exact: data.exact_match ?? false });
    return { search: { results } };
  },
});
