import { createHmac, timingSafeEqual } from 'node:crypto';

/** Signatures are accepted when the signed timestamp is within this many seconds of our clock. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * How far apart the clocks of two api hosts (or of PostgreSQL before and after a failover) may be while the replay
 * guard still holds. Hosts kept by NTP are milliseconds apart; this is for one that drifted.
 */
export const SIGNATURE_CLOCK_SKEW_SECONDS = 60;

/**
 * How long, from now, the replay record of a signature made at `timestamp` must be kept: as long as this host would
 * still accept the timestamp (verifyWebhookSignature compares whole seconds, so until timestamp + tolerance + 1), and
 * SIGNATURE_CLOCK_SKEW_SECONDS more for a host whose clock is behind ours. A duration, not a point in time, so the
 * database, which keeps the record by its own clock, need not agree with ours.
 */
export function signatureRecordSeconds(timestamp: string | number, nowMs = Date.now()): number {
  return Math.ceil(Number(timestamp) + SIGNATURE_TOLERANCE_SECONDS + 1 - nowMs / 1000) + SIGNATURE_CLOCK_SKEW_SECONDS;
}

/**
 * The signature both directions use: lowercase hex HMAC-SHA256, keyed with the secret (its UTF-8 bytes),
 * over `<unix timestamp seconds>.<raw body>`.
 */
export function signWebhook(secret: string, timestamp: string | number, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

export type SignatureCheck =
  | { valid: true }
  | { valid: false; field: 'X-Webhook-Timestamp' | 'X-Webhook-Signature'; reason: string };

export function verifyWebhookSignature(options: {
  secret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  rawBody: string | Buffer;
  nowSeconds?: number;
  toleranceSeconds?: number;
}): SignatureCheck {
  const { secret, timestamp, signature, rawBody } = options;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) {
    return { valid: false, field: 'X-Webhook-Timestamp', reason: 'must be a Unix timestamp in seconds' };
  }
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    return { valid: false, field: 'X-Webhook-Timestamp', reason: `is more than ${tolerance} seconds from the server clock` };
  }
  if (!signature || !/^[0-9a-f]{64}$/.test(signature)) {
    return { valid: false, field: 'X-Webhook-Signature', reason: 'must be 64 lowercase hexadecimal characters' };
  }
  const expected = Buffer.from(signWebhook(secret, timestamp, rawBody), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    return { valid: false, field: 'X-Webhook-Signature', reason: 'does not match the request body' };
  }
  return { valid: true };
}
