import createFetchClient, { type Client, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import { randomUUID } from 'node:crypto';
import { ApiError } from './errors.js';
import type { components, paths } from './generated/openapi.js';
import { type RateLimitRetryOptions, withRateLimitRetries } from './rate-limit.js';
import { signatureOf } from './signature.js';

/** The REST paths of the document, relative to the base URL `…/api/v1` (rest-api.md: {base_url}). */
export type RestPaths = { [Path in keyof paths as Path extends `/api/v1${infer Rest}` ? Rest : never]: paths[Path] };

type Method = 'get' | 'post' | 'put' | 'delete';
type PathsWith<M extends Method> = { [Path in keyof RestPaths]: RestPaths[Path] extends { [K in M]: object } ? Path : never }[keyof RestPaths];
type Init<Path extends keyof RestPaths, M extends Method> = MaybeOptionalInit<RestPaths[Path], M>;
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The options argument, optional when nothing in it is (no path parameter, no required body). */
type InitArgs<Options> = RequiredKeys<Options> extends never ? [init?: Options] : [init: Options];

type Success<Path extends keyof RestPaths, M extends Method, Options> = NonNullable<
  FetchResponse<RestPaths[Path][M] & Record<string | number, unknown>, Options, `${string}/${string}`>['data']
>;
/** What a successful call resolves to: the response body, or undefined for 204. */
export type ResponseData<Path extends keyof RestPaths, M extends Method, Options = object> = [Success<Path, M, Options>] extends [never] ? undefined : Success<Path, M, Options>;

/** One REST method, typed by path: query, path parameters and body in, the success body out, ApiError thrown otherwise. */
export type RestCall<M extends Method> = <Path extends PathsWith<M>, Options extends Init<Path, M>>(
  path: Path,
  ...init: InitArgs<Options>
) => Promise<ResponseData<Path, M, Options>>;

/** GET paths answering a page: `{ data: [...], pagination: { limit, offset, total } }`. */
export type ListPath = {
  [Path in PathsWith<'get'>]: ResponseData<Path, 'get'> extends { data: unknown[]; pagination: unknown } ? Path : never;
}[PathsWith<'get'>];
export type ListItem<Path extends ListPath> = ResponseData<Path, 'get'> extends { data: (infer Item)[] } ? Item : never;

type InboundBody = paths['/webhooks/inbound']['post']['requestBody']['content']['application/json'];
/** Every inbound operation (webhooks.md 4), by `event_type`. */
export type InboundOperation = InboundBody['event_type'];
/** The `data` of an inbound operation, from its schema in schemas/inbound. */
export type InboundData<Operation extends InboundOperation> = Extract<InboundBody, { event_type: Operation }>['data'];
export type InboundResult = components['schemas']['InboundResult'];
export type InboundSearchResult = components['schemas']['InboundSearchResult'];
/** The answer to an operation: the search response for project.search and work_order.search, else the operation response. */
export type InboundResponse<Operation extends InboundOperation> = Operation extends `${string}.search` ? InboundSearchResult : InboundResult;

export interface InboundOptions {
  /** The envelope's `source`: a label of the sending system. */
  source?: string;
  /** Makes a resend of the same operation safe: the first response comes back (README: Inbound webhooks). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}
/** `data` may be left out where the operation requires nothing in it (test.connection). */
type InboundArgs<Operation extends InboundOperation> =
  undefined extends InboundData<Operation>
    ? [data?: InboundData<Operation>, options?: InboundOptions]
    : [data: InboundData<Operation>, options?: InboundOptions];

/** One event of a feed: its id (what X-Webhook-ID would carry), event type, cursor and the body a webhook would carry. */
export type FeedEvent = components['schemas']['WebhookFeedEvent'];

export interface FeedOptions {
  /** Read after this cursor; without it, after the cursor the feed's consumer acknowledged last (a restart resumes there). */
  after?: string;
  /** Seconds each read waits for events when there are none (0 to 30; 30 by default): a long poll. */
  wait?: number;
  /** Events per read (1 to 1000; 100 by default). */
  limit?: number;
  /**
   * Acknowledge what was processed (true by default): a page's cursor once every event of it was, and on leaving the
   * loop the last event whose successor was asked for. An event the loop body left by break or throw is not.
   */
  acknowledge?: boolean;
  /** Ends the iteration (the read waiting is cancelled; what was processed is acknowledged). */
  signal?: AbortSignal;
}

export interface ClientOptions {
  /** The REST base URL, ending in `/api/v1` (e.g. `https://construction.example.com/api/v1`). */
  baseUrl: string;
  /** An API key (`cik_…`), sent as X-API-Key. */
  apiKey: string;
  /** The key's inbound signing secret (`whsec_…`), shown once with the key; needed by sendInbound only. */
  signingSecret?: string;
  /** 429 handling: waits Retry-After and retries (3 times by default); `false` to get the 429 as an ApiError at once. */
  rateLimitRetries?: RateLimitRetryOptions | false;
  /** The fetch to send requests with; the global fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
}

export interface ConstructionClient {
  get: RestCall<'get'>;
  post: RestCall<'post'>;
  put: RestCall<'put'>;
  delete: RestCall<'delete'>;
  /**
   * Every record of a list, page after page by cursor (`after` = the pagination.next_cursor of the page before),
   * from the first page, or from the one `offset` or `after` names. Pages are as large as the service allows
   * (limit 100) unless `limit` is given. Records added or removed while paging do not shift the pages: each
   * record there throughout is seen once. (From a service older than cursors: by offset, where they can.)
   */
  paginate<Path extends ListPath, Options extends Init<Path, 'get'>>(path: Path, ...init: InitArgs<Options>): AsyncGenerator<ListItem<Path>, void, undefined>;
  /**
   * The events of a feed (an endpoint with "delivery": "feed"), in order, without end: each read long-polls, and what
   * the loop has processed is acknowledged, so that a consumer started again resumes after it. Ends when `signal` aborts.
   */
  feed(feedId: string, options?: FeedOptions): AsyncGenerator<FeedEvent, void, undefined>;
  /** Sends an inbound operation to /webhooks/inbound, signed with the signing secret (webhooks.md 5). */
  sendInbound<Operation extends InboundOperation>(operation: Operation, ...args: InboundArgs<Operation>): Promise<InboundResponse<Operation>>;
  /**
   * The openapi-fetch client underneath, for the whole response (status, headers such as Location or the
   * rate-limit fields): it resolves to `{ data, error, response }` instead of throwing. Retries and
   * Idempotency-Key apply to it too.
   */
  raw: Client<RestPaths>;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const REST_SUFFIX = /\/api\/v1\/?$/;
const MAX_PAGE_SIZE = 100;

export function createClient(options: ClientOptions): ConstructionClient {
  if (!REST_SUFFIX.test(options.baseUrl)) throw new TypeError(`baseUrl must be the REST base URL, ending in /api/v1 (got ${options.baseUrl})`);
  const restBaseUrl = options.baseUrl.replace(/\/$/, '');
  const inboundUrl = restBaseUrl.replace(REST_SUFFIX, '/webhooks/inbound');
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const retries = options.rateLimitRetries ?? {};

  const raw = createFetchClient<RestPaths>({
    baseUrl: restBaseUrl,
    headers: { 'X-API-Key': options.apiKey },
    fetch: (request) => {
      // One key for every attempt of a write, so a retry after a lost response cannot apply it twice.
      if (WRITES.has(request.method) && !request.headers.has('Idempotency-Key')) request.headers.set('Idempotency-Key', randomUUID());
      return withRateLimitRetries(() => send(request.clone()), retries, request.signal);
    },
  });

  // RestCall types each method at its signature; underneath, one untyped request serves all four.
  const request = raw.request as (method: string, path: string, init?: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const call =
    (method: 'GET' | 'POST' | 'PUT' | 'DELETE') =>
    async (path: string, init?: object): Promise<unknown> => {
      const { data, error, response } = await request(method, path, init);
      if (!response.ok) throw ApiError.fromResponse(response, error);
      return data;
    };
  const get = call('GET');
  const post = call('POST');

  async function* paginate(path: string, init?: { params?: { query?: Record<string, unknown> } }): AsyncGenerator<unknown, void, undefined> {
    const query: Record<string, unknown> = { limit: MAX_PAGE_SIZE, ...init?.params?.query };
    for (;;) {
      const page = (await get(path, { ...init, params: { ...init?.params, query } })) as {
        data: unknown[];
        pagination: { offset: number; total: number; next_cursor?: string | null; next_after?: string | null };
      };
      yield* page.data;
      const { pagination } = page;
      const next = pagination.next_cursor !== undefined ? pagination.next_cursor : pagination.next_after;
      if (next !== undefined) {
        if (next === null) return;
        query.after = next;
        delete query.offset;
      } else {
        const offset = pagination.offset + page.data.length;
        if (page.data.length === 0 || offset >= pagination.total) return;
        query.offset = offset;
      }
    }
  }

  async function* feed(feedId: string, feedOptions: FeedOptions = {}): AsyncGenerator<FeedEvent, void, undefined> {
    const { wait = 30, limit = 100, acknowledge = true, signal } = feedOptions;
    const path = { id: feedId };
    let after = feedOptions.after;
    // The cursor up to which the loop is done (it asked for what follows), and the one acknowledged.
    let processed: string | undefined;
    let acknowledged: string | undefined;
    const acknowledgeProcessed = async () => {
      if (!acknowledge || processed === undefined || processed === acknowledged) return;
      await post('/webhook-endpoints/{id}/feed/ack', { params: { path }, body: { cursor: processed } });
      acknowledged = processed;
    };
    try {
      while (!signal?.aborted) {
        let page: components['schemas']['WebhookFeedPage'];
        try {
          page = (await get('/webhook-endpoints/{id}/feed', { params: { path, query: { wait, limit, ...(after === undefined ? {} : { after }) } }, signal })) as typeof page;
        } catch (error) {
          if (signal?.aborted) return;
          throw error;
        }
        for (const event of page.data) {
          yield event;
          processed = event.cursor;
        }
        // Past the events too that the feed passed over (its event types changed since they were written).
        after = page.next_cursor;
        processed = page.next_cursor;
        await acknowledgeProcessed();
      }
    } finally {
      await acknowledgeProcessed();
    }
  }

  async function sendInbound(operation: string, data?: unknown, inboundOptions: InboundOptions = {}): Promise<unknown> {
    const secret = options.signingSecret;
    if (!secret) throw new TypeError("sendInbound needs the signingSecret option: the API key's inbound signing secret");
    const rawBody = JSON.stringify({
      event_type: operation,
      timestamp: new Date().toISOString(),
      ...(inboundOptions.source === undefined ? {} : { source: inboundOptions.source }),
      ...(data === undefined ? {} : { data }),
    });
    // Each attempt is signed anew: the service refuses a signature it has seen (REPLAYED_REQUEST). No
    // Idempotency-Key is made up, since a request carrying one is exempt from that replay guard.
    const attempt = () => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        'X-API-Key': options.apiKey,
        'X-Webhook-Timestamp': timestamp,
        'X-Webhook-Signature': signatureOf(secret, timestamp, rawBody),
      };
      if (inboundOptions.idempotencyKey !== undefined) headers['Idempotency-Key'] = inboundOptions.idempotencyKey;
      return send(new Request(inboundUrl, { method: 'POST', headers, body: rawBody, signal: inboundOptions.signal }));
    };
    const response = await withRateLimitRetries(attempt, retries, inboundOptions.signal);
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: kept as text for the error.
    }
    if (!response.ok) throw ApiError.fromResponse(response, body);
    return body;
  }

  return {
    get: get as RestCall<'get'>,
    post: post as RestCall<'post'>,
    put: call('PUT') as RestCall<'put'>,
    delete: call('DELETE') as RestCall<'delete'>,
    paginate: paginate as ConstructionClient['paginate'],
    feed,
    sendInbound: sendInbound as ConstructionClient['sendInbound'],
    raw,
  };
}
