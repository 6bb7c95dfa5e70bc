import { WORK_ORDER_STATUSES } from '../../domain/work/work-order.entity';
import { workOrders } from '../../domain/work/work-orders';
import { byDate, byId, byText, byValue, type Filter } from './filters';
import { defineResource } from './resource';

/** `?assigned_to=<employee id>`: the site lead or a member of the crew. */
const assignedTo: Filter = {
  param: byId('assigned_to', 'assignees', 'Work orders this employee is on (site lead or crew).').param,
  where: (id) => ({ $or: [{ siteLead: id }, { assignees: { $some: { id } } }] }),
};

export const workOrdersResource = defineResource({
  collection: 'work-orders',
  label: 'Work order',
  plural: 'work orders',
  description: 'Units of work on a project (rest-api.md 2.2). A new status must be an allowed move (README, "Projects, work orders and schedules"); a closed work order does not change.',
  schema: 'rest/work-orders.json',
  service: workOrders,
  filters: [
    byId('project_id', 'project', 'Work orders of this project.'),
    byValue('status', 'status', WORK_ORDER_STATUSES, 'Work orders in this status.'),
    assignedTo,
    byText('work_order_number', 'workOrderNumber', 'The work order with this number (ignoring case).'),
    byDate('scheduled_from', 'Work orders scheduled to run on or after this date (their end, or start when they have no end).', (date) => ({
      $or: [{ endDate: { $gte: date } }, { endDate: null, startDate: { $gte: date } }],
    })),
    byDate('scheduled_to', 'Work orders scheduled to start on or before this date.', (date) => ({ startDate: { $lte: date } })),
  ],
});
