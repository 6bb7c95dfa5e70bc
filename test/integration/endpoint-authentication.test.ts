import { randomBytes } from 'node:crypto';
import { type RunningApi, startApi } from '../../src/api/server';
import { type RunningTracing, startTracing } from '../../src/observability/tracing';
import { type RunningWorker, startWorker } from '../../src/worker/worker';
import { capturedLogger } from '../helpers/captured-logs';
import { historyOf } from '../helpers/delivery-runs';
import { type ReceivedRequest, startReceiver, testCertificate, testClientCertificates, type TestReceiver } from '../helpers/https-receiver';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver';
import { waitFor } from '../helpers/processes';
import { createTenant, type JsonResponse, request, startStack, type Tenant, testConfig, type TestStack } from '../helpers/stack';

const json = { 'Content-Type': 'application/json' };

/**
 * Issue 48: endpoints behind an API gateway that wants its own credentials. Local HTTPS receivers require each method
 * (a header, a bearer token from a local token endpoint that counts its calls, a client certificate a test CA signed);
 * the api and worker run here with their logs captured and their spans exported, and no secret may show anywhere.
 */
describe('endpoint authentication', () => {
  let otlp: OtlpReceiver;
  let tracing: RunningTracing;
  let stack: TestStack;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenant: Tenant;
  let baseUrl: string;
  /** The api's and the worker's log, every level. */
  const { logger: capture, lines: logLines } = capturedLogger('debug');
  const responses: string[] = [];

  /** Everything secret the tests hand over or get issued: none may come back out. */
  const gatewayKey = `gw_${randomBytes(16).toString('hex')}`;
  const clientId = 'erp-integration';
  const clientSecret = `cs_${randomBytes(16).toString('hex')}`;
  const issuedTokens = new Set<string>();
  const { ca, client, stranger } = testClientCertificates();
  /** A line of the client's private key (its base64 body), as it would appear if the key leaked. */
  const keyLine = client.key.split('\n').find((line) => line.length > 40 && !line.startsWith('-----'))!;

  let headerHook: TestReceiver;
  let tokenEndpoint: TestReceiver;
  let oauthHook: TestReceiver;
  let mtlsHook: TestReceiver;
  /** Tokens the OAuth receiver accepts; emptied to revoke them. */
  const validTokens = new Set<string>();
  /** The expires_in of the tokens the token endpoint issues. */
  let tokenLifetimeSeconds = 3600;

  const call = async (method: string, path: string, body?: unknown): Promise<JsonResponse> => {
    const response = await request(baseUrl, method, `/api/v1${path}`, { key: tenant.key, body });
    responses.push(JSON.stringify(response.body));
    return response;
  };
  const register = (url: string, authentication: unknown) => call('POST', '/webhook-endpoints', { url, event_types: ['*'], authentication });
  const sendTest = async (endpointId: string) => {
    const response = await call('POST', `/webhook-endpoints/${endpointId}/test`);
    expect(response.status).toBe(200);
    return response.body as { id: string; status: string; attempts: { outcome: string; status_code: number | null; error: string | null }[] };
  };
  const tokenUrl = () => tokenEndpoint.url.replace('/hook', '/oauth/token');
  const oauth = (secret = clientSecret) => ({ token_url: tokenUrl(), client_id: clientId, client_secret: secret, scope: 'webhooks:receive', audience: 'https://erp.example' });

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    tracing = await startTracing({ protocol: 'http/json', serviceName: 'endpoint-authentication-test', url: otlp.url });
    stack = await startStack({ worker: false, dispatcher: false, config: await testConfig({ RATE_LIMIT_MULTIPLIER: '100' }) });
    api = await startApi({ config: stack.config, orm: stack.orm, temporal: stack.temporal, logger: capture });
    baseUrl = `http://127.0.0.1:${api.port}`;
    worker = await startWorker({ config: stack.config, orm: stack.orm, logger: capture, workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH, webhookCa: testCertificate().cert });
    tenant = await createTenant(stack.orm, ['admin']);

    headerHook = await startReceiver();
    headerHook.respondWith((received) =>
      received.headers['x-gateway-key'] === gatewayKey && received.headers['x-tenant'] === 'acme' ? { status: 200 } : { status: 401, body: 'gateway key missing or wrong' },
    );
    tokenEndpoint = await startReceiver();
    tokenEndpoint.respondWith((received) => {
      const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
      if (received.headers.authorization !== basic) return { status: 401, body: JSON.stringify({ error: 'invalid_client', error_description: 'client authentication failed' }), headers: json };
      const token = `at_${randomBytes(24).toString('base64url')}`;
      issuedTokens.add(token);
      validTokens.add(token);
      // Slow enough that attempts starting together find the fetch under way.
      return { status: 200, body: JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: tokenLifetimeSeconds }), headers: json, delayMs: 300 };
    });
    oauthHook = await startReceiver();
    oauthHook.respondWith((received) => (validTokens.has(String(received.headers.authorization).replace(/^Bearer /, '')) ? { status: 200 } : { status: 401, body: 'invalid token' }));
    mtlsHook = await startReceiver({ clientCa: ca });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([headerHook, tokenEndpoint, oauthHook, mtlsHook].map((receiver) => receiver?.close()));
    await worker?.close();
    await api?.close();
    await stack?.close();
    await tracing?.stop();
    await otlp?.close();
  });

  describe('REST', () => {
    it('shows the non-secret parts and hints, never a secret, and stores the secrets sealed', async () => {
      const created = await register(headerHook.url, {
        headers: [
          { name: 'X-Gateway-Key', value: gatewayKey, secret: true },
          { name: 'X-Tenant', value: 'acme' },
        ],
        oauth: oauth(),
        client_certificate: { certificate: client.cert, private_key: client.key },
      });
      expect(created.status).toBe(201);
      const expected = {
        headers: [
          { name: 'X-Gateway-Key', secret: true, value: null, value_hint: gatewayKey.slice(-4) },
          { name: 'X-Tenant', secret: false, value: 'acme', value_hint: null },
        ],
        oauth: { token_url: tokenUrl(), client_id: clientId, client_secret_hint: clientSecret.slice(-4), scope: 'webhooks:receive', audience: 'https://erp.example' },
        client_certificate: {
          subject: 'CN=erp-gateway-client',
          issuer: 'CN=Test Client CA',
          not_before: expect.any(String),
          not_after: expect.any(String),
          fingerprint_sha256: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/),
        },
      };
      expect(created.body.authentication).toEqual(expected);
      expect((await call('GET', `/webhook-endpoints/${created.body.id}`)).body.authentication).toEqual(expected);

      const [row] = await stack.em().execute<Record<string, unknown>[]>('select auth_headers, oauth, client_key_sealed from webhook_endpoints where id = ?', [created.body.id]);
      const stored = JSON.stringify(row);
      for (const secret of [gatewayKey, clientSecret, keyLine]) expect(stored).not.toContain(secret);
    });

    it('updates one method at a time, keeps a secret left out, and removes a method with null', async () => {
      const created = await register(headerHook.url, { headers: [{ name: 'X-Gateway-Key', value: gatewayKey, secret: true }], oauth: oauth() });
      const id = created.body.id as string;

      // The console's edit: the secret header named again without its value, a new plain one, the OAuth settings without the secret.
      const updated = await call('PUT', `/webhook-endpoints/${id}`, {
        authentication: {
          headers: [
            { name: 'X-Gateway-Key', secret: true },
            { name: 'X-Tenant', value: 'acme' },
          ],
          oauth: { token_url: tokenUrl(), client_id: 'another-client', scope: null },
        },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.authentication.headers).toEqual([
        { name: 'X-Gateway-Key', secret: true, value: null, value_hint: gatewayKey.slice(-4) },
        { name: 'X-Tenant', secret: false, value: 'acme', value_hint: null },
      ]);
      expect(updated.body.authentication.oauth).toEqual({ token_url: tokenUrl(), client_id: 'another-client', client_secret_hint: clientSecret.slice(-4), scope: null, audience: null });

      const withoutOAuth = await call('PUT', `/webhook-endpoints/${id}`, { authentication: { oauth: null } });
      expect(withoutOAuth.body.authentication).toEqual({ headers: updated.body.authentication.headers, oauth: null, client_certificate: null });

      const withoutAny = await call('PUT', `/webhook-endpoints/${id}`, { authentication: null });
      expect(withoutAny.body.authentication).toEqual({ headers: [], oauth: null, client_certificate: null });
      const [row] = await stack.em().execute<Record<string, unknown>[]>('select auth_headers, oauth, client_certificate, client_key_sealed from webhook_endpoints where id = ?', [id]);
      expect(row).toEqual({ auth_headers: null, oauth: null, client_certificate: null, client_key_sealed: null });
    });

    it.each([
      ['a signature header', { headers: [{ name: 'X-Webhook-Signature', value: 'forged' }] }, 'authentication.headers[0].name', 'reserved'],
      ['Content-Type', { headers: [{ name: 'content-type', value: 'text/plain' }] }, 'authentication.headers[0].name', 'reserved'],
      ['Host', { headers: [{ name: 'Host', value: 'evil.example' }] }, 'authentication.headers[0].name', 'reserved'],
      ['a hop-by-hop header', { headers: [{ name: 'Transfer-Encoding', value: 'chunked' }] }, 'authentication.headers[0].name', 'reserved'],
      ['a header given twice', { headers: [{ name: 'X-Tenant', value: 'a' }, { name: 'x-tenant', value: 'b' }] }, 'authentication.headers[1].name', 'twice'],
      ['a name that is no header name', { headers: [{ name: 'X Tenant', value: 'a' }] }, 'authentication.headers[0].name', 'must be an HTTP header name'],
      ['a value with a line break', { headers: [{ name: 'X-Tenant', value: 'a\r\nX-Injected: 1' }] }, 'authentication.headers[0].value', 'must be printable ASCII'],
      ['a header without its value', { headers: [{ name: 'X-Gateway-Key', secret: true }] }, 'authentication.headers[0].value', 'required'],
      ['Authorization beside OAuth', { headers: [{ name: 'Authorization', value: 'Basic abc' }], oauth: { token_url: 'https://127.0.0.1:9/t', client_id: 'a', client_secret: 'b' } }, 'authentication.headers[0].name', 'conflicts with oauth'],
      ['a token URL over http', { oauth: { token_url: 'http://auth.example.com/token', client_id: 'a', client_secret: 'b' } }, 'authentication.oauth.token_url', 'must use https'],
      ['a token URL on a private address', { oauth: { token_url: 'https://10.0.0.8/token', client_id: 'a', client_secret: 'b' } }, 'authentication.oauth.token_url', 'private'],
      ['OAuth without its client secret', { oauth: { token_url: 'https://127.0.0.1:9/t', client_id: 'a' } }, 'authentication.oauth.client_secret', 'required'],
      ['a malformed certificate', { client_certificate: { certificate: 'not a certificate', private_key: 'x' } }, 'authentication.client_certificate.certificate', 'PEM'],
      [
        'a certificate that cannot be read',
        { client_certificate: { certificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', private_key: 'x' } },
        'authentication.client_certificate.certificate',
        'cannot be read',
      ],
      ['a malformed key', { client_certificate: { certificate: testClientCertificates().client.cert, private_key: 'not a key' } }, 'authentication.client_certificate.private_key', 'PEM private key'],
      ['a key of another certificate', { client_certificate: { certificate: testClientCertificates().client.cert, private_key: testClientCertificates().stranger.key } }, 'authentication.client_certificate.private_key', 'does not match'],
      ['a certificate without its key', { client_certificate: { certificate: testClientCertificates().client.cert } }, 'authentication.client_certificate.private_key', 'required'],
    ])('refuses %s with a 400 naming the field', async (_, authentication, field, reason) => {
      const response = await register(headerHook.url, authentication);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason: expect.stringContaining(reason) } });
    });

    it('refuses on update what it refuses on registration, changing nothing', async () => {
      const created = await register(headerHook.url, { client_certificate: { certificate: client.cert, private_key: client.key } });
      // A new certificate with the saved key: it must be the key's.
      const response = await call('PUT', `/webhook-endpoints/${created.body.id}`, { authentication: { client_certificate: { certificate: stranger.cert } } });
      expect(response.status).toBe(400);
      expect(response.body.error.details).toEqual({ field: 'authentication.client_certificate.certificate', reason: 'does not match the saved private key' });
      expect((await call('GET', `/webhook-endpoints/${created.body.id}`)).body.authentication.client_certificate.subject).toBe('CN=erp-gateway-client');
    });
  });

  describe('deliveries', () => {
    it('sends the custom headers, secret ones included; a wrong one fails the attempt with the reason', async () => {
      const good = await register(headerHook.url, { headers: [{ name: 'X-Gateway-Key', value: gatewayKey, secret: true }, { name: 'X-Tenant', value: 'acme' }] });
      const delivered = await sendTest(good.body.id);
      expect(delivered.status).toBe('delivered');
      const received = headerHook.requests.find((r) => r.headers['x-webhook-id'] === delivered.id)!;
      expect(received.headers).toMatchObject({ 'x-gateway-key': gatewayKey, 'x-tenant': 'acme', 'content-type': 'application/json', 'x-webhook-signature': expect.any(String) });

      const wrong = await register(headerHook.url, { headers: [{ name: 'X-Gateway-Key', value: 'not-the-gateway-key', secret: true }] });
      const refused = await sendTest(wrong.body.id);
      expect(refused.status).toBe('failed');
      expect(refused.attempts[0]).toMatchObject({ outcome: 'permanent_failure', status_code: 401, error: 'HTTP 401' });
    });

    it('gets a bearer token once for many deliveries, attempts starting together sharing one request', async () => {
      const endpoint = await register(oauthHook.url, { oauth: oauth() });
      const callsBefore = tokenEndpoint.requests.length;
      const deliveries = await Promise.all(Array.from({ length: 5 }, () => sendTest(endpoint.body.id)));
      expect(deliveries.map((d) => d.status)).toEqual(Array(5).fill('delivered'));
      for (const d of await Promise.all(Array.from({ length: 3 }, () => sendTest(endpoint.body.id)))) expect(d.status).toBe('delivered');
      expect(tokenEndpoint.requests.length - callsBefore).toBe(1);

      const [tokenRequest] = tokenEndpoint.requests.slice(callsBefore);
      expect(tokenRequest!.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(tokenRequest!.body))).toEqual({ grant_type: 'client_credentials', scope: 'webhooks:receive', audience: 'https://erp.example' });
    });

    it('keeps a token until shortly before it expires, then fetches a new one', async () => {
      tokenLifetimeSeconds = 3;
      try {
        const endpoint = await register(oauthHook.url, { oauth: oauth() });
        const callsBefore = tokenEndpoint.requests.length;
        expect((await sendTest(endpoint.body.id)).status).toBe('delivered');
        expect((await sendTest(endpoint.body.id)).status).toBe('delivered');
        expect(tokenEndpoint.requests.length - callsBefore).toBe(1);
        // Replaced a tenth of its lifetime before it ends: after 2.7 s.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        expect((await sendTest(endpoint.body.id)).status).toBe('delivered');
        expect(tokenEndpoint.requests.length - callsBefore).toBe(2);
      } finally {
        tokenLifetimeSeconds = 3600;
      }
    });

    it('fetches a new token once when the endpoint answers 401, and the attempt succeeds with it', async () => {
      const endpoint = await register(oauthHook.url, { oauth: oauth() });
      expect((await sendTest(endpoint.body.id)).status).toBe('delivered');
      const callsBefore = tokenEndpoint.requests.length;
      validTokens.clear();
      const delivered = await sendTest(endpoint.body.id);
      expect(delivered).toMatchObject({ status: 'delivered', attempts: [{ outcome: 'succeeded', status_code: 200 }] });
      expect(tokenEndpoint.requests.length - callsBefore).toBe(1);
      const tries = oauthHook.requests.filter((r: ReceivedRequest) => r.headers['x-webhook-id'] === delivered.id);
      expect(tries).toHaveLength(2);
    });

    it('fails the attempt with a readable reason when the token endpoint refuses or cannot be reached', async () => {
      const refusedClient = await register(oauthHook.url, { oauth: oauth('not-the-client-secret') });
      const refused = await sendTest(refusedClient.body.id);
      expect(refused.status).toBe('failed');
      expect(refused.attempts[0]).toMatchObject({
        outcome: 'retryable_failure',
        status_code: null,
        error: `OAuth token endpoint localhost:${tokenEndpoint.port} answered HTTP 401 (invalid_client)`,
      });

      const unreachable = await register(oauthHook.url, { oauth: { ...oauth(), token_url: 'https://127.0.0.1:9/oauth/token' } });
      const failed = await sendTest(unreachable.body.id);
      expect(failed.attempts[0]!.error).toMatch(/^OAuth token request to 127\.0\.0\.1:9 failed: .*ECONNREFUSED/);
    });

    it('presents the client certificate; none, or one the CA did not sign, fails the attempt', async () => {
      const withCertificate = await register(mtlsHook.url, { client_certificate: { certificate: client.cert, private_key: client.key } });
      expect((await sendTest(withCertificate.body.id)).status).toBe('delivered');

      const without = await register(mtlsHook.url, {});
      const refused = await sendTest(without.body.id);
      expect(refused.status).toBe('failed');
      expect(refused.attempts[0]).toMatchObject({ outcome: 'retryable_failure', status_code: null, error: 'TLS handshake failed: tlsv13 alert certificate required' });

      const stranger_ = await register(mtlsHook.url, { client_certificate: { certificate: stranger.cert, private_key: stranger.key } });
      const strangerRefused = await sendTest(stranger_.body.id);
      expect(strangerRefused.status).toBe('failed');
      expect(strangerRefused.attempts[0]!.error).toMatch(/^(TLS handshake failed: .*|(socket hang up|read ECONNRESET) after the client certificate was presented: the endpoint may not accept it)$/);

      // A new certificate takes effect at the next attempt: its connections are new ones.
      await call('PUT', `/webhook-endpoints/${stranger_.body.id}`, { authentication: { client_certificate: { certificate: client.cert, private_key: client.key } } });
      expect((await sendTest(stranger_.body.id)).status).toBe('delivered');
    });

    it('never shows a secret in an API response, a log line, an exported span or a delivery run’s history', async () => {
      const secrets = [gatewayKey, clientSecret, keyLine, ...issuedTokens];
      expect(issuedTokens.size).toBeGreaterThan(1);
      // The attempts' spans and the token requests' were exported.
      const spans = await waitFor(
        async () => {
          await tracing.flush();
          const exported = otlp.spans.filter((span) => span.name === 'oauth token request');
          return exported.length > 0 && otlp.spans.some((span) => span.name === 'webhook attempt') ? otlp.spans : null;
        },
        30_000,
        'the exported spans',
      );
      const deliveryIds = (await stack.em().execute<{ id: string }[]>('select id from webhook_deliveries')).map((row) => row.id);
      const histories = await Promise.all(deliveryIds.map((id) => historyOf(stack, id)));
      const said = {
        responses: responses.join('\n'),
        logs: logLines.join(''),
        spans: JSON.stringify(spans),
        // Payloads are bytes: read as the text they hold.
        histories: JSON.stringify(histories, (_key, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value)),
      };
      expect(said.logs.length).toBeGreaterThan(0);
      for (const [where, text] of Object.entries(said)) {
        for (const secret of secrets) expect({ where, leaked: text.includes(secret) }).toEqual({ where, leaked: false });
      }
    });
  });
});
