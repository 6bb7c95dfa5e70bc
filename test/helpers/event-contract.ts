import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../src/errors';
import { SCHEMAS_DIR } from '../../src/paths';
import { SchemaValidator } from '../../src/schemas/schema-validator';
import type { ReceivedRequest } from './https-receiver';

let validator: SchemaValidator | undefined;

/** The service's own validator (Ajv, JSON Schema 2020-12) over schemas/. */
export function schemaValidator(): SchemaValidator {
  validator ??= new SchemaValidator();
  return validator;
}

/** Why `value` fails the schema (the validator's field and reason), or null when it conforms. */
export function schemaViolation(schemaId: string, value: unknown): string | null {
  try {
    // The validator fills in defaults; keep the caller's value as it was received.
    schemaValidator().validate(schemaId, structuredClone(value));
    return null;
  } catch (error) {
    if (error instanceof ApiError) return `${error.details.field}: ${error.details.reason}`;
    throw error;
  }
}

/** The top-level keys schemas/events/<shape>/<name>.json declares for an event's data. */
export function declaredEventKeys(shape: 'a' | 'b', eventName: string): string[] {
  const schema = JSON.parse(readFileSync(path.join(SCHEMAS_DIR, 'events', shape, `${eventName}.json`), 'utf8')) as { properties: Record<string, unknown> };
  return Object.keys(schema.properties).sort();
}

/**
 * Problems of an event's data against its contract: schema violations, and keys the schema does not declare
 * or declares but the data lacks. An empty list means the data is exactly what the schema describes.
 */
export function eventDataProblems(shape: 'a' | 'b', eventName: string, data: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const violation = schemaViolation(`events/${shape}/${eventName}.json`, data);
  if (violation) problems.push(`schema: ${violation}`);
  const declared = declaredEventKeys(shape, eventName);
  const present = Object.keys(data).sort();
  for (const key of present) if (!declared.includes(key)) problems.push(`undeclared key ${key}`);
  for (const key of declared) if (!present.includes(key)) problems.push(`missing key ${key}`);
  return problems;
}

/** A received delivery, parsed: the X-Webhook-Event header and the JSON body. */
export interface Delivery {
  event: string;
  body: Record<string, any>;
  request: ReceivedRequest;
}

export const parseDelivery = (request: ReceivedRequest): Delivery => ({
  event: String(request.headers['x-webhook-event']),
  body: JSON.parse(request.body),
  request,
});

/** The key of the record an event is about: its data's id. */
export const recordIdOf = (delivery: Delivery): string => delivery.body.data?.id;

/** The shape A envelope keys (webhooks.md 6). */
export const SHAPE_A_ENVELOPE = ['company_id', 'data', 'event_id', 'event_type', 'timestamp'];
/** The shape B envelope keys (webhooks.md 6). */
export const SHAPE_B_ENVELOPE = ['data', 'event', 'timestamp'];
