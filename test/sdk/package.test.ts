import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

const SDK_DIR = path.join(PROJECT_ROOT, 'sdk/typescript');
const TYPESCRIPT_VERSION = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'node_modules/typescript/package.json'), 'utf8')) as { version: string }).version;

/** A file a user of the package would write: the client and verifyWebhook, typed; each @ts-expect-error must be an error. */
const CONSUMER_TS = `
import { ApiError, createClient, verifyWebhook, WebhookVerificationError, type WebhookEvent } from '@construction-integration/client';

const client = createClient({ baseUrl: 'https://construction.example.com/api/v1', apiKey: 'cik_example', signingSecret: 'whsec_example' });

export async function syncCustomers(): Promise<string[]> {
  const created = await client.post('/customers', { body: { name: 'Acme', status: 'Active' } });
  const names: string[] = [created.name];
  for await (const customer of client.paginate('/customers', { params: { query: { status: 'Active' } } })) names.push(customer.name);
  const answer = await client.sendInbound('employee.created', { emp_number: 'E-1', name: 'Dana', email: 'dana@example.com', employee_type: 'site_worker' });
  if (answer.record_id) names.push(answer.record_id);
  try {
    await client.delete('/customers/{id}', { params: { path: { id: created.id } } });
  } catch (error) {
    if (error instanceof ApiError && error.code === 'NOT_FOUND') names.push(String(error.details.field));
  }
  // @ts-expect-error a customer has no title
  await client.post('/customers', { body: { title: 'Acme' } });
  // @ts-expect-error employee.created requires emp_number
  await client.sendInbound('employee.created', { name: 'Dana', email: 'dana@example.com', employee_type: 'site_worker' });
  return names;
}

export function receive(rawBody: string, headers: Record<string, string | string[] | undefined>): string {
  let event: WebhookEvent;
  try {
    event = verifyWebhook(rawBody, headers, ['whsec_new', 'whsec_old'], { toleranceSec: 300 });
  } catch (error) {
    return error instanceof WebhookVerificationError ? error.code : 'error';
  }
  if ('event_type' in event && event.event_type === 'work_order.created') return event.data.work_order_number;
  if ('event' in event && event.event === 'workorder.created') return event.data.workOrderNumber;
  return 'event_type' in event ? event.event_type : event.event;
}
`;

/** Run by Node on the installed package: ES modules, as a user runs it. */
const SMOKE_MJS = `
import { createHmac } from 'node:crypto';
import { createClient, verifyWebhook } from '@construction-integration/client';

const body = JSON.stringify({ event: 'workorder.created', timestamp: new Date().toISOString(), data: { id: 'w1' } });
const timestamp = String(Math.floor(Date.now() / 1000));
const signature = createHmac('sha256', 'whsec_example').update(timestamp + '.' + body).digest('hex');
const event = verifyWebhook(body, { 'x-webhook-timestamp': timestamp, 'x-webhook-signature': signature }, 'whsec_example');
const client = createClient({
  baseUrl: 'https://construction.example.com/api/v1',
  apiKey: 'cik_example',
  fetch: async (request) => Response.json({ path: new URL(request.url).pathname, key: request.headers.get('X-API-Key') }),
});
console.log(JSON.stringify({ event: event.event, answer: await client.get('/customers/{id}', { params: { path: { id: 'c1' } } }) }));
`;

const run = (command: string, args: string[], cwd: string) => execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('the client SDK package', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sdk-package-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('packs ES modules with type declarations; a folder with only the tarball and typescript type-checks and runs a user of it', () => {
    // Built from the sources into a copy of the package, not into sdk/typescript/dist, which test files running
    // beside this one are loading.
    const staged = path.join(dir, 'package');
    mkdirSync(staged);
    copyFileSync(path.join(SDK_DIR, 'package.json'), path.join(staged, 'package.json'));
    run(process.execPath, [path.join(PROJECT_ROOT, 'node_modules/typescript/bin/tsc'), '-p', SDK_DIR, '--outDir', path.join(staged, 'dist')], SDK_DIR);
    const [packed] = JSON.parse(run('npm', ['pack', staged, '--json', '--ignore-scripts', '--pack-destination', dir], dir)) as { filename: string; files: { path: string }[] }[];
    const files = packed!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/webhooks.d.ts', 'dist/generated/openapi.d.ts']));
    expect(files.filter((f) => f !== 'package.json' && !/^dist\/.+\.(js|d\.ts)$/.test(f))).toEqual([]);

    const consumer = path.join(dir, 'consumer');
    mkdirSync(consumer);
    writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(dir, packed!.filename), `typescript@${TYPESCRIPT_VERSION}`], consumer);
    writeFileSync(path.join(consumer, 'consumer.ts'), CONSUMER_TS);
    // No @types/node, and the package's own declarations checked too: they may need only the ES and DOM libraries.
    const compilerOptions = { module: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [], strict: true, noEmit: true, skipLibCheck: false };
    writeFileSync(path.join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
    const typeCheck = spawnSync(process.execPath, [path.join(consumer, 'node_modules/typescript/bin/tsc'), '-p', consumer], { cwd: consumer, encoding: 'utf8' });
    expect(typeCheck.stdout + typeCheck.stderr).toBe('');
    expect(typeCheck.status).toBe(0);

    writeFileSync(path.join(consumer, 'smoke.mjs'), SMOKE_MJS);
    expect(JSON.parse(run(process.execPath, ['smoke.mjs'], consumer))).toEqual({ event: 'workorder.created', answer: { path: '/api/v1/customers/c1', key: 'cik_example' } });
  }, 120_000);
});
