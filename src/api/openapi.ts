import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CRON_PATTERN } from '../domain/reporting/report-schedules';
import { CURRENCIES } from '../domain/supply/purchase-orders';
import { EVENT_REGISTRY, type EventDefinition, SUBSCRIBABLE_CATEGORIES, SUBSCRIBABLE_NAMES } from '../events/registry';
import { PROJECT_ROOT } from '../paths';
import { type JsonSchema, loadSchemaFiles, resolveRef } from '../schemas/schema-files';
import { INBOUND_SOURCES } from './routes/inbound/sources';
import type { InboundOperation } from './routes/inbound/operation';
import { koaPath, type ResponseSpec, type RouteSpec } from './routes/route-spec';

/**
 * The OpenAPI 3.1 document, built from what the service runs: the REST route declarations, the inbound
 * operations and the event registry, with every schema taken from schemas/ (JSON Schema 2020-12 is OpenAPI
 * 3.1's own dialect, so schemas are used as they are; only their `$ref`s are pointed at components).
 */

type Json = Record<string, unknown>;

const ERROR = { $ref: '#/components/schemas/ErrorBody' };
const errorResponse = (description: string, headers?: Json) => ({ description, headers, content: { 'application/json': { schema: ERROR } } });

/**
 * What the service checks in code beyond the JSON Schema that validates a request, where a schema keyword can
 * say it: the document states it too, so clients and generators send what is accepted. (The request schemas
 * leave these to the code for its clearer errors: "contains "x", which is neither an event type nor a category".)
 */
const CHECKED_IN_CODE: Record<string, (schema: Json) => Json> = {
  'rest/webhook-endpoints.json#/$defs/eventTypes': (schema) => ({
    ...schema,
    items: { enum: ['*', ...[...SUBSCRIBABLE_CATEGORIES.keys()].map((category) => `${category}.*`), ...SUBSCRIBABLE_NAMES.keys()] },
  }),
  'rest/webhook-endpoints.json#/$defs/create': (schema) => withProperty(schema, 'url', { pattern: '^https://' }),
  'rest/webhook-endpoints.json#/$defs/oauthInput': (schema) => withProperty(schema, 'token_url', { pattern: '^https://' }),
  'rest/report-schedules.json#/$defs/cron': (schema) => ({ ...schema, pattern: CRON_PATTERN }),
  'rest/purchase-orders.json#/$defs/fields': (schema) => withProperty(schema, 'currency', { enum: [...CURRENCIES] }),
};

function withProperty(schema: Json, name: string, refinement: Json): Json {
  const properties = schema.properties as Record<string, Json>;
  return { ...schema, properties: { ...properties, [name]: { ...properties[name], ...refinement } } };
}

/** Turns schema references into component names, collecting each schema the document uses once. */
class Components {
  readonly schemas: Record<string, Json> = {};
  private readonly files: Map<string, JsonSchema>;
  private readonly names = new Map<string, string>();

  constructor() {
    this.files = new Map(loadSchemaFiles().map((f) => [f.id, f.schema]));
  }

  /** `rest/customers.json#/$defs/create` (or a ref relative to `baseId`) → `{ $ref: '#/components/schemas/…' }`. */
  ref(ref: string, baseId = ''): Json {
    const target = resolveRef(this.files, baseId, ref);
    const key = `${target.fileId}#${target.pointer}`;
    let name = this.names.get(key);
    if (!name) {
      name = this.nameOf(target.fileId, target.pointer, target.node);
      this.names.set(key, name);
      const schema = this.rewrite(target.node, target.fileId) as Json;
      this.schemas[name] = CHECKED_IN_CODE[key]?.(schema) ?? schema;
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  /** The schema node a reference points at. */
  resolve(ref: string): JsonSchema {
    return resolveRef(this.files, '', ref).node;
  }

  private nameOf(fileId: string, pointer: string, node: JsonSchema): string {
    if (typeof node.title === 'string') return node.title;
    const file = this.files.get(fileId)!;
    const owner = typeof file.title === 'string' ? file.title : fileId.replace(/\.json$/, '').replace(/\//g, '.');
    return `${owner}.${pointer.split('/').pop()}`.replace(/[^A-Za-z0-9._-]/g, '_');
  }

  private rewrite(node: unknown, fileId: string): unknown {
    if (Array.isArray(node)) return node.map((item) => this.rewrite(item, fileId));
    if (node === null || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === '$schema' || key === '$id' || key === '$defs' || key === '$comment') continue;
      if (key === '$ref') Object.assign(out, this.ref(value as string, fileId));
      else if (key === 'properties' || key === 'patternProperties') {
        out[key] = Object.fromEntries(Object.entries(value as Json).map(([name, child]) => [name, this.rewrite(child, fileId)]));
      } else out[key] = this.rewrite(value, fileId);
    }
    return out;
  }
}

const RATE_LIMIT_HEADERS = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};

/** Bytes of one of these media types. */
const fileContent = (types: readonly string[]) => Object.fromEntries(types.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]));

