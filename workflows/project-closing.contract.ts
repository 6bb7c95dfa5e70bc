import type { Actor } from '../src/domain/accounts/actor';
import { workflowDef } from '../src/domain/workflow-contract';

/**
 * project.closed, one run per company and project code (id `project.closed/<company>/<code>`), on the operations
 * task queue. Started by runProjectClosing (src/domain/work/project-closing.ts). No signals or updates.
 */
export const PROJECT_CLOSING = workflowDef<ProjectClosingInput, ProjectClosingResult>()({ name: 'projectClosing', taskQueue: 'operations' });

/** Input of the projectClosing workflow. */
export interface ProjectClosingInput {
  actor: Actor;
  /** The id of the project.closed event. */
  eventId: string;
  projectId: string;
  projectCode: string;
  /** Close the incomplete work orders too; without it, closing fails while there are any. */
  closeWorkOrders: boolean;
}

export interface ProjectClosingResult {
  projectId: string;
  /** The project.closed event's id, or null when the project was closed already. */
  eventId: string | null;
  closedWorkOrders: number;
}
