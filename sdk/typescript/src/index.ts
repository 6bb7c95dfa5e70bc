export {
  createClient,
  type ClientOptions,
  type ConstructionClient,
  type FeedEvent,
  type FeedOptions,
  type InboundData,
  type InboundOperation,
  type InboundOptions,
  type InboundResponse,
  type InboundResult,
  type InboundSearchResult,
  type ListItem,
  type ListPath,
  type ResponseData,
  type RestCall,
  type RestPaths,
} from './client.js';
export { ApiError, type ErrorDetails, type ErrorObject, WebhookVerificationError, type WebhookVerificationErrorCode } from './errors.js';
export type { RateLimitRetryOptions } from './rate-limit.js';
export { type ShapeAEvent, type ShapeBEvent, type VerifyWebhookOptions, verifyWebhook, type WebhookEvent, type WebhookHeaders, type WebhookTestData } from './webhooks.js';
export type { components, paths, webhooks } from './generated/openapi.js';
