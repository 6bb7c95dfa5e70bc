import { WORK_ORDER_STATUSES } from '../../domain/work/work-order.entity';
import { listSchedule } from '../../domain/work/work-queries';
import type { QueryParam } from '../routes/route-spec';
import { byId, byValue, dateParam } from './filters';
import { defineResource } from './resource';

/** The schedule is a query over work orders, projects and crews, not one table: it reads its parameters itself. */
const params: QueryParam[] = [
  dateParam('from', 'Entries that end on or after this date.'),
  dateParam('to', 'Entries that start on or before this date.'),
  byId('employee_id', 'employee', 'Entries this employee is on (site lead or crew).').param,
  byId('project_id', 'project', 'Entries of this project.').param,
  byValue('status', 'status', WORK_ORDER_STATUSES, 'Entries whose work order is in this status.').param,
];

export const schedulesResource = defineResource({
  collection: 'schedules',
  label: 'Schedule entry',
  plural: 'schedule entries',
  description: "The schedule a dispatcher's calendar shows: one entry per work order with a start date, with its place and crew. Read only.",
  schema: 'rest/schedules.json',
  recordDef: 'entry',
  listOrder: 'By start (date, then time), then work order number',
  service: {
    list: (em, companyId, page, _where, values) =>
      listSchedule(em, companyId, page, {
        from: values.from as string | undefined,
        to: values.to as string | undefined,
        employeeId: values.employee_id as string | undefined,
        projectId: values.project_id as string | undefined,
        status: values.status as string | undefined,
      }),
  },
  listParams: params,
  updatedSince: false,
});
