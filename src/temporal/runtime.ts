import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

// One step quieter than ours: at INFO the SDK prints the whole webpack report of the workflow bundle.
const LEVELS: Record<string, LogLevel> = { trace: 'TRACE', debug: 'INFO', info: 'WARN', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };

/**
 * Installs the Temporal runtime once per process: SDK logs at our level, and no signal handlers of its own
 * (our entry points shut the worker down in order with everything else).
 */
export function installTemporalRuntime(logLevel: string): void {
  if (installed) return;
  Runtime.install({ logger: new DefaultLogger(LEVELS[logLevel] ?? 'INFO'), shutdownSignals: [] });
  installed = true;
}

let installed = false;
