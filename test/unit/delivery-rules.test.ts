import { SecretBox } from '../../src/crypto/secret-box';
import { signWebhook } from '../../src/crypto/webhook-signature';
import { deliveryHeaders, signingSecrets } from '../../src/delivery/attempts/delivery-headers';
import { checkRerunRequest, describeFailure, waitBeforeNextAttempt } from '../../workflows/webhook-delivery.contract';

describe('the wait before the next attempt', () => {
  const longest = 6 * 3600_000;
  it.each([
    ['no Retry-After: the schedule', 60_000, null, 60_000],
    ['a shorter Retry-After: the schedule', 300_000, 10_000, 300_000],
    ['a longer Retry-After: as asked', 60_000, 120_000, 120_000],
    ['past the longest wait of the schedule: the longest wait', 60_000, 48 * 3600_000, longest],
  ])('%s', (_, scheduled, retryAfter, expected) => {
    expect(waitBeforeNextAttempt(scheduled, retryAfter, longest)).toBe(expected);
  });
});

describe('describeFailure', () => {
  const failure = { attemptNumber: 0, statusCode: 503, error: 'HTTP 503', durationMs: 12, responseExcerpt: null, retryAfterMs: null };
  it('gives the error and the duration, and a response on one line, cut at 200 characters', () => {
    expect(describeFailure(failure)).toBe('HTTP 503 after 12 ms');
    expect(describeFailure({ ...failure, responseExcerpt: '{\n  "error": "down"\n}' })).toBe('HTTP 503 after 12 ms: { "error": "down" }');
    expect(describeFailure({ ...failure, responseExcerpt: 'x'.repeat(500) })).toBe(`HTTP 503 after 12 ms: ${'x'.repeat(200)}…`);
  });
});

describe('the rerun update validator', () => {
  it.each([[undefined], [{}], [{ reason: 'endpoint fixed' }]])('accepts %p', (request) => {
    expect(() => checkRerunRequest(request)).not.toThrow();
  });
  it.each([
    ['"text"', 'text', 'The input must be a JSON object'],
    ['an array', [], 'The input must be a JSON object'],
    ['a misspelt field', { reasn: 'x' }, 'Unknown field "reasn"'],
    ['a number as reason', { reason: 5 }, '"reason" must be a string of at most 500 characters'],
    ['a reason too long', { reason: 'x'.repeat(501) }, '"reason" must be a string of at most 500 characters'],
  ])('refuses %s', (_, request, message) => {
    expect(() => checkRerunRequest(request)).toThrow(message);
  });
});

describe('delivery headers', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));
  const delivery = { id: '01a20000-0000-7000-8000-000000000001', eventType: 'employee.created', payload: '{"a":1}' };

  it('carry the spec headers, and one v1 signature per valid secret in X-Webhook-Signatures', () => {
    const headers = deliveryHeaders(['whsec_new', 'whsec_old'], delivery, 3, '1800000000');
    expect(headers).toEqual({
      'X-Webhook-Signature': signWebhook('whsec_new', '1800000000', delivery.payload),
      'X-Webhook-Signatures': `v1=${signWebhook('whsec_new', '1800000000', delivery.payload)} v1=${signWebhook('whsec_old', '1800000000', delivery.payload)}`,
      'X-Webhook-Timestamp': '1800000000',
      'X-Webhook-ID': delivery.id,
      'X-Webhook-Event': 'employee.created',
      'X-Webhook-Retry': '3',
    });
  });

  it('sign with the previous secret until its rotation window ends', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const endpoint = (expiresAt: Date | null) => ({ secretSealed: box.seal('whsec_new'), previousSecretSealed: box.seal('whsec_old'), previousSecretExpiresAt: expiresAt });
    expect(signingSecrets(endpoint(new Date(now.getTime() + 1000)), box, now)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(endpoint(now), box, now)).toEqual(['whsec_new']);
    expect(signingSecrets(endpoint(null), box, now)).toEqual(['whsec_new']);
  });
});
