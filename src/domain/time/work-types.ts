import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkTypeCreate, WorkType as WorkTypeRecord, WorkTypeUpdate } from '../../generated/schemas';
import { ApiError } from '../../errors';
import type { Company } from '../accounts/company.entity';
import { findIdIgnoringCase, lockNaturalKey } from '../natural-keys';
import { RecordService } from '../records/record-service';
import { TimesheetEntry } from './timesheet.entity';
import { WorkType } from './work-type.entity';

/** The work types every company has (webhooks.md 2.8); REG is the default until the company picks another. */
export const BUILT_IN_WORK_TYPES = [
  { code: 'REG', name: 'Regular', billable: true, payMultiplier: 1, isDefault: true },
  { code: 'OT', name: 'Overtime', billable: true, payMultiplier: 1.5, isDefault: false },
  { code: 'VAC', name: 'Vacation', billable: false, payMultiplier: 1, isDefault: false },
  { code: 'SICK', name: 'Sick leave', billable: false, payMultiplier: 1, isDefault: false },
  { code: 'HOL', name: 'Holiday', billable: false, payMultiplier: 1, isDefault: false },
] as const;

/** Gives a new company the built-in work types, in the caller's unit of work. */
export function addBuiltInWorkTypes(em: EntityManager, company: Company): void {
  for (const type of BUILT_IN_WORK_TYPES) em.create(WorkType, { company, ...type, isBuiltIn: true });
}

const conflict = (field: string, message: string, reason: string) => new ApiError('CONFLICT', message, { field, reason });

/**
 * A company's work types. Built-ins keep their codes and cannot be deleted; one type is the default (marking
 * another clears it, and it cannot be deactivated); a type that entries use cannot be deleted (deactivate it).
 */
export const workTypes = new RecordService<WorkType, WorkTypeRecord, WorkTypeCreate, WorkTypeUpdate>({
  entity: WorkType,
  label: 'Work type',
  wire: {
    code: {
      read: (type) => type.code,
      write: (type, value, { field }) => {
        if (type.isBuiltIn && value !== type.code) throw ApiError.invalid(field, `is ${type.code} for this built-in work type and cannot change`);
        type.code = value as string | null;
      },
    },
    name: 'name',
    billable: 'billable',
    requires_work_order: 'requiresWorkOrder',
    pay_multiplier: 'payMultiplier',
    is_active: 'isActive',
    is_default: {
      read: (type) => type.isDefault,
      write: (type, value, { field }) => {
        if (type.isDefault && value === false) {
          throw conflict(field, `"${type.name}" is the default work type: make another type the default instead`, 'the company needs a default work type');
        }
        type.isDefault = value as boolean;
      },
    },
    is_built_in: { read: (type) => type.isBuiltIn },
  },
  naturalKey: { scope: null, fields: ['name'], describe: (t) => `A work type named "${t.name}" already exists` },
  async check(em, type) {
    if (type.code !== null) {
      await lockNaturalKey(em, type.company.id, 'work_types.code', type.code);
      const holder = await findIdIgnoringCase(em, 'work_types', { company_id: type.company.id }, { code: type.code });
      if (holder && holder !== type.id) throw ApiError.conflict('code', `A work type with code "${type.code}" already exists`);
    }
    if (type.isDefault) {
      if (!type.isActive) throw conflict('is_active', 'The default work type must be active', 'is the default work type');
      // One writer of a company's default at a time; the type that stops being the default changes too.
      await lockNaturalKey(em, type.company.id, 'work_types.default');
      await em.nativeUpdate(WorkType, { company: type.company.id, isDefault: true, id: { $ne: type.id } }, { isDefault: false, updatedAt: new Date() });
    }
  },
  async beforeDelete(em, type) {
    if (type.isBuiltIn) throw conflict('id', `"${type.name}" is a built-in work type and cannot be deleted; deactivate it instead`, 'is built in');
    if (type.isDefault) throw conflict('id', `"${type.name}" is the default work type: make another type the default first`, 'is the default work type');
    const entries = await em.count(TimesheetEntry, { workType: type });
    if (entries > 0) throw conflict('id', `Work type "${type.name}" is used by ${entries} timesheet entr${entries === 1 ? 'y' : 'ies'}; deactivate it instead`, 'in use');
  },
});
