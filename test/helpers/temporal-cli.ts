import { execFile } from 'node:child_process';
import { resolveTemporalExecutable } from '../../src/temporal/cli-binary';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the Temporal CLI against `address`, as operators do. Asynchronous on purpose: the worker runs in this
 * process, and a synchronous spawn would stop it from handling what the command asks for (an update waits).
 */
export async function temporalCli(address: string, args: string[]): Promise<CliResult> {
  const cli = resolveTemporalExecutable();
  if (cli.type !== 'existing-path') throw new Error('the Temporal CLI is needed to act on workflows the way operators do');
  return new Promise((resolve) => {
    execFile(cli.path, [...args, '--address', address], { encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}
