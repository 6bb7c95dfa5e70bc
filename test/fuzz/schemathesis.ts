import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

const VENV = path.join(PROJECT_ROOT, '.venv-fuzz');
const REQUIREMENTS = path.join(PROJECT_ROOT, 'test/fuzz/requirements.txt');

/**
 * The schemathesis command: SCHEMATHESIS_PATH when set, else the project's own virtualenv (.venv-fuzz,
 * git-ignored), made from PyPI with test/fuzz/requirements.txt the first time and again when that file changes
 * (a copy of it in the virtualenv records what it holds). Needs only Python 3 with its venv module.
 */
export function schemathesisBinary(): string {
  if (process.env.SCHEMATHESIS_PATH) return process.env.SCHEMATHESIS_PATH;
  const binary = path.join(VENV, 'bin/schemathesis');
  const installed = path.join(VENV, 'requirements.txt');
  const wanted = readFileSync(REQUIREMENTS, 'utf8');
  if (existsSync(binary) && existsSync(installed) && readFileSync(installed, 'utf8') === wanted) return binary;
  const python = ['python3', 'python'].find((name) => {
    try {
      return execFileSync(name, ['-c', 'import sys, venv; print(sys.version_info[0])'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === '3';
    } catch {
      return false;
    }
  });
  if (!python) throw new Error('the fuzz test needs Python 3 with its venv module (Debian: python3-venv) to install schemathesis; or set SCHEMATHESIS_PATH, or SKIP_FUZZ_TESTS=1 outside CI');
  rmSync(VENV, { recursive: true, force: true });
  const run = (command: string, args: string[]) => {
    try {
      execFileSync(command, args, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000 });
    } catch (error) {
      const { stderr } = error as { stderr?: Buffer };
      throw new Error(`installing schemathesis into .venv-fuzz failed at \`${command} ${args.join(' ')}\`: ${stderr?.toString().slice(-2000) ?? String(error)}`, { cause: error });
    }
  };
  run(python, ['-m', 'venv', VENV]);
  run(path.join(VENV, 'bin/python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', REQUIREMENTS]);
  writeFileSync(installed, wanted);
  return binary;
}
