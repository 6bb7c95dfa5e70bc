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
 * How package.json runs a start script (`NAME=value exec node --flag … dist/…`): the environment it sets, Node's
 * flags and the entry point.
 */
export function startScriptOf(script: 'start:api' | 'start:worker'): { env: Record<string, string>; flags: string[]; entry: string } {
  const command = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[script]!;
  const words = command.split(/\s+/);
  const exec = words.indexOf('exec');
  if (exec < 0 || words[exec + 1] !== 'node' || !words.slice(0, exec).every((word) => /^[A-Z_]+=/.test(word))) {
    throw new Error(`${script} is expected to be "[NAME=value …] exec node …", not ${JSON.stringify(command)}`);
  }
  const args = words.slice(exec + 2);
  return {
    env: Object.fromEntries(words.slice(0, exec).map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)])),
    flags: args.filter((arg) => arg.startsWith('--')),
    entry: args.at(-1)!,
  };
}

/**
 * Runs a package.json start script (`start:api`, `start:worker`) from the built dist/ as production does, its
 * environment and Node's flags included, but as one Node process: npm and sh would stand between SIGKILL and the code.
 */
export function spawnStartScript(script: 'start:api' | 'start:worker', env: Record<string, string>): SpawnedProcess {
  const run = startScriptOf(script);
  return spawnNode([...run.flags, run.entry], { ...run.env, ...env });
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
