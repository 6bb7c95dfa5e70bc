import { ApiError, createClient } from '@construction-integration/client';
import { createTenant, startStack, type TestStack } from '../helpers/stack';

const RATE_LIMITED = JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'Rate limit exceeded', details: { field: 'X-API-Key', reason: 'too many requests' } } });

/** A fetch answering from `replies` in turn, recording what it was sent. */
function scriptedFetch(replies: (() => Response)[]) {
  const sent: { method: string; url: string; idempotencyKey: string | null; body: string }[] = [];
  const fetch = async (request: Request) => {
    sent.push({ method: request.method, url: request.url, idempotencyKey: request.headers.get('Idempotency-Key'), body: await request.text() });
    const reply = replies[sent.length - 1];
    if (!reply) throw new Error(`unexpected request ${sent.length}`);
    return reply();
  };
  return { fetch, sent };
}

const tooMany = (retryAfter?: string) => () =>
  new Response(RATE_LIMITED, { status: 429, headers: { 'Content-Type': 'application/json', ...(retryAfter === undefined ? {} : { 'Retry-After': retryAfter }) } });
const created = () => new Response(JSON.stringify({ id: 'c1', name: 'Acme' }), { status: 201, headers: { 'Content-Type': 'application/json' } });

describe('429 handling', () => {
  const baseUrl = 'https://construction.example.com/api/v1';

  it('waits Retry-After and sends the write again, with the same Idempotency-Key and body', async () => {
    const { fetch, sent } = scriptedFetch([tooMany('1'), tooMany('1'), created]);
    const client = createClient({ baseUrl, apiKey: 'cik_test', fetch });
    const started = Date.now();
    expect(await client.post('/customers', { body: { name: 'Acme' } })).toEqual({ id: 'c1', name: 'Acme' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(sent).toHaveLength(3);
    expect(sent[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(sent.map((s) => s.idempotencyKey)).size).toBe(1);
    expect(sent.map((s) => s.body)).toEqual(Array(3).fill('{"name":"Acme"}'));
  });

  it('gives up after maxRetries, or at once when opted out or when Retry-After is longer than maxWaitSeconds', async () => {
    const bounded = scriptedFetch([tooMany('0'), tooMany('0'), tooMany('7')]);
    const error = await createClient({ baseUrl, apiKey: 'cik_test', fetch: bounded.fetch, rateLimitRetries: { maxRetries: 2 } })
      .get('/customers')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED', details: { field: 'X-API-Key' }, retryAfterSeconds: 7 });
    expect(bounded.sent).toHaveLength(3);

    const optedOut = scriptedFetch([tooMany('0')]);
    await expect(createClient({ baseUrl, apiKey: 'cik_test', fetch: optedOut.fetch, rateLimitRetries: false }).get('/customers')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(optedOut.sent).toHaveLength(1);

    // The hour's budget is used up: its Retry-After is not waited out.
    const hourly = scriptedFetch([tooMany('1800')]);
    await expect(createClient({ baseUrl, apiKey: 'cik_test', fetch: hourly.fetch }).get('/customers')).rejects.toMatchObject({ retryAfterSeconds: 1800 });
    expect(hourly.sent).toHaveLength(1);
  });

  it('keeps an Idempotency-Key it is given and adds none to a read', async () => {
    const { fetch, sent } = scriptedFetch([created, () => Response.json({ data: [], pagination: { limit: 50, offset: 0, total: 0 } })]);
    const client = createClient({ baseUrl, apiKey: 'cik_test', fetch });
    await client.post('/customers', { body: { name: 'Acme' }, headers: { 'Idempotency-Key': 'import-42' } });
    await client.get('/customers');
    expect(sent.map((s) => [s.method, s.idempotencyKey])).toEqual([
      ['POST', 'import-42'],
      ['GET', null],
    ]);
  });

  it('signs each attempt of an inbound operation anew', async () => {
    const { fetch, sent } = scriptedFetch([tooMany('1'), () => Response.json({ success: true, message: 'ok', event_id: 'e1', record_id: null })]);
    const signatures: (string | null)[] = [];
    const client = createClient({
      baseUrl,
      apiKey: 'cik_test',
      signingSecret: 'whsec_test',
      fetch: (request) => {
        signatures.push(`${request.headers.get('X-Webhook-Timestamp')} ${request.headers.get('X-Webhook-Signature')}`);
        return fetch(request);
      },
    });
    await client.sendInbound('test.connection');
    expect(sent.map((s) => s.url)).toEqual(Array(2).fill('https://construction.example.com/webhooks/inbound'));
    expect(new Set(signatures).size).toBe(2);
  });

  describe('against the service', () => {
    let stack: TestStack;

    beforeAll(async () => {
      stack = await startStack({ worker: false });
    });
    afterAll(() => stack.close());

    it("retries a request refused by the key's minute budget (60) after Retry-After, and it succeeds", async () => {
      const tenant = await createTenant(stack.orm, ['customers:read']);
      // Windows are aligned to the clock's minutes: the budget is spent 8 to 15 s before one ends, so the 429's
      // Retry-After is short and the burst cannot cross into the next minute.
      const secondsLeft = () => 60 - ((Date.now() / 1000) % 60);
      if (secondsLeft() < 8 || secondsLeft() > 15) await new Promise((resolve) => setTimeout(resolve, ((secondsLeft() - 15 + 60) % 60) * 1000));
      const burst = Array.from({ length: 60 }, () => () => fetch(`${stack.baseUrl}/api/v1/customers?limit=1`, { headers: { 'X-API-Key': tenant.key } }));
      const statuses: number[] = [];
      for (let i = 0; i < burst.length; i += 10) statuses.push(...(await Promise.all(burst.slice(i, i + 10).map((send) => send()))).map((r) => r.status));
      expect(statuses).toEqual(Array(60).fill(200));

      const answered: { status: number; retryAfter: string | null }[] = [];
      const client = createClient({
        baseUrl: `${stack.baseUrl}/api/v1`,
        apiKey: tenant.key,
        fetch: async (request) => {
          const response = await fetch(request);
          answered.push({ status: response.status, retryAfter: response.headers.get('Retry-After') });
          return response;
        },
      });
      const started = Date.now();
      const page = await client.get('/customers', { params: { query: { limit: 1 } } });
      expect(page.pagination.total).toBe(0);
      expect(answered.map((a) => a.status)).toEqual([429, 200]);
      const waited = Number(answered[0]!.retryAfter);
      expect(waited).toBeGreaterThanOrEqual(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(waited * 1000);
    }, 120_000);
  });
});
