import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';
import { stopProcess, waitFor } from '../helpers/processes';

const sign = (secret: string, timestamp: number, body: string) => createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

/** docs/examples/webhook-receiver.mjs, run as the README says, on the built package. */
describe('the receiver example in docs/examples', () => {
  let receiver: ChildProcess;
  let output = '';
  let url: string;

  beforeAll(async () => {
    receiver = spawn(process.execPath, [path.join(PROJECT_ROOT, 'docs/examples/webhook-receiver.mjs')], {
      env: { ...process.env, PORT: '0', WEBHOOK_SECRET: 'whsec_new whsec_old' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    receiver.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    receiver.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const port = await waitFor(async () => /listening on port (\d+)/.exec(output)?.[1] ?? (receiver.exitCode !== null ? 'exited' : null), 20_000, 'the receiver to listen');
    if (port === 'exited') throw new Error(`the receiver exited: ${output}`);
    url = `http://127.0.0.1:${port}/hook`;
  });
  afterAll(() => stopProcess(receiver));

  const deliver = (body: string, headers: Record<string, string>) => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

  it('acknowledges a signed delivery once per X-Webhook-ID, and refuses a bad signature (401) and an old timestamp (400)', async () => {
    const body = JSON.stringify({ event_id: randomUUID(), event_type: 'customer.created', timestamp: new Date().toISOString(), company_id: randomUUID(), data: { name: 'Acme' } });
    const now = Math.floor(Date.now() / 1000);
    // Signed with the previous secret only, as during a rotation's overlap: either secret it holds will do.
    const signed = { 'X-Webhook-ID': randomUUID(), 'X-Webhook-Timestamp': String(now), 'X-Webhook-Signatures': `v1=${sign('whsec_old', now, body)}` };
    for (let i = 0; i < 2; i++) {
      const answer = await deliver(body, signed);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ received: true });
    }
    await waitFor(async () => output.includes('customer.created {"name":"Acme"}'), 5000, 'the event to be logged');
    expect(output.split('customer.created').length - 1).toBe(1);

    expect((await deliver(body.replace('Acme', 'Acne'), signed)).status).toBe(401);
    expect((await deliver(body, { ...signed, 'X-Webhook-Signatures': `v1=${sign('whsec_other', now, body)}` })).status).toBe(401);
    expect((await deliver(body, { 'X-Webhook-ID': randomUUID(), 'X-Webhook-Timestamp': String(now - 600), 'X-Webhook-Signature': sign('whsec_new', now - 600, body) })).status).toBe(400);
  });
});
