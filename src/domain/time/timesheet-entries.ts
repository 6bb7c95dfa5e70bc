import { ref } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TimesheetEntryChange, TimesheetEntry as TimesheetEntryRecord } from '../../generated/schemas';
import { ApiError } from '../../errors';
import { findIdIgnoringCase } from '../natural-keys';
import type { WriteContext } from '../records/wire-mapping';
import { WorkOrder } from '../work/work-order.entity';
import { type Timesheet, TimesheetEntry } from './timesheet.entity';
import { needsWorkOrder, WorkType } from './work-type.entity';

/** An entry as REST shows it (its work type and work order loaded). */
export function timesheetEntryRecord(entry: TimesheetEntry): TimesheetEntryRecord {
  const type = entry.workType.getEntity();
  const workOrder = entry.workOrder?.getEntity() ?? null;
  return {
    id: entry.id,
    entry_date: entry.entryDate,
    hours: entry.hours,
    work_type_id: type.id,
    work_type_code: type.code,
    work_type_name: type.name,
    work_order_id: workOrder?.id ?? null,
    work_order_number: workOrder?.workOrderNumber ?? null,
    work_order_title: workOrder?.title ?? null,
    start_time: entry.startTime,
    end_time: entry.endTime,
    notes: entry.notes,
  };
}

/**
 * The work type an entry names (webhooks.md 2.8): by work_type_code, else by work_type_name among active
 * types, else the company's default. An inactive type is refused, whichever way it is named.
 */
async function resolveWorkType(em: EntityManager, companyId: string, input: TimesheetEntryChange, path: string): Promise<WorkType | null> {
  if (input.work_type_code !== undefined) {
    const id = await findIdIgnoringCase(em, 'work_types', { company_id: companyId }, { code: input.work_type_code });
    if (!id) throw ApiError.invalid(`${path}.work_type_code`, `does not match a work type of your company ("${input.work_type_code}")`);
    const type = await em.findOneOrFail(WorkType, id);
    if (!type.isActive) throw ApiError.invalid(`${path}.work_type_code`, `names the inactive work type ${type.code} (${type.name})`);
    return type;
  }
  if (input.work_type_name !== undefined) {
    // Names are unique in the company, so an inactive type of that name is the only one there is.
    const id = await findIdIgnoringCase(em, 'work_types', { company_id: companyId }, { name: input.work_type_name });
    if (!id) throw ApiError.invalid(`${path}.work_type_name`, `does not match an active work type of your company ("${input.work_type_name}")`);
    const type = await em.findOneOrFail(WorkType, id);
    if (!type.isActive) throw ApiError.invalid(`${path}.work_type_name`, `names the inactive work type ${type.name}`);
    return type;
  }
  return null;
}

async function resolveWorkOrder(em: EntityManager, companyId: string, number: string, field: string): Promise<WorkOrder> {
  const id = await findIdIgnoringCase(em, 'work_orders', { company_id: companyId }, { work_order_number: number });
  if (!id) throw ApiError.invalid(field, `does not match a work order of your company ("${number}")`);
  return em.findOneOrFail(WorkOrder, id);
}

/**
 * Writes the `entries` of a create or update (webhooks.md 2.8): each one with entry_id changes that entry (the
 * fields given), each one without is added; the others stay. entry_date must equal the timesheet's date, and
 * a type that needs a work order gets one. The timesheet's date is set before its entries (mapping order).
 */
export async function writeEntries(timesheet: Timesheet, inputs: TimesheetEntryChange[], { em, companyId, field }: WriteContext): Promise<void> {
  for (const [i, input] of inputs.entries()) {
    const path = `${field}[${i}]`;
    let entry: TimesheetEntry;
    if (input.entry_id !== undefined) {
      const existing = timesheet.entries.getItems().find((e) => e.id === input.entry_id?.toLowerCase());
      if (!existing) throw ApiError.invalid(`${path}.entry_id`, 'does not match an entry of this timesheet');
      entry = existing;
    } else {
      entry = new TimesheetEntry();
      entry.company = timesheet.company;
      timesheet.entries.add(entry);
    }
    if (input.entry_date !== undefined) {
      if (input.entry_date !== timesheet.timesheetDate) throw ApiError.invalid(`${path}.entry_date`, `must equal timesheet_date (${timesheet.timesheetDate})`);
      entry.entryDate = input.entry_date;
    }
    if (input.hours !== undefined) entry.hours = input.hours;
    const type = await resolveWorkType(em, companyId, input, path);
    if (type) entry.workType = ref(type);
    else if (input.entry_id === undefined) {
      entry.workType = ref(await em.findOneOrFail(WorkType, { company: companyId, isDefault: true }));
    }
    if (input.work_order_number !== undefined) {
      entry.workOrder = input.work_order_number === null ? null : ref(await resolveWorkOrder(em, companyId, input.work_order_number, `${path}.work_order_number`));
    }
    if (input.start_time !== undefined) entry.startTime = input.start_time;
    if (input.end_time !== undefined) entry.endTime = input.end_time;
    if (input.notes !== undefined) entry.notes = input.notes;
    const workType = entry.workType.getEntity();
    if (needsWorkOrder(workType) && !entry.workOrder) {
      const why = workType.requiresWorkOrder ? 'requires one' : 'is billable';
      throw ApiError.invalid(`${path}.work_order_number`, `is required: work type ${workType.code ?? workType.name} ${why}`);
    }
  }
}
