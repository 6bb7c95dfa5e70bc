import { randomUUID } from 'node:crypto';
import { envelope, issueTestKey, type JsonResponse, request, sendInbound, type Tenant, type TestStack } from './stack';

/**
 * The REST API allows 60 requests a minute per key and the inbound endpoint 50: a suite that makes hundreds
 * of requests spreads them over several keys of the same company. Each key is used for at most
 * `perKey` requests, then a new one with the same scopes is issued.
 */
class KeyRing {
  private current: Promise<Tenant>;
  private used = 0;

  constructor(
    private readonly stack: TestStack,
    private readonly companyId: string,
    private readonly scopes: string[],
    first: Tenant | null,
    private readonly perKey: number,
  ) {
    this.current = first ? Promise.resolve(first) : issueTestKey(stack.orm, companyId, scopes);
  }

  /** The key to use for the next request. */
  next(): Promise<Tenant> {
    if (this.used >= this.perKey) {
      this.used = 0;
      this.current = issueTestKey(this.stack.orm, this.companyId, this.scopes);
    }
    this.used += 1;
    return this.current;
  }
}

export interface RestClient {
  companyId: string;
  get<T = any>(path: string): Promise<JsonResponse<T>>;
  post<T = any>(path: string, body: unknown): Promise<JsonResponse<T>>;
  put<T = any>(path: string, body: unknown): Promise<JsonResponse<T>>;
  delete<T = any>(path: string): Promise<JsonResponse<T>>;
  /** Creates a record (POST /api/v1/<collection>) and returns it; fails the test on anything but 201. */
  create(collection: string, body: Record<string, unknown>): Promise<any>;
}

/**
 * REST calls under /api/v1 as the company of `tenant`, spread over keys holding `scopes` (by default the
 * tenant's own key first, then new admin keys).
 */
export function restClient(stack: TestStack, tenant: Tenant, options: { scopes?: string[]; perKey?: number } = {}): RestClient {
  const ring = new KeyRing(stack, tenant.companyId, options.scopes ?? ['admin'], options.scopes ? null : tenant, options.perKey ?? 50);
  const call = async (method: string, path: string, body?: unknown) =>
    request(stack.baseUrl, method, `/api/v1${path}`, { key: (await ring.next()).key, ...(body === undefined ? {} : { body }) });
  return {
    companyId: tenant.companyId,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    put: (path, body) => call('PUT', path, body),
    delete: (path) => call('DELETE', path),
    async create(collection, body) {
      const response = await call('POST', `/${collection}`, body);
      if (response.status !== 201) throw new Error(`POST /${collection} answered ${response.status}: ${JSON.stringify(response.body)}`);
      return response.body;
    },
  };
}

/**
 * A list walked by cursor from `path` (whose query may hold limit and filters): each page's body, and every
 * record in the order seen. Each page must be a 200 with a next_cursor, null on the last.
 */
export async function walkByCursor(api: Pick<RestClient, 'get'>, path: string): Promise<{ pages: any[]; records: any[] }> {
  const pages: any[] = [];
  let after: string | null = null;
  do {
    const response: JsonResponse = await api.get(after === null ? path : `${path}${path.includes('?') ? '&' : '?'}after=${encodeURIComponent(after)}`);
    if (response.status !== 200) throw new Error(`GET ${path} after ${after} answered ${response.status}: ${JSON.stringify(response.body)}`);
    pages.push(response.body);
    after = response.body.pagination.next_cursor;
    if (after !== null && typeof after !== 'string') throw new Error(`GET ${path}: next_cursor is ${JSON.stringify(after)}`);
    if (pages.length > 1000) throw new Error(`GET ${path}: more than 1000 pages`);
  } while (after !== null);
  return { pages, records: pages.flatMap((page) => page.data) };
}

export interface InboundSender {
  companyId: string;
  /** Sends a signed operation; `sentWith` is the key that sent it (its id is the change's originator). */
  send<T = any>(eventType: string, data: Record<string, unknown>): Promise<JsonResponse<T> & { sentWith: Tenant }>;
}

/** Signed POST /webhooks/inbound as the company of `tenant`, spread over keys with the webhooks:inbound scope. */
export function inboundSender(stack: TestStack, tenant: Tenant, options: { perKey?: number } = {}): InboundSender {
  const ring = new KeyRing(stack, tenant.companyId, ['webhooks:inbound'], null, options.perKey ?? 40);
  return {
    companyId: tenant.companyId,
    async send(eventType, data) {
      const key = await ring.next();
      return { ...(await sendInbound(stack.baseUrl, key, envelope(eventType, data))), sentWith: key };
    },
  };
}

/** A short suffix that makes names of one test unique. */
export const unique = () => randomUUID().slice(0, 8);

/** A random v4 UUID: an id no record has. */
export const unknownId = () => randomUUID();
