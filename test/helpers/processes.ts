import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs an entry point of src/ (e.g. worker/main.ts) as a separate Node process, with `env` added to ours.
 * One process, no wrapper, so SIGKILL really kills what runs the code.
 */
export function spawnEntryPoint(entry: string, env: Record<string, string>): SpawnedProcess {
  return spawnNode(['--import', 'tsx', path.join(PROJECT_ROOT, 'src', entry)], env);
}

/**
 * Runs a package.json start script (`start:api`, `start:worker`) from the built dist/ as production does, Node's
 * flags included, but as one Node process: npm and sh would stand between SIGKILL and the code.
 */
export function spawnStartScript(script: 'start:api' | 'start:worker', env: Record<string, string>): SpawnedProcess {
  const command = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[script]!;
  const [exec, node, ...args] = command.split(/\s+/);
  if (exec !== 'exec' || node !== 'node') throw new Error(`${script} is expected to be "exec node …", not ${JSON.stringify(command)}`);
  return spawnNode(args, env);
}

export type SpawnedProcess = ChildProcess & { output: () => string };

function spawnNode(args: string[], env: Record<string, string>): SpawnedProcess {
  const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return Object.assign(child, { output: () => output });
}

/**
 * Waits until a worker spawned by spawnEntryPoint says it runs. Generous: on 2 busy cores (the fuzz test and the
 * benchmark smoke test beside it) loading the code and connecting has taken over a minute. On time-out the error
 * carries what the worker printed.
 */
export async function workerStarted(child: SpawnedProcess, which: string): Promise<void> {
  try {
    await waitFor(async () => child.output().includes('worker running') || child.exitCode !== null, 150_000, `the ${which} worker to start`);
  } catch (error) {
    throw new Error(`${(error as Error).message}; it printed:\n${child.output().slice(-2000)}`, { cause: error });
  }
  if (!child.output().includes('worker running')) throw new Error(`The ${which} worker exited (${child.exitCode}) before it ran:\n${child.output().slice(-2000)}`);
}

export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/**
 * Rate-limit windows are fixed and aligned to the clock; a burst that crossed into the next minute would see
 * its count start over. Waits, when needed, so that at least 20 seconds of the minute are left.
 */
export async function awayFromMinuteEdge(): Promise<void> {
  const secondsLeft = 60 - ((Date.now() / 1000) % 60);
  if (secondsLeft < 20) await new Promise((resolve) => setTimeout(resolve, secondsLeft * 1000 + 100));
}
