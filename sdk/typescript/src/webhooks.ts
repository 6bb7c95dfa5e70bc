import { timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { webhooks } from './generated/openapi.js';
import { signatureOf } from './signature.js';

type DocumentedBody<Name extends keyof webhooks> = webhooks[Name]['post']['requestBody']['content']['application/json'];
type DocumentedEvent = { [Name in keyof webhooks]: DocumentedBody<Name> }[keyof webhooks];
type DocumentedShapeA = Extract<DocumentedEvent, { event_type: string }>;
type DocumentedShapeB = Extract<DocumentedEvent, { event: string }>;
type ShapeAEnvelope = Pick<DocumentedShapeA, 'event_id' | 'timestamp' | 'company_id'>;

/**
 * Events only the catalog (webhooks.md 6.2) describes, po.* and workorder.started among them, reach shape A
 * endpoints in the shape A envelope with the catalog's name and data; the document names that in words only.
 */
type CatalogOnlyInShapeA =
  DocumentedShapeB extends infer Event
    ? Event extends { event: infer Name; data: infer Data }
      ? Name extends DocumentedShapeA['event_type']
        ? never
        : ShapeAEnvelope & { event_type: Name; data: Data }
      : never
    : never;

/** What a test delivery (POST /webhook-endpoints/{id}/test, or the console's button) carries: not one of the spec's events. */
export interface WebhookTestData {
  message: string;
  endpoint_id: string;
}

/** A delivery to an endpoint of shape A (detailed; the default): `event_type` names the event. */
export type ShapeAEvent = DocumentedShapeA | CatalogOnlyInShapeA | (ShapeAEnvelope & { event_type: 'webhook.test'; data: WebhookTestData });

/** A delivery to an endpoint of shape B (catalog): `event` names the event. */
export type ShapeBEvent = DocumentedShapeB | { event: 'webhook.test'; timestamp: string; data: WebhookTestData };

/** Any delivery, typed by its name: narrow on `event_type` (shape A) or `event` (shape B). */
export type WebhookEvent = ShapeAEvent | ShapeBEvent;

/** Request headers as Node's `req.headers` (names in lower case) or a Fetch `Headers` object have them. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | readonly string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far X-Webhook-Timestamp may be from this machine's clock, in seconds; 300 (webhooks.md 8) by default. */
  toleranceSec?: number;
}

const SIGNATURE = /^[0-9a-f]{64}$/;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() === wanted) return typeof value === 'string' ? value : value?.join(', ');
  }
  return undefined;
}

/**
 * Every signature a delivery carries: each `v1=<hex>` of X-Webhook-Signatures (one per valid secret of the
 * endpoint: two while a rotation overlaps), and X-Webhook-Signature (the current secret's).
 */
function signaturesOf(headers: WebhookHeaders): Buffer[] {
  const listed = (header(headers, 'X-Webhook-Signatures') ?? '')
    .split(' ')
    .filter((entry) => entry.startsWith('v1='))
    .map((entry) => entry.slice('v1='.length));
  return [...listed, header(headers, 'X-Webhook-Signature') ?? '']
    .filter((signature) => SIGNATURE.test(signature))
    .map((signature) => Buffer.from(signature, 'hex'));
}

/**
 * Checks a delivery and returns its event: X-Webhook-Timestamp within `toleranceSec` of now, and a signature
 * of `<timestamp>.<rawBody>` made with `secret`, compared in constant time. Pass the secrets of both sides of a
 * rotation (`[newSecret, oldSecret]`) while you switch: a signature made with any of them is accepted.
 * `rawBody` is the body exactly as received, before any JSON parsing. Throws a WebhookVerificationError.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) {
    throw new TypeError('verifyWebhook needs the endpoint secret, or a list of secrets while a rotation overlaps');
  }
  const toleranceSec = options.toleranceSec ?? 300;
  const timestamp = header(headers, 'X-Webhook-Timestamp') ?? '';
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('INVALID_TIMESTAMP', 'X-Webhook-Timestamp must be Unix time in seconds');
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSec) {
    throw new WebhookVerificationError('TIMESTAMP_OUT_OF_TOLERANCE', `X-Webhook-Timestamp is more than ${toleranceSec} seconds from this clock`);
  }
  const signatures = signaturesOf(headers);
  if (signatures.length === 0) throw new WebhookVerificationError('MISSING_SIGNATURE', 'The delivery carries no X-Webhook-Signature(s)');
  const signed = secrets.some((candidate) => {
    const expected = Buffer.from(signatureOf(candidate, timestamp, rawBody), 'hex');
    return signatures.some((signature) => timingSafeEqual(signature, expected));
  });
  if (!signed) throw new WebhookVerificationError('INVALID_SIGNATURE', 'No signature matches the body with the secret(s) given');
  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody));
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'The body is not JSON');
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) throw new WebhookVerificationError('INVALID_PAYLOAD', 'The body is not a JSON object');
  return event as WebhookEvent;
}
