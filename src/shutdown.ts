import type { Logger } from './logger';

/** Runs `steps` in order on the first SIGINT, SIGTERM or SIGHUP, then exits; a second signal exits at once. */
export function onShutdownSignal(logger: Logger, steps: (() => Promise<unknown>)[]): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    let code = 0;
    for (const step of steps) {
      try {
        await step();
      } catch (error) {
        code = 1;
        logger.error({ err: error }, 'shutdown step failed');
      }
    }
    process.exit(code);
  };
  process.on('SIGINT', stop).on('SIGTERM', stop).on('SIGHUP', stop);
}
