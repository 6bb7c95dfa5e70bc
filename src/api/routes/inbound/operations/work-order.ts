import type { EntityManager } from '@mikro-orm/postgresql';
import { resolveEmployeeNumbers } from '../../../../domain/people/employee-numbers';
import { projects } from '../../../../domain/work/projects';
import { searchWorkOrders } from '../../../../domain/work/work-queries';
import { workOrders } from '../../../../domain/work/work-orders';
import { ApiError } from '../../../../errors';
import type {
  WorkOrderCreate,
  WorkOrderCreatedInput,
  WorkOrderDeletedInput,
  WorkOrderSearchInput,
  WorkOrderUpdate,
  WorkOrderUpdatedInput,
} from '../../../../generated/schemas';
import { defineOperation } from '../operation';
import { employeeIdByNumber } from '../references';

const SCHEMA = 'inbound/work-order.json#/$defs';

/** The aliases of webhooks.md 2.2 and the fields they stand for. */
const ALIASES = {
  required_headcount: 'people_required',
  estimated_hours: 'days_hours_required',
  requested_start_date: 'expected_start_date',
  requested_end_date: 'expected_end_date',
  requested_start_time: 'expected_start_time',
  requested_end_time: 'expected_end_time',
} as const;

/** Fields of the inbound data that are not work order fields as they are. */
const TRANSLATED = ['phase_name', 'project_code', 'site_lead_emp_number', 'assigned_emp_numbers', 'scope_of_work', 'work_order_number', ...Object.keys(ALIASES)];

async function projectIdOf(em: EntityManager, companyId: string, code: string): Promise<string> {
  const id = await projects.findIdByKey(em, companyId, [code]);
  if (!id) throw ApiError.invalid('project_code', `does not match a project of your company ("${code}")`);
  return id;
}

/**
 * The work order fields of inbound data, in REST's terms: aliases mapped (one name per field, not both),
 * scope_of_work converted (checklist_name → title, item_name → text, status → completed), employees and
 * the project resolved from their numbers and code.
 */
async function workOrderFields(em: EntityManager, companyId: string, data: WorkOrderCreatedInput | WorkOrderUpdatedInput): Promise<WorkOrderUpdate> {
  const given: Record<string, unknown> = { ...data };
  const fields: Record<string, unknown> = Object.fromEntries(Object.entries(given).filter(([k]) => !TRANSLATED.includes(k)));
  for (const [alias, field] of Object.entries(ALIASES)) {
    if (given[alias] === undefined) continue;
    if (given[field] !== undefined) throw ApiError.invalid(alias, `is another name for ${field}: send one of them`);
    fields[field] = given[alias];
  }
  if (data.phase_name !== undefined) fields.title = data.phase_name;
  if (data.project_code !== undefined) fields.project_id = await projectIdOf(em, companyId, data.project_code);
  if (data.scope_of_work) {
    fields.scope_of_work = {
      checklists: data.scope_of_work.checklists.map((c) => ({
        title: c.checklist_name,
        items: c.items.map((i) => ({ text: i.item_name, completed: i.status === 'complete' })),
      })),
    };
  }
  if (data.site_lead_emp_number !== undefined) fields.site_lead_id = await employeeIdByNumber(em, companyId, data.site_lead_emp_number, 'site_lead_emp_number');
  if (data.assigned_emp_numbers) {
    const numbers = data.assigned_emp_numbers;
    const ids = await resolveEmployeeNumbers(em, companyId, Object.fromEntries(numbers.map((n, i) => [`assigned_emp_numbers[${i}]`, n])));
    fields.assigned_to = numbers.map((_, i) => ids[`assigned_emp_numbers[${i}]`]!);
  }
  return fields as WorkOrderUpdate;
}

async function workOrderIdByNumber(em: EntityManager, companyId: string, number: string): Promise<string> {
  const id = await workOrders.findIdByKey(em, companyId, [number]);
  if (!id) throw new ApiError('NOT_FOUND', `Work order "${number}" not found`, { field: 'work_order_number', reason: 'does not exist' });
  return id;
}

