import { TestWorkflowEnvironment } from '@temporalio/testing';
import { resolveTemporalExecutable, TEMPORAL_CLI_MISSING_HELP } from './cli-binary';
import { registerMissingSearchAttributes } from './register-search-attributes';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';

export interface DevServer {
  address: string;
  uiUrl: string | null;
  stop(): Promise<void>;
}

export interface DevServerOptions {
  /** SQLite file that keeps workflows across restarts; in memory when absent. */
  dbFilename?: string;
  /** Frontend port; a free one when absent. */
  port?: number;
  /** Web UI port; no UI when absent. */
  uiPort?: number;
  namespace: string;
  log?: (message: string) => void;
}

/**
 * SQLite settings of every dev server we start: write-ahead logging, and fsync at checkpoints rather than at
 * every commit. Workflows of one activity ran twice as fast with them on a 2-core machine (docs/benchmarks.md).
 * A crash of the machine can lose the last commits; a dev server is not for production.
 */
export const DEV_SERVER_SQLITE_ARGS = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'];

/**
 * The dynamic configuration of every Temporal server this project starts: the dev server here, and the benchmark's
 * server on PostgreSQL (bench/temporal-server.ts). deploy/temporal-dynamicconfig.yaml sets the same for docker-compose.
 */
export const SERVER_DYNAMIC_CONFIG: Readonly<Record<string, boolean | number>> = {
  // Task queue fairness (docs/operations.md, "Task queues and fairness"): each company's runs carry its id as fairness
  // key, so a company's backlog no longer delays another's on the same queue. Servers 1.29 and 1.30 need the new
  // matcher turned on for it; from 1.31 it is the default.
  'matching.useNewMatcher': true,
  'matching.enableFairness': true,
  // Eager activity execution: an activity scheduled by a workflow task goes back to the worker that completed the task
  // (when it has a free slot) in the completion's answer, instead of through matching. A delivery's attempt then starts
  // at once rather than 20–35 ms later under load: commit → receipt p50 at 12 deliveries/s 68–69 ms against 96–99
  // (docs/benchmarks.md). A worker with no free slot does not ask for it, so fairness still orders a backlog.
  'system.enableActivityEagerExecution': true,
  // How often the history service may read its transfer queue (the tasks that hand a run's workflow task to
  // matching): 20 times a second per history shard by default, sized for clusters of hundreds of shards. The dev
  // server has one, so under a dozen deliveries a second each new run's first workflow task waited some 30 ms for
  // that budget, and went on waiting for up to 20 s after a load: commit → receipt p50 at 12 deliveries/s 39 ms
  // against 60–78 (docs/benchmarks.md, "One delivery's timeline").
  'history.transferProcessorMaxPollRPS': 1000,
  // How many runs' state the history service keeps in memory, each up to an hour (history.cacheTTL). A server on its
  // own keeps up to 128,000, and on a one-hour soak at 10 deliveries a second grew by some 28 KB a delivery, 1 GB in
  // all (docs/benchmarks.md); the CLI's dev server caps it at 8,096 itself. A delivery's run is done in seconds, so
  // every live run still fits.
  'history.hostLevelCacheMaxSize': 8096,
};

/** SERVER_DYNAMIC_CONFIG as the dev server's command-line options. */
const DYNAMIC_CONFIG_ARGS = Object.entries(SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${String(value)}`]);

/**
 * Runs the Temporal CLI dev server as a child process (through the SDK's ephemeral-server support, which
 * owns its lifecycle) with this project's search attributes registered.
 */
export async function startTemporalDevServer(options: DevServerOptions): Promise<DevServer> {
  const executable = resolveTemporalExecutable(options.log);
  let env: TestWorkflowEnvironment;
  try {
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable,
        dbFilename: options.dbFilename,
        port: options.port,
        ui: options.uiPort !== undefined,
        uiPort: options.uiPort,
        namespace: options.namespace,
        searchAttributes: SEARCH_ATTRIBUTES,
        log: { format: 'pretty', level: 'error' },
        extraArgs: [...DEV_SERVER_SQLITE_ARGS, ...DYNAMIC_CONFIG_ARGS],
      },
    });
  } catch (error) {
    throw new Error(`${TEMPORAL_CLI_MISSING_HELP}\nCause: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  await registerMissingSearchAttributes(env.connection, options.namespace);
  return {
    address: env.address,
    uiUrl: options.uiPort !== undefined ? `http://localhost:${options.uiPort}` : null,
    stop: () => env.teardown(),
  };
}
