import type { ProjectClosingInput, ProjectClosingResult } from '../src/domain/work/project-closing';
import type { TaskQueueRole } from '../src/task-queues';

export type { ProjectClosingInput, ProjectClosingResult };

/**
 * project.closed, one run per company and project code (id `project.closed/<company>/<code>`), on the operations
 * task queue. Started by runProjectClosing (src/domain/work/project-closing.ts). No signals or updates.
 */
export const PROJECT_CLOSING = 'projectClosing';

/** The task queue it and its activities run on (TEMPORAL_OPERATIONS_TASK_QUEUE names it). */
export const PROJECT_CLOSING_TASK_QUEUE: TaskQueueRole = 'operations';
