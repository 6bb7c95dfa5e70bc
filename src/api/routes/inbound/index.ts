import Router from '@koa/router';
import { v7 as uuidv7 } from 'uuid';
import { actorOf } from '../../../domain/accounts/actor';
import { INBOUND_SCOPE } from '../../../domain/accounts/scopes';
import { ApiError } from '../../../errors';
import type { AppDeps, AppState } from '../../context';
import { authenticate, requireScope } from '../../middleware/authenticate';
import { readJsonBody, requireValidBody } from '../../middleware/json-body';
import { idempotency } from '../../middleware/idempotency';
import { rateLimit } from '../../middleware/rate-limit';
import { INBOUND_OPERATIONS } from './operations';
import { verifiedSignature } from './signature';
import { INBOUND_SOURCES } from './sources';

interface Envelope {
  event_type: string;
  timestamp?: string;
  source?: string;
  data?: Record<string, unknown>;
}

/** Field names in a handler's errors are relative to `data`; the client sees them from the envelope. */
function inEnvelope(error: unknown): unknown {
  if (error instanceof ApiError && error.status < 500 && error.details.field) {
    return new ApiError(error.code, error.message, { ...error.details, field: `data.${error.details.field}` }, error.headers);
  }
  return error;
}

export function inboundRoutes(deps: AppDeps): Router<AppState> {
  const { validator, apiKeys, config } = deps;
  const operations = new Map(INBOUND_OPERATIONS.map((op) => [op.eventType, op]));
  for (const operation of operations.values()) {
    if (!validator.has(operation.schema)) throw new Error(`${operation.eventType}: no schema ${operation.schema}`);
  }

  const router = new Router<AppState>();
  router.post(
    '/webhooks/inbound',
    authenticate(apiKeys),
    requireScope(INBOUND_SCOPE),
    readJsonBody(config.bodyLimitBytes),
    verifiedSignature(apiKeys, config.rateLimitMultiplier),
    idempotency(),
    rateLimit('inbound', { multiplier: config.rateLimitMultiplier, replayGuard: true }),
    requireValidBody(),
    async (ctx) => {
      const { principal } = ctx.state;
      // Absent is custom; present but empty is not a source.
      const source = ctx.headers['x-webhook-source'] === undefined ? 'custom' : ctx.get('X-Webhook-Source').toLowerCase();
      if (!(INBOUND_SOURCES as readonly string[]).includes(source)) {
        throw ApiError.invalid('X-Webhook-Source', `must be one of: ${INBOUND_SOURCES.join(', ')}`);
      }
      const envelope = validator.validate<Envelope>('inbound/envelope.json', ctx.request.body);
      const operation = operations.get(envelope.event_type);
      if (!operation) {
        throw ApiError.invalid('event_type', `is not supported; supported: ${[...operations.keys()].join(', ')}`);
      }
      const count = (outcome: string) => deps.metrics.inboundOperations.inc({ event_type: operation.eventType, outcome });
      const failed = (error: unknown) => {
        count(error instanceof ApiError ? error.code : 'INTERNAL_ERROR');
        return error;
      };
      let data: never;
      try {
        data = validator.validate<never>(operation.schema, envelope.data ?? {}, 'data');
      } catch (error) {
        throw failed(error);
      }
      const eventId = uuidv7();
      const outcome = await operation
        .handle({ data, actor: actorOf(principal), eventId, source, em: ctx.state.em, deps, log: ctx.state.log })
        .catch((error: unknown) => {
          throw inEnvelope(failed(error));
        });
      count('succeeded');
      if ('search' in outcome) {
        ctx.body = { success: true, action: 'search', results: outcome.search.results, count: outcome.search.results.length };
        return;
      }
      ctx.status = outcome.status ?? 200;
      ctx.body = { success: true, message: outcome.message, event_id: outcome.eventId ?? eventId, record_id: outcome.recordId };
    },
  );
  return router;
}