function successResponse(components: Components, response: ResponseSpec): Json {
  let schema: Json | undefined;
  if (response.schema) schema = components.ref(response.schema);
  if (response.listOf) {
    schema = {
      type: 'object',
      additionalProperties: false,
      required: ['data', 'pagination'],
      properties: { data: { type: 'array', items: components.ref(response.listOf) }, pagination: components.ref('common/responses.json#/$defs/pagination') },
    };
  }
  if (response.dataOf) {
    schema = { type: 'object', additionalProperties: false, required: ['data'], properties: { data: { type: 'array', items: components.ref(response.dataOf) } } };
  }
  if (response.fileTypes) {
    return { description: response.description, headers: RATE_LIMIT_HEADERS, content: { ...(schema ? { 'application/json': { schema } } : {}), ...fileContent(response.fileTypes) } };
  }
  return { description: response.description, headers: RATE_LIMIT_HEADERS, ...(schema ? { content: { 'application/json': { schema } } } : {}) };
}

function errorResponses(method: string, hasBody: boolean, hasId: boolean): Json {
  const writes = method !== 'get';
  return {
    400: { $ref: '#/components/responses/BadRequest' },
    401: { $ref: '#/components/responses/Unauthorized' },
    403: { $ref: '#/components/responses/Forbidden' },
    ...(hasId || method === 'get' ? { 404: { $ref: '#/components/responses/NotFound' } } : {}),
    ...(writes ? { 409: { $ref: '#/components/responses/Conflict' }, 422: { $ref: '#/components/responses/IdempotencyKeyReused' } } : {}),
    ...(hasBody ? { 413: { $ref: '#/components/responses/PayloadTooLarge' }, 415: { $ref: '#/components/responses/UnsupportedMediaType' } } : {}),
    429: { $ref: '#/components/responses/RateLimited' },
    default: { $ref: '#/components/responses/Error' },
  };
}

function restOperation(components: Components, spec: RouteSpec): Json {
  const method = spec.method.toLowerCase();
  const parameters: Json[] = [];
  for (const [, name] of spec.path.matchAll(/\{(\w+)\}/g)) {
    const record = name === 'id' ? spec.record : spec.pathRecords?.[name!];
    parameters.push({ name, in: 'path', required: true, description: `The ${record?.toLowerCase() ?? 'record'}'s id`, schema: { type: 'string', format: 'uuid' } });
  }
  for (const param of spec.query ?? []) parameters.push({ name: param.name, in: 'query', required: param.required ?? false, description: param.description, schema: param.schema });
  if (method !== 'get') parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  const responses: Json = {};
  for (const [status, response] of Object.entries(spec.responses)) responses[status] = successResponse(components, response);
  return {
    operationId: `${method}${spec.path.replace(/\{id\}/g, 'ById').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    tags: [spec.tag],
    summary: spec.summary,
    description: [spec.description, `Scope: \`${spec.scope}\` (or \`admin\`).`].filter(Boolean).join('\n\n'),
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body
      ? { requestBody: { required: !spec.body.optional, content: { 'application/json': { schema: components.ref(spec.body.schema) } } } }
      : {}),
    ...(spec.file ? { requestBody: { required: true, content: fileContent(spec.file.types) } } : {}),
    responses: {
      ...responses,
      ...errorResponses(method, spec.body !== undefined || spec.file !== undefined, spec.path.includes('{id}')),
      ...Object.fromEntries(Object.entries(spec.errors ?? {}).map(([status, description]) => [status, errorResponse(description)])),
    },
  };
}

