import { createHmac } from 'node:crypto';
import { SIGNATURE_CLOCK_SKEW_SECONDS, signatureRecordSeconds, signWebhook, verifyWebhookSignature } from '../../src/crypto/webhook-signature';

const secret = 'whsec_test';
const body = '{"event_type":"test.connection","data":{}}';
const now = 1_800_000_000;

describe('webhook signatures', () => {
  it('is lowercase hex HMAC-SHA256 over "<timestamp>.<raw body>"', () => {
    const expected = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');
    expect(signWebhook(secret, now, body)).toBe(expected);
    expect(signWebhook(secret, now, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('accepts a signature made with the same secret, timestamp and body', () => {
    const signature = signWebhook(secret, now, body);
    expect(verifyWebhookSignature({ secret, timestamp: String(now), signature, rawBody: body, nowSeconds: now + 10 })).toEqual({ valid: true });
  });

  it.each([
    ['another body', { rawBody: body.replace('{}', '{"x":1}') }],
    ['another secret', { secret: 'whsec_other' }],
    ['another timestamp', { timestamp: String(now + 1) }],
  ])('rejects the signature for %s', (_, change) => {
    const result = verifyWebhookSignature({
      secret,
      timestamp: String(now),
      signature: signWebhook(secret, now, body),
      rawBody: body,
      nowSeconds: now,
      ...change,
    });
    expect(result).toEqual({ valid: false, field: 'X-Webhook-Signature', reason: 'does not match the request body' });
  });

  it('rejects timestamps more than 300 seconds away, either side', () => {
    for (const offset of [-301, 301]) {
      const timestamp = String(now + offset);
      const result = verifyWebhookSignature({ secret, timestamp, signature: signWebhook(secret, timestamp, body), rawBody: body, nowSeconds: now });
      expect(result).toMatchObject({ valid: false, field: 'X-Webhook-Timestamp' });
    }
    const edge = String(now - 300);
    expect(verifyWebhookSignature({ secret, timestamp: edge, signature: signWebhook(secret, edge, body), rawBody: body, nowSeconds: now }).valid).toBe(true);
  });

  it('keeps a replay record while any host up to the skew allowance behind our clock would accept the timestamp', () => {
    // Received at a fractional second; the timestamps at both edges of the tolerance and between.
    const receivedSeconds = now + 0.7;
    for (const timestamp of [now - 300, now, now + 300]) {
      const recordSeconds = signatureRecordSeconds(timestamp, receivedSeconds * 1000);
      const signature = signWebhook(secret, timestamp, body);
      let lastAccepted = -Infinity;
      // A host whose clock is `behind` seconds behind ours, asked `after` seconds after the receipt (by our clock).
      for (const behind of [0, 0.5, 30, SIGNATURE_CLOCK_SKEW_SECONDS - 0.5, SIGNATURE_CLOCK_SKEW_SECONDS]) {
        for (let after = 0; after <= 700; after += 0.25) {
          const nowSeconds = Math.floor(receivedSeconds + after - behind);
          if (verifyWebhookSignature({ secret, timestamp: String(timestamp), signature, rawBody: body, nowSeconds }).valid) lastAccepted = Math.max(lastAccepted, after);
        }
      }
      expect(lastAccepted).toBeLessThan(recordSeconds);
      // And not much longer: a second at most beyond the last moment a host accepts it.
      expect(recordSeconds - lastAccepted).toBeLessThanOrEqual(1);
    }
  });

  it('rejects missing or malformed headers before comparing', () => {
    const signature = signWebhook(secret, now, body);
    expect(verifyWebhookSignature({ secret, timestamp: undefined, signature, rawBody: body, nowSeconds: now })).toMatchObject({ field: 'X-Webhook-Timestamp' });
    expect(verifyWebhookSignature({ secret, timestamp: '2026-01-01', signature, rawBody: body, nowSeconds: now })).toMatchObject({ field: 'X-Webhook-Timestamp' });
    expect(verifyWebhookSignature({ secret, timestamp: String(now), signature: undefined, rawBody: body, nowSeconds: now })).toMatchObject({ field: 'X-Webhook-Signature' });
    expect(verifyWebhookSignature({ secret, timestamp: String(now), signature: signature.toUpperCase(), rawBody: body, nowSeconds: now })).toMatchObject({ field: 'X-Webhook-Signature' });
    expect(verifyWebhookSignature({ secret, timestamp: String(now), signature: `sha256=${signature}`, rawBody: body, nowSeconds: now })).toMatchObject({ field: 'X-Webhook-Signature' });
  });
});
