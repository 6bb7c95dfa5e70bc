import { createHmac } from 'node:crypto';

/**
 * The signature of both directions (webhooks.md 5): lowercase hex HMAC-SHA256, keyed with the secret, of
 * `<timestamp>.<raw body>`, where timestamp is the X-Webhook-Timestamp value (Unix seconds).
 */
export function signatureOf(secret: string, timestamp: string, rawBody: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}
