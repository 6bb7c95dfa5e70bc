import type { ProjectCreationInput, ProjectCreationResult } from '../src/domain/work/project-creation';
import type { TaskQueueRole } from '../src/task-queues';

export type { ProjectCreationInput, ProjectCreationResult };

/**
 * project.created, one run per company and project code (id `project.created/<company>/<code>`), on the operations
 * task queue. Started by runProjectCreation (src/domain/work/project-creation.ts). No signals or updates.
 */
export const PROJECT_CREATION = 'projectCreation';

/** The task queue it and its activities run on (TEMPORAL_OPERATIONS_TASK_QUEUE names it). */
export const PROJECT_CREATION_TASK_QUEUE: TaskQueueRole = 'operations';
