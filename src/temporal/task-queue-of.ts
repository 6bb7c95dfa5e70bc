import type { TaskQueues } from '../task-queues';
import type { WorkflowDef } from '../domain/workflow-contract';
import { WORKFLOWS } from '../../workflows/contracts';

/** The configured name of the task queue `workflow` runs on, as its contract says. */
export const taskQueueOf = (workflow: WorkflowDef, queues: TaskQueues): string => queues[workflow.taskQueue];

/** The contract of the workflow type `name` (a schedule names the workflow it starts by type); undefined for a type this version does not run. */
export const workflowNamed = (name: string): WorkflowDef | undefined => WORKFLOWS.find((workflow) => workflow.name === name);
