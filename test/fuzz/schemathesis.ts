import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/paths';

const VENV = path.join(PROJECT_ROOT, '.venv-fuzz');
const REQUIREMENTS = path.join(PROJECT_ROOT, 'test/fuzz/requirements.txt');
const run = (command: string, args: string[]) => promisify(execFile)(command, args, { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 10 * 60_000, maxBuffer: 64 * 1024 * 1024 });

/**
 * The schemathesis command: SCHEMATHESIS_PATH when set, else the project's own virtualenv (.venv-fuzz,
 * git-ignored), made from PyPI with test/fuzz/requirements.txt the first time and again when that file changes
 * (a copy of it in the virtualenv records what it holds). Needs only Python 3 with its venv module. Asynchronous, so
 * that the test process's event loop turns while pip works (the stack's worker in it kills a process whose loop stops).
 */
export async function schemathesisBinary(): Promise<string> {
  if (process.env.SCHEMATHESIS_PATH) return process.env.SCHEMATHESIS_PATH;
  const binary = path.join(VENV, 'bin/schemathesis');
  const installed = path.join(VENV, 'requirements.txt');
  const wanted = readFileSync(REQUIREMENTS, 'utf8');
  if (existsSync(binary) && existsSync(installed) && readFileSync(installed, 'utf8') === wanted) return binary;
  let python: string | undefined;
  for (const name of ['python3', 'python']) {
    const major = await run(name, ['-c', 'import sys, venv; print(sys.version_info[0])']).catch(() => null);
    if (major?.stdout.trim() === '3') {
      python = name;
      break;
    }
  }
  if (!python) throw new Error('the fuzz test needs Python 3 with its venv module (Debian: python3-venv) to install schemathesis; or set SCHEMATHESIS_PATH, or SKIP_FUZZ_TESTS=1 outside CI');
  rmSync(VENV, { recursive: true, force: true });
  const install = async (command: string, args: string[]) => {
    try {
      await run(command, args);
    } catch (error) {
      const { stderr } = error as { stderr?: string };
      throw new Error(`installing schemathesis into .venv-fuzz failed at \`${command} ${args.join(' ')}\`: ${stderr?.slice(-2000) ?? String(error)}`, { cause: error });
    }
  };
  await install(python, ['-m', 'venv', VENV]);
  await install(path.join(VENV, 'bin/python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', REQUIREMENTS]);
  writeFileSync(installed, wanted);
  return binary;
}
