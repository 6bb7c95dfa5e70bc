import { Worker } from '@temporalio/worker';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';

/**
 * A Worker class whose Workers, in one process, run their workflows on one thread. The SDK gives each Worker a
 * workflow thread of its own, and each thread loads the SDK's protobuf definitions and the workflow bundle anew: some
 * 25 MB a task queue (docs/benchmarks.md, "Memory"). Workflow tasks are short and each queue's workflow task slots
 * bound how many wait there, so one thread serves both queues. The thread starts with the first Worker and ends
 * when the last one has stopped; a Worker created after that starts a new one.
 */
export function workersSharingOneWorkflowThread(): typeof Worker {
  let shared: { creator: Promise<WorkflowCreator>; users: number } | null = null;

  return class SharedWorkflowThreadWorker extends Worker {
    protected static override async createWorkflowCreator(...args: Parameters<typeof Worker.createWorkflowCreator>): Promise<WorkflowCreator> {
      const current = (shared ??= { creator: super.createWorkflowCreator(...args), users: 0 });
      current.users += 1;
      let creator: WorkflowCreator;
      try {
        creator = await current.creator;
      } catch (error) {
        if (shared === current) shared = null;
        throw error;
      }
      let destroyed = false;
      return {
        createWorkflow: (options) => creator.createWorkflow(options),
        async destroy() {
          if (destroyed) return;
          destroyed = true;
          current.users -= 1;
          if (current.users > 0) return;
          if (shared === current) shared = null;
          await creator.destroy();
        },
      };
    }
  };
}
