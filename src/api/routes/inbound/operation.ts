import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../domain/accounts/actor';
import type { Logger } from '../../../logger';
import type { AppDeps } from '../../context';

/** What an inbound operation handler gets: its validated `data` and who sent it. */
export interface InboundRequest<Data> {
  data: Data;
  actor: Actor;
  /** Id of this request's event: the outbound event the change produces carries it as event_id. */
  eventId: string;
  source: string;
  em: EntityManager;
  deps: AppDeps;
  log: Logger;
}

/**
 * The operation response of webhooks.md 2.11, less `success` (always true when a handler returns); or, for a
 * search, the search response itself.
 */
export type InboundOutcome = OperationOutcome | { search: { results: object[] } };

export interface OperationOutcome {
  message: string;
  recordId: string | null;
  /** Defaults to the request's event id; differs when the request joined an operation already running. */
  eventId?: string;
  /** 202 when the operation is accepted but still running. */
  status?: 200 | 202;
}

/**
 * One inbound `event_type`. Its data is validated against `schema` before `handle` runs; errors a handler
 * throws name fields relative to `data`.
 */
export interface InboundOperation<Data = never> {
  eventType: string;
  /** The schema of `data`: a file (`inbound/employee.created.json`) or a `$defs` entry of a family's file. */
  schema: string;
  /** One line for the API reference. */
  summary: string;
  handle(request: InboundRequest<Data>): Promise<InboundOutcome>;
}

export const defineOperation = <Data>(operation: InboundOperation<Data>) => operation;
