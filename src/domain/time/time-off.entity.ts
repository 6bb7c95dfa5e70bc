import { Entity, Index, ManyToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';
import { Employee } from '../people/employee.entity';

export const TIME_OFF_TYPES = ['vacation', 'sick_leave', 'personal', 'unpaid', 'other'] as const;
export type TimeOffType = (typeof TIME_OFF_TYPES)[number];
export const TIME_OFF_STATUSES = ['approved', 'pending', 'denied'] as const;
export type TimeOffStatus = (typeof TIME_OFF_STATUSES)[number];

/**
 * Time off of an employee (webhooks.md 2.7), identified by the employee with its start and end dates. Times
 * are HH:MM:SS for a partial day, null for full days.
 */
@Entity({ tableName: 'time_off' })
@Index({ name: 'time_off_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({ name: 'time_off_employee_dates_unique', properties: ['employee', 'startDate', 'endDate'] })
export class TimeOff extends CompanyRecord {
  @ManyToOne(() => Employee, { ref: true, deleteRule: 'cascade' })
  employee!: Ref<Employee>;

  @Property({ type: 'date' })
  startDate!: string;

  @Property({ type: 'date' })
  endDate!: string;

  @Property({ type: 'text', nullable: true })
  startTime: string | null = null;

  @Property({ type: 'text', nullable: true })
  endTime: string | null = null;

  @Property({ type: 'text' })
  timeOffType: Opt<TimeOffType> = 'vacation';

  @Property({ type: 'text' })
  status: Opt<TimeOffStatus> = 'approved';

  @Property({ type: 'text', nullable: true })
  reason: string | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;
}
