import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths';

/**
 * The project's own virtualenv for the Python SDK (git-ignored, as .venv-fuzz is the fuzzer's): the model generator
 * (scripts/generate-python-models.ts) and the SDK's tests (test/sdk-python) run in it.
 */

export const PYTHON_SDK_DIR = path.join(PROJECT_ROOT, 'sdk/python');
export const PYTHON_SDK_VENV = path.join(PROJECT_ROOT, '.venv-python-sdk');
const REQUIREMENTS = path.join(PYTHON_SDK_DIR, 'requirements-dev.txt');
/** Wheels of every pinned requirement, kept in the virtualenv: a fresh one installs the built package from them offline. */
export const PYTHON_SDK_WHEELHOUSE = path.join(PYTHON_SDK_VENV, 'wheelhouse');

/** Python 3.10 or later with its venv module and the pip it installs: `python3` or `python`, or null when there is none. */
export function findPython(): string | null {
  for (const name of ['python3', 'python']) {
    try {
      const answer = execFileSync(name, ['-c', 'import sys, venv, ensurepip; print(sys.version_info >= (3, 10))'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      if (answer.trim() === 'True') return name;
    } catch {
      // Not installed, or without venv: try the next name.
    }
  }
  return null;
}

/** Runs a command to its end, its output returned and its errors thrown with what it printed. */
export const run = (command: string, args: string[], cwd = PROJECT_ROOT) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000, maxBuffer: 64 * 1024 * 1024 });

/**
 * The virtualenv's python, made from PyPI with sdk/python/requirements-dev.txt the first time and again when that file
 * changes (a copy of it in the virtualenv records what it holds). Built in a folder of its own and renamed into
 * place, so two processes making it at once never share a half-made one; everything in it runs as `python -m`, which
 * a renamed virtualenv still runs.
 */
export function pythonSdkVenv(): string {
  const python = path.join(PYTHON_SDK_VENV, 'bin/python');
  const installed = path.join(PYTHON_SDK_VENV, 'requirements-dev.txt');
  const wanted = readFileSync(REQUIREMENTS, 'utf8');
  const current = () => existsSync(python) && existsSync(installed) && readFileSync(installed, 'utf8') === wanted;
  if (current()) return python;
  const base = findPython();
  if (!base) throw new Error('the Python SDK needs Python 3.10 or later with its venv module (Debian: python3-venv)');
  const staging = `${PYTHON_SDK_VENV}.${process.pid}.${randomUUID().slice(0, 8)}`;
  const step = (command: string, args: string[]) => {
    try {
      run(command, args);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      const { stderr } = error as { stderr?: string };
      throw new Error(`making ${path.basename(PYTHON_SDK_VENV)} failed at \`${command} ${args.join(' ')}\`: ${stderr?.slice(-2000) ?? String(error)}`, { cause: error });
    }
  };
  const pip = [path.join(staging, 'bin/python'), '-m', 'pip'];
  const quiet = ['--quiet', '--disable-pip-version-check'];
  step(base, ['-m', 'venv', staging]);
  step(pip[0]!, [...pip.slice(1), 'download', ...quiet, '--dest', path.join(staging, 'wheelhouse'), '-r', REQUIREMENTS]);
  step(pip[0]!, [...pip.slice(1), 'install', ...quiet, '--no-index', '--find-links', path.join(staging, 'wheelhouse'), '-r', REQUIREMENTS]);
  writeFileSync(path.join(staging, 'requirements-dev.txt'), wanted);
  if (existsSync(PYTHON_SDK_VENV) && !current()) rmSync(PYTHON_SDK_VENV, { recursive: true, force: true });
  try {
    renameSync(staging, PYTHON_SDK_VENV);
  } catch (error) {
    // Another process put a current one in place meanwhile.
    rmSync(staging, { recursive: true, force: true });
    if (!current()) throw error;
  }
  return python;
}

