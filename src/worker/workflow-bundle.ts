import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { execFile } from 'node:child_process';
import type { TaskQueueRole } from '../task-queues';

/** The workflows a bundle holds: one task queue's (workflows/operations.ts, workflows/deliveries.ts), or all (workflows/index.ts). */
export type WorkflowSet = TaskQueueRole | 'all';

/** The workflow interceptors that trace each run (its execution, activities, signals, updates) inside its sandbox. */
const WORKFLOW_TRACING_INTERCEPTORS = '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';

/** The workflow code of `workflows` in workflows/, with the tracing interceptors when `traced`; bundling takes seconds of CPU. */
export function bundleWorkflows(traced: boolean, workflows: WorkflowSet = 'all'): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: require.resolve(`../../workflows/${workflows === 'all' ? 'index' : workflows}`),
    workflowInterceptorModules: traced ? [require.resolve(WORKFLOW_TRACING_INTERCEPTORS)] : [],
    // Webpack's report of what it bundled says nothing an operator needs; its warnings and errors still show.
    logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: console.warn, error: console.error },
  });
}

/**
 * Node's options that load code (tsx's loader under `npm start`), passed on to the bundling process; the others
 * (heap sizes, an inspector's port, CPU profiles) are this process's own.
 */
function loaderOptions(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const option = execArgv[i]!;
    if (['--require', '-r', '--import', '--loader', '--experimental-loader'].includes(option)) kept.push(option, execArgv[++i]!);
    else if (/^--(require|import|loader|experimental-loader)=/.test(option)) kept.push(option);
  }
  return kept;
}

/**
 * bundleWorkflows in a process of its own: webpack takes some 60 MB that the V8 heap and malloc keep after it has
 * finished, which the worker would carry for its whole life (docs/decisions.md, "Memory of the processes").
 */
export function bundleWorkflowsApart(traced: boolean, workflows: WorkflowSet): Promise<{ code: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...loaderOptions(process.execArgv), __filename, traced ? 'traced' : 'untraced', workflows],
      { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, code, stderr) => {
        if (error) reject(new Error(`Bundling the workflow code failed: ${stderr.trim() || error.message}`));
        else resolve({ code });
      },
    );
  });
}

if (require.main === module) {
  // An unknown set names no file of workflows/: bundling says so.
  bundleWorkflows(process.argv[2] === 'traced', process.argv[3] as WorkflowSet).then(
    ({ code }) => process.stdout.write(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
