import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findPython, PYTHON_SDK_DIR, PYTHON_SDK_VENV, PYTHON_SDK_WHEELHOUSE, pythonSdkVenv } from '../../scripts/python-sdk-venv';
import { PROJECT_ROOT } from '../../src/paths';
import { testCertificate } from '../helpers/https-receiver';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey } from '../helpers/webhooks';

/**
 * The Python SDK (sdk/python) tested by pytest (test/sdk-python/test_*.py) against a stack of this file: each pytest
 * test is a jest test here, so `npm test` counts them. The tests are collected when this file loads (making
 * .venv-python-sdk the first time); pytest then runs once, and each jest test reads its test's outcome from the report.
 */

const TESTS_DIR = path.join(PROJECT_ROOT, 'test/sdk-python');
/** pytest's run as a whole: its tests wait at most 90 s for the minute's rate-limit window, the rest take a few seconds each. */
const PYTEST_TIMEOUT_MS = 170_000;

const pytestArgs = ['-m', 'pytest', TESTS_DIR, '--rootdir', TESTS_DIR, '-p', 'no:cacheprovider', '-q'];
const pythonEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  // The sources, not an installed copy; no __pycache__ folders left in the work tree.
  PYTHONPATH: path.join(PYTHON_SDK_DIR, 'src'),
  PYTHONDONTWRITEBYTECODE: '1',
  ...extra,
});

type Collected = { python: string; ids: string[] } | { skipped: string } | { failed: string };

function collect(): Collected {
  if (!findPython()) return { skipped: 'no Python 3.10 or later with its venv module on this machine' };
  try {
    const python = pythonSdkVenv();
    const listing = execFileSync(python, [...pytestArgs, '--collect-only'], { cwd: PROJECT_ROOT, env: pythonEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { python, ids: listing.split('\n').filter((line) => line.includes('::')) };
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    return { failed: `${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}` };
  }
}

const collected = collect();

interface Outcome {
  outcome: 'passed' | 'failed' | 'skipped';
  details: string;
}

if ('skipped' in collected) {
  const reason = `Python SDK tests skipped: ${collected.skipped}`;
  // Jest lists no test of a file whose every test is skipped, and keeps its console output: the reason goes to stderr.
  process.stderr.write(`${reason}\n`);
  it.skip(reason, () => undefined);
} else if ('failed' in collected) {
  it('collects the Python SDK tests', () => {
    throw new Error(collected.failed);
  });
} else {
  const { python, ids } = collected;

  describe('the Python SDK', () => {
    it('has models as `npm run generate` writes them from the OpenAPI document', async () => {
      // In a process of its own, and asynchronously: it takes seconds, and the stack below has a worker in this process.
      const run = await promisify(execFile)(process.execPath, [path.join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), 'scripts/generate-python-models.ts', '--check'], {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
      }).catch((error: { stdout: string; stderr: string; code: number }) => error);
      expect(run.stderr.trim()).toBe('');
    }, 120_000);

    describe('pytest against the service', () => {
      let stack: TestStack;
      let dir: string;
      let outcomes: Record<string, Outcome> = {};
      let output = '';

      beforeAll(async () => {
        stack = await startStack();
        dir = mkdtempSync(path.join(os.tmpdir(), 'python-sdk-'));
        const sender = await createTenant(stack.orm);
        const tenants: Record<string, Tenant> = {
          rest: await createTenant(stack.orm),
          read_only: await createTenant(stack.orm, ['customers:read']),
          paging: await createTenant(stack.orm),
          inbound: await createTenant(stack.orm),
          sender,
          // Changes are not delivered to the endpoints of the key that made them: the subscriber is another key.
          subscriber: await addApiKey(stack, sender),
          feed: await createTenant(stack.orm),
          rate_limited: await createTenant(stack.orm, ['customers:read']),
        };
        const { certFile } = testCertificate();
        const report = path.join(dir, 'report.json');
        const env = pythonEnv({
          PYSDK_BASE_URL: `${stack.baseUrl}/api/v1`,
          PYSDK_TENANTS: JSON.stringify(
            Object.fromEntries(Object.entries(tenants).map(([name, t]) => [name, { company_id: t.companyId, key: t.key, signing_secret: t.signingSecret }])),
          ),
          PYSDK_TLS_CERT: certFile,
          PYSDK_TLS_KEY: path.join(path.dirname(certFile), 'key.pem'),
          PYSDK_WHEELHOUSE: PYTHON_SDK_WHEELHOUSE,
          PYSDK_MYPY_CACHE: path.join(PYTHON_SDK_VENV, 'mypy-cache'),
          PYSDK_REPORT: report,
        });
        output = await runPytest(python, env);
        try {
          outcomes = JSON.parse(readFileSync(report, 'utf8')) as Record<string, Outcome>;
        } catch {
          // No report: pytest did not get to its end; each test below fails with its output.
        }
      }, PYTEST_TIMEOUT_MS + 60_000);

      afterAll(async () => {
        await stack?.close();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });

      it.each(ids)('%s', (id) => {
        const outcome = outcomes[id];
        if (!outcome) throw new Error(`pytest reported nothing of ${id}; its output ended:\n${output.slice(-4000)}`);
        if (outcome.outcome !== 'passed') throw new Error(`${id} ${outcome.outcome}:\n${outcome.details}`);
      });
    });
  });
}

/** Runs pytest once (asynchronously: the stack's worker runs in this process), at most PYTEST_TIMEOUT_MS; its output. */
function runPytest(python: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, pytestArgs, { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      output += `\n(stopped after ${PYTEST_TIMEOUT_MS} ms)`;
      child.kill('SIGKILL');
    }, PYTEST_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}
