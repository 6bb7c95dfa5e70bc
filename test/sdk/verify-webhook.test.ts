import { verifyWebhook, WebhookVerificationError } from '@construction-integration/client';
import { createHmac } from 'node:crypto';

/** Signed the way webhooks.md 5 says, independently of the package: HMAC-SHA256 hex of `<timestamp>.<body>`. */
const sign = (secret: string, timestamp: number, body: string) => createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
const now = () => Math.floor(Date.now() / 1000);

const body = JSON.stringify({
  event_id: '6f1c3c55-0d0b-4a57-9d4c-3a4f2f7f0a11',
  event_type: 'customer.deleted',
  timestamp: '2026-11-20T12:00:00.000Z',
  company_id: '0b7d3d88-6f0e-4d36-9d43-5b1f5d2e8c01',
  data: { id: '1c9e8f57-2f7c-4f83-9a55-0c3c8a0f6b21', name: 'Acme', deleted_at: '2026-11-20T12:00:00.000Z' },
});

/** The code of the WebhookVerificationError `verify` throws. */
function refusal(verify: () => unknown): string {
  try {
    verify();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    throw error;
  }
  throw new Error('verifyWebhook accepted the delivery');
}

describe('verifyWebhook', () => {
  it('returns the event of a delivery signed with the secret, from Node headers or a Fetch Headers object', () => {
    const timestamp = now();
    const headers = { 'x-webhook-timestamp': String(timestamp), 'x-webhook-signature': sign('whsec_a', timestamp, body) };
    const event = verifyWebhook(body, headers, 'whsec_a');
    expect(event).toEqual(JSON.parse(body));
    expect(verifyWebhook(new TextEncoder().encode(body), new Headers(headers), 'whsec_a')).toEqual(event);
    expect(verifyWebhook(body, { 'X-Webhook-Timestamp': String(timestamp), 'X-Webhook-Signature': headers['x-webhook-signature'] }, ['whsec_a'])).toEqual(event);
  });

  it("accepts either secret's signature while a rotation overlaps, and no other secret's", () => {
    const timestamp = now();
    const headers = {
      'x-webhook-timestamp': String(timestamp),
      'x-webhook-signature': sign('whsec_new', timestamp, body),
      'x-webhook-signatures': `v1=${sign('whsec_new', timestamp, body)} v1=${sign('whsec_old', timestamp, body)}`,
    };
    expect(verifyWebhook(body, headers, 'whsec_old')).toMatchObject({ event_type: 'customer.deleted' });
    expect(verifyWebhook(body, headers, 'whsec_new')).toMatchObject({ event_type: 'customer.deleted' });
    expect(verifyWebhook(body, headers, ['whsec_other', 'whsec_old'])).toMatchObject({ event_type: 'customer.deleted' });
    expect(refusal(() => verifyWebhook(body, headers, 'whsec_other'))).toBe('INVALID_SIGNATURE');
  });

  it('refuses a changed body, a timestamp outside the tolerance either way, and what is not signed', () => {
    const timestamp = now();
    const signed = (at: number) => ({ 'x-webhook-timestamp': String(at), 'x-webhook-signature': sign('whsec_a', at, body) });
    expect(refusal(() => verifyWebhook(body.replace('Acme', 'Acne'), signed(timestamp), 'whsec_a'))).toBe('INVALID_SIGNATURE');
    expect(refusal(() => verifyWebhook(body, signed(timestamp - 301), 'whsec_a'))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(refusal(() => verifyWebhook(body, signed(timestamp + 301), 'whsec_a'))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(verifyWebhook(body, signed(timestamp - 290), 'whsec_a')).toMatchObject({ event_type: 'customer.deleted' });
    expect(refusal(() => verifyWebhook(body, signed(timestamp - 20), 'whsec_a', { toleranceSec: 10 }))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    // The signature covers the timestamp: moving it forward breaks the signature.
    expect(refusal(() => verifyWebhook(body, { ...signed(timestamp - 400), 'x-webhook-timestamp': String(timestamp) }, 'whsec_a'))).toBe('INVALID_SIGNATURE');
    expect(refusal(() => verifyWebhook(body, { 'x-webhook-timestamp': String(timestamp) }, 'whsec_a'))).toBe('MISSING_SIGNATURE');
    expect(refusal(() => verifyWebhook(body, { 'x-webhook-timestamp': String(timestamp), 'x-webhook-signature': 'v1=abc' }, 'whsec_a'))).toBe('MISSING_SIGNATURE');
    expect(refusal(() => verifyWebhook(body, { 'x-webhook-signature': sign('whsec_a', timestamp, body) }, 'whsec_a'))).toBe('INVALID_TIMESTAMP');
    expect(refusal(() => verifyWebhook(body, { ...signed(timestamp), 'x-webhook-timestamp': '2026-11-20T12:00:00Z' }, 'whsec_a'))).toBe('INVALID_TIMESTAMP');
  });

  it('refuses a correctly signed body that is not a JSON object, and needs a secret', () => {
    const timestamp = now();
    for (const notAnObject of ['not json', '[1,2]', 'null']) {
      const headers = { 'x-webhook-timestamp': String(timestamp), 'x-webhook-signature': sign('whsec_a', timestamp, notAnObject) };
      expect(refusal(() => verifyWebhook(notAnObject, headers, 'whsec_a'))).toBe('INVALID_PAYLOAD');
    }
    expect(() => verifyWebhook(body, {}, [])).toThrow(TypeError);
    expect(() => verifyWebhook(body, {}, '')).toThrow(TypeError);
  });
});
