/**
 * The task queues the service runs on, by role. Each has workers and slot budgets of its own, so a backlog on one
 * never takes capacity from the other: `operations` runs the multi-step workflows (project creation and closing,
 * payroll runs, approvals, scheduled reports, retention), `deliveries` runs outbound deliveries and bulk recoveries.
 * Each workflow's contract says which one it runs on; its activities run on the same queue.
 */
export const TASK_QUEUE_ROLES = ['operations', 'deliveries'] as const;

export type TaskQueueRole = (typeof TASK_QUEUE_ROLES)[number];

/** The configured name of each role's task queue (TEMPORAL_OPERATIONS_TASK_QUEUE, TEMPORAL_DELIVERIES_TASK_QUEUE). */
export type TaskQueues = Record<TaskQueueRole, string>;
