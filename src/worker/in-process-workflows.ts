import { Worker } from '@temporalio/worker';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm';
import vm from 'node:vm';

/**
 * A Worker class whose Workers, in one process, run their workflows in the process's own thread, in one sandbox per
 * workflow bundle (a V8 context reused by every run, as the SDK's default does on a thread of its own): Workers of the
 * same bundle share it.
 *
 * The SDK would give each Worker a workflow thread, hand every activation to it as a message (a structured clone each
 * way), time every call into the sandbox with a watchdog of Node's (a thread started per call: 170 µs of CPU each),
 * and record a stack trace for every promise a workflow makes (for the UI's stack trace query). For a run of one
 * workflow task with a local activity, the delivery's, that came to 14.5 ms of worker CPU against 7.8 ms here, the
 * same main-thread time in both (docs/benchmarks.md, "Delivery engine"). What it costs:
 * - No stack trace query: the UI's "Stack Trace" tab says they are not enabled. A delivery's current details say what
 *   its run waits for.
 * - No deadlock detection per call: a workflow that never yields would stall the process. src/worker/event-loop-watch.ts
 *   kills a process whose event loop has not turned for a while, so that another takes over its runs.
 * - Activations run on the event loop the worker's activities use: each is well under a millisecond.
 *
 * A sandbox starts with the first Worker of its bundle and is destroyed when the last one has stopped; a Worker created
 * after that makes a new one.
 */
export function workersRunningWorkflowsInProcess(): typeof Worker {
  /** The sandboxes, by their bundle's code. */
  const sandboxes = new Map<string, { creator: WorkflowCreator; users: number }>();

  return class InProcessWorkflowsWorker extends Worker {
    protected static override async createWorkflowCreator(...[bundle, compiled]: Parameters<typeof Worker.createWorkflowCreator>): Promise<WorkflowCreator> {
      // What ReusableVMWorkflowCreator.create does, but for its global handlers (the stack trace hooks) and the timeout.
      const existing = sandboxes.get(bundle.code);
      const current = existing ?? {
        creator: new ReusableVMWorkflowCreator(
          new vm.Script(bundle.code, { filename: bundle.filename }),
          bundle,
          undefined as unknown as number,
          new Set(compiled.activities.keys()),
          undefined,
        ),
        users: 0,
      };
      if (!existing) sandboxes.set(bundle.code, current);
      current.users += 1;
      let destroyed = false;
      return {
        createWorkflow: (options) => current.creator.createWorkflow(options),
        async destroy() {
          if (destroyed) return;
          destroyed = true;
          current.users -= 1;
          if (current.users > 0) return;
          if (sandboxes.get(bundle.code) === current) sandboxes.delete(bundle.code);
          await current.creator.destroy();
        },
      };
    }
  };
}
