import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * Custom search attributes operators filter by in the Temporal UI, e.g.
 * `CompanyId = "…" AND EventType = "project.created"`. Registered on the dev server by `npm start` and the
 * tests, and by docker-compose for the compose stack; a Temporal cluster of your own needs them created
 * once (see docs/operations.md).
 */
export const COMPANY_ID = defineSearchAttributeKey('CompanyId', 'KEYWORD');
/** Inbound operation or outbound event type, e.g. project.created. */
export const EVENT_TYPE = defineSearchAttributeKey('EventType', 'KEYWORD');
/** Natural key of the record an inbound operation targets, e.g. a project code. */
export const RECORD_KEY = defineSearchAttributeKey('RecordKey', 'KEYWORD');
/** The subscriber endpoint of a webhook delivery. */
export const ENDPOINT_ID = defineSearchAttributeKey('EndpointId', 'KEYWORD');
/** pending, retrying, delivered, failed or cancelled; kept current by the delivery workflow. */
export const DELIVERY_STATUS = defineSearchAttributeKey('DeliveryStatus', 'KEYWORD');
/** The host of a delivery's endpoint URL, e.g. hooks.example.com: what operators know a subscriber by. */
export const ENDPOINT_HOST = defineSearchAttributeKey('EndpointHost', 'KEYWORD');
/** The outbox event a delivery carries (the event_id subscribers see in shape A). */
export const EVENT_ID = defineSearchAttributeKey('EventId', 'KEYWORD');
/** Why a delivery waits without making its attempt: circuit_open, endpoint_busy or awaiting_predecessor; absent when it does not wait. */
export const DELIVERY_HELD = defineSearchAttributeKey('DeliveryHeld', 'KEYWORD');

/**
 * Of an approval workflow: pending, then overdue (a report past its deadline) or escalated (a purchase order past
 * its), then approved, rejected or cancelled; `ApprovalStatus IN ("pending", "overdue", "escalated")` lists what waits.
 */
export const APPROVAL_STATUS = defineSearchAttributeKey('ApprovalStatus', 'KEYWORD');

export const SEARCH_ATTRIBUTES = [COMPANY_ID, EVENT_TYPE, RECORD_KEY, ENDPOINT_ID, DELIVERY_STATUS, ENDPOINT_HOST, EVENT_ID, DELIVERY_HELD, APPROVAL_STATUS];