function inboundPath(components: Components, operations: readonly InboundOperation<never>[]): Json {
  const variants: Record<string, Json> = {};
  for (const operation of operations) {
    const name = `Inbound.${operation.eventType}`;
    components.schemas[name] = {
      title: operation.eventType,
      description: operation.summary,
      type: 'object',
      additionalProperties: false,
      // data may be left out when nothing in it is required (test.connection): it is then {}.
      required: Array.isArray(components.resolve(operation.schema).required) ? ['event_type', 'data'] : ['event_type'],
      properties: {
        event_type: { const: operation.eventType },
        timestamp: { type: 'string', format: 'date-time', description: 'When the sending system produced the request.' },
        source: { type: 'string', maxLength: 100, description: 'Label of the sending system.' },
        data: components.ref(operation.schema),
      },
    };
    variants[operation.eventType] = { $ref: `#/components/schemas/${name}` };
  }
  const header = (name: string, required: boolean, description: string, schema: Json = { type: 'string' }) => ({ name, in: 'header', required, description, schema });
  return {
    post: {
      operationId: 'postInboundWebhook',
      tags: ['inbound'],
      summary: 'Send an inbound operation',
      description:
        'Every operation of webhooks.md section 4, chosen by `event_type`. Scope `webhooks:inbound`. Sign `<X-Webhook-Timestamp>.<raw body>` ' +
        "with HMAC-SHA256 keyed with the API key's signing secret, lowercase hex.",
      parameters: [
        header('X-Webhook-Timestamp', true, 'Unix time in seconds; refused when more than 300 s from the server clock.', { type: 'string', pattern: '^\\d+$' }),
        header('X-Webhook-Signature', true, 'Lowercase hex HMAC-SHA256 of `<X-Webhook-Timestamp>.<raw body>`.', { type: 'string', pattern: '^[0-9a-f]{64}$' }),
        header('X-Webhook-Source', false, 'The sending system; case-insensitive.', { type: 'string', enum: [...INBOUND_SOURCES], default: 'custom' }),
        { $ref: '#/components/parameters/IdempotencyKey' },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              oneOf: Object.values(variants),
              discriminator: { propertyName: 'event_type', mapping: Object.fromEntries(Object.entries(variants).map(([k, v]) => [k, v.$ref])) },
            },
          },
        },
      },
      responses: {
        200: {
          description: 'Processed: the operation response, or for project.search and work_order.search the search response (webhooks.md 2.11)',
          headers: RATE_LIMIT_HEADERS,
          content: {
            'application/json': {
              schema: { oneOf: [components.ref('common/responses.json#/$defs/inboundResult'), components.ref('common/responses.json#/$defs/searchResult')] },
            },
          },
        },
        202: {
          description: 'Accepted and still running (a multi-step operation that took longer than the wait); it finishes on its own',
          headers: RATE_LIMIT_HEADERS,
          content: { 'application/json': { schema: components.ref('common/responses.json#/$defs/inboundResult') } },
        },
        ...errorResponses('post', true, false),
        404: { $ref: '#/components/responses/NotFound' },
        403: errorResponse('Signature verification failed (INVALID_SIGNATURE), or the key lacks webhooks:inbound'),
        409: errorResponse('The signature was already used (REPLAYED_REQUEST), or a record conflicts (CONFLICT), or the Idempotency-Key is in use'),
      },
    },
  };
}

const WEBHOOK_HEADERS = [
  ['X-Webhook-Signature', 'Lowercase hex HMAC-SHA256 of `<X-Webhook-Timestamp>.<raw body>`, keyed with the endpoint secret.'],
  ['X-Webhook-Timestamp', 'Unix seconds of this attempt.'],
  ['X-Webhook-ID', 'The delivery id: the same on every attempt and re-run; de-duplicate on it.'],
  ['X-Webhook-Event', 'The event name in the shape delivered.'],
  ['X-Webhook-Retry', 'Attempt number, 0 for the first.'],
].map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } }));

function envelope(components: Components, shape: 'A' | 'B', name: string, dataSchema: string): Json {
  const data = components.ref(dataSchema);
  const timestamp = { type: 'string', format: 'date-time' };
  return shape === 'A'
    ? {
        type: 'object',
        additionalProperties: false,
        required: ['event_id', 'event_type', 'timestamp', 'company_id', 'data'],
        properties: { event_id: { type: 'string', format: 'uuid' }, event_type: { const: name }, timestamp, company_id: { type: 'string', format: 'uuid' }, data },
      }
    : { type: 'object', additionalProperties: false, required: ['event', 'timestamp', 'data'], properties: { event: { const: name }, timestamp, data } };
}

