import { spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';
import type { TestStack } from './stack';

/** Runs `npm run cli -- …` (the same entry point) against the stack's database. */
export function runCli(stack: TestStack, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, DATABASE_URL: stack.config.databaseUrl };
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src/cli/main.ts'), ...args], { cwd: PROJECT_ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** A `name: value` line of the CLI's output. */
export const cliField = (output: string, name: string) => new RegExp(`${name}:\\s+(\\S+)`).exec(output)?.[1];