export const workOrderCreated = defineOperation<WorkOrderCreatedInput>({
  eventType: 'work_order.created',
  schema: `${SCHEMA}/created`,
  summary: 'Creates a work order of the project with this project_code; the six aliases and the inbound scope_of_work form are accepted.',
  async handle({ data, actor, eventId, em }) {
    const fields = await workOrderFields(em, actor.companyId, data);
    const input = { ...fields, ...(data.work_order_number ? { work_order_number: data.work_order_number } : {}) } as WorkOrderCreate;
    const record = await workOrders.create(em, actor, input, { eventId });
    return { message: `Work order ${record.work_order_number} created`, recordId: record.id };
  },
});

export const workOrderUpdated = defineOperation<WorkOrderUpdatedInput>({
  eventType: 'work_order.updated',
  schema: `${SCHEMA}/updated`,
  summary: 'Updates the work order with this work_order_number; project_code moves it to another project; a new status must be a legal transition.',
  async handle({ data, actor, eventId, em }) {
    const id = await workOrderIdByNumber(em, actor.companyId, data.work_order_number);
    const { changed } = await workOrders.change(em, actor, id, await workOrderFields(em, actor.companyId, data), { eventId });
    const name = `Work order ${data.work_order_number}`;
    return { message: changed ? `${name} updated` : `${name} unchanged: it already had these values, so no event was sent`, recordId: id };
  },
});

export const workOrderDeleted = defineOperation<WorkOrderDeletedInput>({
  eventType: 'work_order.deleted',
  schema: `${SCHEMA}/deleted`,
  summary: 'Deletes the work order with this work_order_number, or with this phase_name in the project with this project_code.',
  async handle({ data, actor, eventId, em }) {
    const byNumber = data.work_order_number !== undefined;
    const byPhase = data.project_code !== undefined || data.phase_name !== undefined;
    if (byNumber === byPhase || (byPhase && (data.project_code === undefined || data.phase_name === undefined))) {
      throw ApiError.invalid('work_order_number', 'or project_code with phase_name (one of the two) must identify the work order');
    }
    let id: string;
    if (byNumber) id = await workOrderIdByNumber(em, actor.companyId, data.work_order_number!);
    else {
      const projectId = await projects.findIdByKey(em, actor.companyId, [data.project_code!]);
      const matches = projectId
        ? await em.execute<{ id: string }[]>('select id from work_orders where project_id = ? and lower(title) = lower(?)', [projectId, data.phase_name!.trim()])
        : [];
      if (matches.length === 0) throw new ApiError('NOT_FOUND', `No work order "${data.phase_name}" in project "${data.project_code}"`, { field: 'phase_name', reason: 'does not exist' });
      if (matches.length > 1) {
        throw new ApiError('CONFLICT', `Project "${data.project_code}" has ${matches.length} work orders named "${data.phase_name}"; identify it by work_order_number`, {
          field: 'phase_name',
          reason: 'names several work orders',
        });
      }
      id = matches[0]!.id;
    }
    await workOrders.remove(em, actor, id, { eventId, reason: data.reason ?? null });
    return { message: `Work order ${data.work_order_number ?? `"${data.phase_name}" of project ${data.project_code}`} deleted`, recordId: id };
  },
});

export const workOrderSearch = defineOperation<WorkOrderSearchInput>({
  eventType: 'work_order.search',
  schema: `${SCHEMA}/search`,
  summary: 'Finds work orders by phase name (default) or number, optionally in one project: the whole value, or with exact_match false (default) any part of it, ignoring case.',
  async handle({ data, actor, em }) {
    const projectId = data.project_code === undefined ? undefined : await projects.findIdByKey(em, actor.companyId, [data.project_code]);
    // A project filter that names no project matches nothing.
    if (projectId === null) return { search: { results: [] } };
    const results = await searchWorkOrders(em, actor.companyId, {
      term: data.search_term,
      field: data.search_field ?? 'phase_name',
      exact: data.exact_match ?? false,
      projectId,
    });
    return { search: { results } };
  },
});