function webhook(components: Components, event: EventDefinition, shape: 'A' | 'B'): Json {
  const name = (shape === 'A' ? event.shapeA : event.shapeB)!;
  const dataSchema = `events/${shape.toLowerCase()}/${name}.json`;
  const described = components.ref(dataSchema);
  const summary = `${name} (shape ${shape})`;
  // Which envelope carries it: catalog-only events reach shape A endpoints in the A envelope; events the
  // catalog does not describe, or delivers in shape A, reach shape B endpoints in the A envelope.
  const notes =
    shape === 'A' && !event.shapeB
      ? 'Shape B endpoints receive this event in shape A.'
      : shape === 'B' && event.deliveredInShapeA
        ? 'Delivered in shape A (webhooks.md 6.2).'
        : shape === 'B' && !event.shapeA
          ? 'Shape A endpoints receive this event in the shape A envelope (event_id, event_type, timestamp, company_id) with this data.'
          : '';
  const envelopeShape = shape === 'B' && event.deliveredInShapeA ? 'A' : shape;
  const schema = components.schemas[(described.$ref as string).split('/').pop()!];
  return {
    post: {
      operationId: `webhook_${shape}_${name.replace(/\./g, '_')}`,
      tags: [`events (shape ${shape})`],
      summary,
      description: [schema?.description, notes].filter(Boolean).join(' '),
      parameters: WEBHOOK_HEADERS,
      requestBody: { required: true, content: { 'application/json': { schema: envelope(components, envelopeShape, name, dataSchema) } } },
      responses: {
        '2XX': { description: 'Received. Answer within 10 seconds; do the work afterwards.' },
        '4XX': { description: 'A permanent failure: the delivery is not retried.' },
        '5XX': { description: 'A temporary failure: retried after 1 min, 5 min, 15 min, 1 h and 6 h.' },
      },
    },
  };
}

