import { signWebhook } from '../src/crypto/webhook-signature';

/** An inbound API key and the secret its sender signs with. */
export interface SigningKey {
  key: string;
  signingSecret: string;
}

/**
 * Posts one signed employee.created to the inbound endpoint, as a sending system signs it (webhooks.md 2.1); the
 * employee's emp_number is `record`, which a receiver reads back from the delivery. Resolves with the answer's status.
 */
export async function postSignedEmployee(baseUrl: string, key: SigningKey, record: string, source: string): Promise<number> {
  const body = JSON.stringify({
    event_type: 'employee.created',
    timestamp: new Date().toISOString(),
    source,
    data: { emp_number: record, name: `Employee ${record}`, email: `${record}@${source}.example`, employee_type: 'site_worker' },
  });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const response = await fetch(`${baseUrl}/webhooks/inbound`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key.key, 'X-Webhook-Timestamp': timestamp, 'X-Webhook-Signature': signWebhook(key.signingSecret, timestamp, body) },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * As postSignedEmployee, for a load that goes on whatever the answer: resolves whether the record was accepted (2xx),
 * and counts each refusal in `refused` by its status (`network` when no answer came).
 */
export async function offerSignedEmployee(baseUrl: string, key: SigningKey, record: string, source: string, refused: Record<string, number>): Promise<boolean> {
  let outcome: string;
  try {
    const status = await postSignedEmployee(baseUrl, key, record, source);
    if (status >= 200 && status < 300) return true;
    outcome = String(status);
  } catch {
    outcome = 'network';
  }
  refused[outcome] = (refused[outcome] ?? 0) + 1;
  return false;
}

/** Registers an endpoint at `url` for employee.created with `apiKey` (another key than the senders': echo prevention). */
export async function subscribeToEmployeeCreated(baseUrl: string, apiKey: string, url: string): Promise<void> {
  const endpoint = await fetch(`${baseUrl}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
    body: JSON.stringify({ url, event_types: ['employee.created'] }),
  });
  if (endpoint.status !== 201) throw new Error(`endpoint registration answered ${endpoint.status}: ${await endpoint.text()}`);
}
