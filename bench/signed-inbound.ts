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