const packageVersion = (): string => (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Routes outside /api/v1 besides the inbound endpoint, described by hand. */
const META_PATHS: Json = {
  '/health': {
    get: {
      operationId: 'getHealth',
      tags: ['service'],
      summary: 'Health',
      description: 'No API key. 200 when PostgreSQL and Temporal answer, 503 naming the one that does not.',
      security: [],
      responses: {
        200: { description: 'Healthy', content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } } },
        503: { description: 'Degraded', content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } } },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      tags: ['service'],
      summary: 'Prometheus metrics',
      description:
        'No API key: serve it only to your monitoring (block it at the load balancer). Requests by route and status, rate-limited requests, inbound ' +
        'operations by event_type and outcome, deliveries by status, outbox lag and open alerts; the worker serves its own on WORKER_METRICS_PORT.',
      security: [],
      responses: { 200: { description: 'The Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
  },
  '/api/v1/openapi.json': {
    get: {
      operationId: 'getOpenApi',
      tags: ['service'],
      summary: 'This document',
      security: [],
      responses: { 200: { description: 'The OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  },
  '/docs': {
    get: {
      operationId: 'getDocs',
      tags: ['service'],
      summary: 'The API reference, rendered',
      security: [],
      responses: { 200: { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
  },
  '/docs/init.js': {
    get: {
      operationId: 'getDocsInit',
      tags: ['service'],
      summary: 'The script that starts the renderer on this document',
      security: [],
      responses: { 200: { description: 'JavaScript', content: { 'application/javascript': { schema: { type: 'string' } } } } },
    },
  },
  '/docs/redoc.standalone.js': {
    get: {
      operationId: 'getDocsRenderer',
      tags: ['service'],
      summary: 'The reference renderer (Redoc), served locally',
      security: [],
      responses: { 200: { description: 'JavaScript', content: { 'application/javascript': { schema: { type: 'string' } } } } },
    },
  },
};

export function buildOpenApiDocument(options: { routes: readonly RouteSpec[]; inbound: readonly InboundOperation<never>[]; serverUrl: string }): Json {
  const components = new Components();
  const paths: Record<string, Json> = {};
  for (const spec of options.routes) {
    const key = `/api/v1${spec.path}`;
    paths[key] = { ...(paths[key] ?? {}), [spec.method.toLowerCase()]: restOperation(components, spec) };
  }
  paths['/webhooks/inbound'] = inboundPath(components, options.inbound);
  Object.assign(paths, META_PATHS);
  const webhooks: Record<string, Json> = {};
  for (const event of EVENT_REGISTRY) {
    if (event.shapeA) webhooks[event.shapeA] = webhook(components, event, 'A');
    if (event.shapeB) webhooks[event.shapeB === event.shapeA ? `${event.shapeB} (shape B)` : event.shapeB] = webhook(components, event, 'B');
  }
  components.ref('common/responses.json#/$defs/error');
  components.schemas.Health = {
    type: 'object',
    required: ['status', 'database', 'temporal'],
    properties: { status: { enum: ['ok', 'degraded'] }, database: { enum: ['ok', 'unavailable'] }, temporal: { enum: ['ok', 'unavailable'] } },
  };
  const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Construction integration service',
      version: packageVersion(),
      description:
        'REST API, signed inbound webhook endpoint and outbound webhook events of the construction-management integration service. ' +
        'Every request carries `X-API-Key`; errors always have the body `{ "error": { "code", "message", "details": { "field", "reason" } } }`.',
    },
    servers: [{ url: options.serverUrl }],
    security: [{ ApiKey: [] }],
    tags: [...new Set(options.routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    webhooks,
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key: cik_<prefix>_<secret>.' } },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a write safe to retry: the same key with the same request returns the first response (200, 201 or 204) for 24 hours, ' +
            'with Idempotent-Replayed: true; with another request it is a 422. Keys belong to the API key. ' +
            '1 to 255 visible ASCII characters (! to ~); surrounding spaces are not part of the key.',
          schema: { type: 'string', pattern: '^[!-~]{1,255}$' },
        },
      },
      schemas: components.schemas,
      headers: {
        RateLimit: { description: 'IETF RateLimit: remaining requests and seconds to reset, per window.', schema: { type: 'string' } },
        'RateLimit-Policy': { description: 'IETF RateLimit-Policy: the windows (quota and length).', schema: { type: 'string' } },
        'X-RateLimit-Limit': integerHeader('Quota of the window with the fewest requests left.'),
        'X-RateLimit-Remaining': integerHeader('Requests left in that window.'),
        'X-RateLimit-Reset': integerHeader('When that window resets (Unix seconds).'),
        'Retry-After': integerHeader('Seconds to wait before retrying.'),
      },
      responses: {
        BadRequest: errorResponse('Invalid request (INVALID_REQUEST, UNKNOWN_SKILLS): details.field names the field, parameter or header'),
        Unauthorized: errorResponse('Missing, unknown or revoked API key (UNAUTHORIZED)'),
        Forbidden: errorResponse('The API key lacks the scope (FORBIDDEN)'),
        NotFound: errorResponse('No such record in your company, or no such route (NOT_FOUND)'),
        Conflict: errorResponse('A record with the same identifying values exists or the record is still in use (CONFLICT), or a request with the same Idempotency-Key is still running (IDEMPOTENCY_KEY_IN_USE)'),
        IdempotencyKeyReused: errorResponse('The Idempotency-Key was used for a different request (IDEMPOTENCY_KEY_REUSED)'),
        PayloadTooLarge: errorResponse('Body over the size limit (PAYLOAD_TOO_LARGE)'),
        UnsupportedMediaType: errorResponse('Body that is not application/json, or a file of a type the route does not take (UNSUPPORTED_MEDIA_TYPE)'),
        RateLimited: errorResponse('A rate-limit window is used up (RATE_LIMITED)', { 'Retry-After': { $ref: '#/components/headers/Retry-After' }, ...RATE_LIMIT_HEADERS }),
        Error: errorResponse('Any other error: 405 METHOD_NOT_ALLOWED, 500 INTERNAL_ERROR, 503 SERVICE_UNAVAILABLE (with Retry-After)'),
      },
    },
  };
}

/** Every route of the document as `METHOD path` in the router's syntax (`GET /api/v1/customers/:id`). */
export function documentedRoutes(document: Json): string[] {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([route, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${koaPath(route)}`),
  );
}
