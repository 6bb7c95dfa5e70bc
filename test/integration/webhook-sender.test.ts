import { createServer } from 'node:net';
import { startReceiver, testCertificate, testClientCertificates, type TestReceiver } from '../helpers/https-receiver';
import { createWebhookSender, type WebhookSender } from '../../src/delivery/attempts/webhook-sender';

const json = { 'Content-Type': 'application/json' };

/** A port nothing listens on: bound once to get a free number, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('webhook sender', () => {
  let receiver: TestReceiver;
  let sender: WebhookSender;
  /** Swaps the sender made in beforeEach for one with other options. */
  const useSender = (options: Parameters<typeof createWebhookSender>[0]) => {
    sender.close();
    sender = createWebhookSender(options);
  };
  const send = (url = receiver.url, body = '{"event_type":"test.connection"}', headers: Record<string, string> = {}) =>
    sender.send({ url, body, headers });

  beforeEach(async () => {
    receiver = await startReceiver();
    sender = createWebhookSender({ allowLoopback: true, timeoutMs: 5_000, connectTimeoutMs: 5_000, ca: testCertificate().cert });
  });

  afterEach(async () => {
    sender.close();
    await receiver.close();
  });

  it('reports a 2xx as success with the start of the response body', async () => {
    receiver.respondWith(() => ({ status: 200, body: '{"received":true}', headers: json }));
    const result = await send();
    expect(result).toEqual({ statusCode: 200, durationMs: expect.any(Number), error: null, failureKind: null, responseExcerpt: '{"received":true}', retryAfterMs: null });
  });

  it('reports an empty response body as no excerpt', async () => {
    receiver.respondWith(() => ({ status: 204 }));
    expect(await send()).toMatchObject({ statusCode: 204, error: null, failureKind: null, responseExcerpt: null });
  });

  it.each([
    [503, 'try again later'],
    [400, '{"error":"bad event"}'],
  ])('reports HTTP %i as an http failure with the response excerpt', async (status, body) => {
    receiver.respondWith(() => ({ status, body }));
    expect(await send()).toMatchObject({ statusCode: status, error: `HTTP ${status}`, failureKind: 'http', responseExcerpt: body });
  });

  it.each([
    [429, '120', 120_000],
    [503, '7', 7_000],
    [500, '120', null],
  ])("reads a %i's Retry-After of %s seconds as %p ms (only 429 and 503 carry one)", async (status, retryAfter, expected) => {
    receiver.respondWith(() => ({ status, headers: { 'Retry-After': retryAfter } }));
    expect((await send()).retryAfterMs).toBe(expected);
  });

  it('reads a Retry-After given as an HTTP date', async () => {
    const at = new Date(Date.now() + 90_000).toUTCString();
    receiver.respondWith(() => ({ status: 503, headers: { 'Retry-After': at } }));
    const { retryAfterMs } = await send();
    expect(retryAfterMs).toBeGreaterThan(85_000);
    expect(retryAfterMs).toBeLessThanOrEqual(90_000);
  });

  it('does not follow redirects', async () => {
    receiver.respondWith(() => ({ status: 302, headers: { Location: `${receiver.url}/elsewhere` } }));
    const result = await send();
    expect(result).toMatchObject({ statusCode: 302, error: `redirect to ${receiver.url}/elsewhere not followed`, failureKind: 'redirect' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.requests).toHaveLength(1);
  });

  it('times out a slow receiver after timeoutMs', async () => {
    useSender({ allowLoopback: true, timeoutMs: 500, connectTimeoutMs: 5_000, ca: testCertificate().cert });
    receiver.respondWith(() => ({ status: 200, delayMs: 5_000 }));
    const result = await send();
    expect(result).toMatchObject({ statusCode: null, error: 'timed out after 500 ms', failureKind: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(490);
    expect(result.durationMs).toBeLessThan(1_500);
  });

  it('times out a receiver that never answers', async () => {
    useSender({ allowLoopback: true, timeoutMs: 300, connectTimeoutMs: 5_000, ca: testCertificate().cert });
    receiver.respondWith(() => ({ status: 200, hang: true }));
    expect(await send()).toMatchObject({ statusCode: null, failureKind: 'timeout' });
  });

  it('gives up connecting to a host that accepts TCP but never completes the TLS handshake at the connect deadline', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      useSender({ allowLoopback: true, timeoutMs: 20_000, connectTimeoutMs: 300, ca: testCertificate().cert });
      const result = await send(`https://localhost:${(silent.address() as { port: number }).port}/hook`);
      expect(result).toMatchObject({ statusCode: null, error: 'connect timed out after 300 ms', failureKind: 'connection' });
      // Well before the attempt's deadline: the slot is free again.
      expect(result.durationMs).toBeLessThan(10_000);
    } finally {
      silent.close();
    }
  });

  it('leaves a connected request to the attempt deadline: a response slower than the connect deadline arrives', async () => {
    useSender({ allowLoopback: true, timeoutMs: 5_000, connectTimeoutMs: 200, ca: testCertificate().cert });
    receiver.respondWith(() => ({ status: 200, delayMs: 600 }));
    expect(await send()).toMatchObject({ statusCode: 200, error: null, failureKind: null });
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    const result = await send(`https://localhost:${port}/hook`);
    expect(result).toMatchObject({ statusCode: null, failureKind: 'connection' });
    expect(result.error).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('refuses a private IP literal without connecting', async () => {
    const result = await send('https://10.255.255.1/hook');
    expect(result).toMatchObject({ statusCode: null, error: 'is a private address (10.255.255.1)', failureKind: 'blocked', responseExcerpt: null });
    expect(result.durationMs).toBeLessThan(50);
  });

  it('refuses a name resolving to loopback unless loopback is allowed', async () => {
    useSender({ allowLoopback: false, timeoutMs: 5_000, connectTimeoutMs: 5_000, ca: testCertificate().cert });
    expect(await send()).toMatchObject({ statusCode: null, error: 'resolves to a loopback address (127.0.0.1)', failureKind: 'blocked' });
    expect(await send(`https://127.0.0.1:${receiver.port}/hook`)).toMatchObject({ error: 'is a loopback address (127.0.0.1)', failureKind: 'blocked' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses http:// URLs', async () => {
    expect(await send(`http://localhost:${receiver.port}/hook`)).toMatchObject({ statusCode: null, error: 'must use https', failureKind: 'blocked' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('reads only the first KiB of a huge response body', async () => {
    receiver.respondWith(() => ({ status: 200, body: 'x'.repeat(10 * 1024 * 1024) }));
    const result = await send();
    expect(result).toMatchObject({ statusCode: 200, failureKind: null });
    expect(Buffer.byteLength(result.responseExcerpt!)).toBe(1024);
    expect(result.durationMs).toBeLessThan(1_000);
  });

  it('sends the body byte-for-byte with the caller headers and a JSON content type', async () => {
    const body = '{ "name": "Grüße – 工事 🏗️",\n  "n": 1.50 }';
    await send(receiver.url, body, { 'X-Webhook-Signature': 'abc123', 'X-Webhook-Retry': '0' });
    const [received] = await receiver.waitForRequests(1);
    expect(received).toMatchObject({ method: 'POST', path: '/hook', body });
    expect(received.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-webhook-signature': 'abc123',
      'x-webhook-retry': '0',
      'user-agent': expect.any(String),
    });
  });

  it('rejects a self-signed receiver when not told to trust it', async () => {
    useSender({ allowLoopback: true, timeoutMs: 5_000, connectTimeoutMs: 5_000 });
    const result = await send();
    expect(result).toMatchObject({ statusCode: null, failureKind: 'connection' });
    expect(result.error).toMatch(/certificate/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('reports progress while a slow request is in flight', async () => {
    receiver.respondWith(() => ({ status: 200, delayMs: 3_000 }));
    const onProgress = jest.fn();
    const result = await sender.send({ url: receiver.url, body: '{}', headers: {}, onProgress });
    expect(result.failureKind).toBeNull();
    // Every 2 s: once during a 3 s wait (twice only if this machine is very slow).
    expect(onProgress).toHaveBeenCalled();
  });

  it('posts a token request as a form and returns the answer', async () => {
    receiver.respondWith(() => ({ status: 200, body: '{"access_token":"abc","token_type":"Bearer"}', headers: json }));
    const response = await sender.requestToken({ url: receiver.url, form: { grant_type: 'client_credentials', scope: 'a b' }, headers: { Authorization: 'Basic eDp5' }, timeoutMs: 5_000 });
    expect(response).toEqual({ statusCode: 200, body: '{"access_token":"abc","token_type":"Bearer"}', error: null });
    expect(receiver.requests[0]).toMatchObject({ body: 'grant_type=client_credentials&scope=a+b', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic eDp5' } });
    expect(await sender.requestToken({ url: 'http://localhost/token', form: {}, headers: {}, timeoutMs: 5_000 })).toEqual({ statusCode: null, body: null, error: 'the token URL must use https' });
  });

  it("presents a client certificate on connections of its owner's, made anew when its version changes", async () => {
    const { ca, client, stranger } = testClientCertificates();
    const mutual = await startReceiver({ clientCa: ca });
    try {
      const certificate = (version: string, pair: { cert: string; key: string }) => ({ owner: 'endpoint-1', version, certificate: pair.cert, privateKey: () => pair.key });
      const sendWith = (clientCertificate?: ReturnType<typeof certificate>) => sender.send({ url: mutual.url, body: '{}', headers: {}, clientCertificate });
      expect(await sendWith()).toMatchObject({ statusCode: null, failureKind: 'connection', error: 'TLS handshake failed: tlsv13 alert certificate required' });
      expect(await sendWith(certificate('1', stranger))).toMatchObject({ statusCode: null, failureKind: 'connection' });
      expect(await sendWith(certificate('2', client))).toMatchObject({ statusCode: 200, failureKind: null });
      expect(await sendWith(certificate('2', client))).toMatchObject({ statusCode: 200, failureKind: null });
      expect(mutual.requests).toHaveLength(2);
    } finally {
      await mutual.close();
    }
  });

  describe('a kept-alive connection the receiver closed', () => {
    /** Its requests' connections, and whether each came on a connection that had carried one before. */
    const connectionsSeen = () => new Set(receiver.requests.map((request) => request.connection)).size;
    const usedBefore = (request: { connection: number }, index: number) => receiver.requests.slice(0, index).some((earlier) => earlier.connection === request.connection);

    it('sends again on another connection at once, within the attempt', async () => {
      receiver.respondWith((request, index) => ({ status: 200, body: '{}', reset: usedBefore(request, index) }));
      expect(await send()).toMatchObject({ statusCode: 200 });
      // The kept-alive connection is reset: the same POST goes again on a new one.
      expect(await send()).toMatchObject({ statusCode: 200, error: null, failureKind: null });
      expect(receiver.requests).toHaveLength(3);
      expect(connectionsSeen()).toBe(2);
    });

    it('does not send again when a new connection is reset, and stops after a few closed kept-alive ones', async () => {
      let resetEverything = false;
      receiver.respondWith(() => ({ status: 200, body: '{}', reset: resetEverything }));
      // Five connections kept alive, then each request reset.
      expect(await Promise.all(Array.from({ length: 5 }, () => send()))).toMatchObject(Array(5).fill({ statusCode: 200 }));
      expect(connectionsSeen()).toBe(5);
      resetEverything = true;
      expect(await send()).toMatchObject({ statusCode: null, failureKind: 'connection', error: 'socket hang up' });
      expect(receiver.requests).toHaveLength(5 + 4);
      // A sender with no kept-alive connection: its first request's reset is final.
      useSender({ allowLoopback: true, timeoutMs: 5_000, connectTimeoutMs: 5_000, ca: testCertificate().cert });
      expect(await send()).toMatchObject({ statusCode: null, failureKind: 'connection', error: 'socket hang up' });
      expect(receiver.requests).toHaveLength(5 + 4 + 1);
    });
  });
});
