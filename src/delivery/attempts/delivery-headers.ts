import type { SecretBox } from '../../crypto/secret-box';
import { signWebhook } from '../../crypto/webhook-signature';
import type { WebhookEndpoint } from '../endpoints/webhook-endpoint.entity';

/**
 * The secrets deliveries are signed with: the endpoint's current one, then the one it had before its last
 * rotation while the rotation's overlap lasts.
 */
export function signingSecrets(endpoint: Pick<WebhookEndpoint, 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>, secretBox: SecretBox, now = new Date()): string[] {
  const current = secretBox.open(endpoint.secretSealed);
  const previousValid = endpoint.previousSecretSealed !== null && endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now;
  return previousValid ? [current, secretBox.open(endpoint.previousSecretSealed!)] : [current];
}

/**
 * The headers of one attempt (webhooks.md §5). X-Webhook-Signature is the spec's: one signature, with the
 * current secret. X-Webhook-Signatures lists one `v1=<hex>` per valid secret, space-separated, so a receiver
 * can verify with whichever secret it holds while a rotation overlaps (`v1` names this signature scheme).
 */
export function deliveryHeaders(
  secrets: string[],
  delivery: { id: string; eventType: string; payload: string },
  attemptNumber: number,
  timestamp = String(Math.floor(Date.now() / 1000)),
): Record<string, string> {
  const signatures = secrets.map((secret) => signWebhook(secret, timestamp, delivery.payload));
  return {
    'X-Webhook-Signature': signatures[0]!,
    'X-Webhook-Signatures': signatures.map((signature) => `v1=${signature}`).join(' '),
    'X-Webhook-Timestamp': timestamp,
    'X-Webhook-ID': delivery.id,
    'X-Webhook-Event': delivery.eventType,
    'X-Webhook-Retry': String(attemptNumber),
  };
}
