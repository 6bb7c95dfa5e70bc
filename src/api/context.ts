import type { Client } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { ApiError } from '../errors';
import type { SecretBox } from '../crypto/secret-box';
import type { Orm } from '../db/orm';
import type { Principal } from '../domain/accounts/actor';
import type { ApiKeyCache } from '../domain/accounts/api-key-cache';
import type { Logger } from '../logger';
import type { ApiMetrics } from '../metrics';
import type { SchemaValidator } from '../schemas/schema-validator';
import type { DeliveryWorkflows } from '../delivery/delivery-workflows';
import type { FeedWaits } from '../delivery/feeds/feed-waits';
import type { WorkflowGateway } from '../domain/workflow-gateway';

/** What the API process is built from; routes receive it when they are created. */
export interface AppDeps {
  config: Config;
  orm: Orm;
  temporal: Client;
  /** The domain's way to start workflows and talk to them (temporal on the configured task queue). */
  workflows: WorkflowGateway;
  /** Outbound delivery's way to start, re-run and await delivery runs and start bulk recoveries. */
  deliveryWorkflows: DeliveryWorkflows;
  secretBox: SecretBox;
  apiKeys: ApiKeyCache;
  /** The long polls of feeds (GET /webhook-endpoints/{id}/feed?wait=), woken by their events' notifications. */
  feedWaits: FeedWaits;
  validator: SchemaValidator;
  logger: Logger;
  metrics: ApiMetrics;
}

/** Per-request state, filled in by the middleware in the order app.ts composes it. */
export interface AppState {
  requestId: string;
  /** This process's metrics, for the middleware that counts what it refuses. */
  metrics: ApiMetrics;
  log: Logger;
  /** A fresh EntityManager fork: one identity map per request. */
  em: EntityManager;
  principal: Principal;
  /**
   * Whether the database confirmed during this request that the key is not revoked: authentication from
   * memory does not, the admission statement (rateLimit) does. What writes before admission confirms first.
   */
  keyConfirmed: boolean;
  /** The route's query parameters, parsed and validated (see RouteSpec). */
  query: Record<string, unknown>;
  /** The request body exactly as received (see readJsonBody, and fileBody for files). */
  rawBody: Buffer;
  /** The media type of a file body (fileBody). */
  fileType?: string;
  /** Why the body cannot be used, found while reading it and reported by requireValidBody. */
  bodyProblem?: ApiError;
}
