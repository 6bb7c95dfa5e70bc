import { ApiError } from '../../errors';
import type { WorkOrderStatus } from './work-order.entity';

/**
 * The work order lifecycle: where each status may go. Closing with a project (project.closed with
 * close_work_orders) is the one move outside it: any incomplete work order becomes closed.
 */
export const TRANSITIONS: Readonly<Record<WorkOrderStatus, readonly WorkOrderStatus[]>> = {
  open: ['scheduled', 'in_progress', 'on_hold', 'cancelled'],
  scheduled: ['open', 'in_progress', 'on_hold', 'cancelled'],
  in_progress: ['on_hold', 'complete', 'cancelled'],
  on_hold: ['open', 'scheduled', 'in_progress', 'cancelled'],
  complete: ['in_progress', 'closed'],
  closed: [],
  cancelled: ['open'],
};

/** Statuses a work order may be created in. */
export const CREATABLE_STATUSES: readonly WorkOrderStatus[] = ['open', 'scheduled', 'in_progress', 'on_hold'];

/** Work that is not finished: what keeps a project from closing. */
export const INCOMPLETE_STATUSES: readonly WorkOrderStatus[] = ['open', 'scheduled', 'in_progress', 'on_hold'];

/** 409 naming the current status unless `from` may become `to`. */
export function assertTransition(workOrderNumber: string, from: WorkOrderStatus, to: WorkOrderStatus): void {
  if (from === to || TRANSITIONS[from].includes(to)) return;
  const allowed = TRANSITIONS[from].length ? TRANSITIONS[from].join(', ') : 'none';
  throw new ApiError('CONFLICT', `Work order ${workOrderNumber} is ${from} and cannot become ${to} (from ${from}: ${allowed})`, {
    field: 'status',
    reason: `current status ${from}`,
  });
}
