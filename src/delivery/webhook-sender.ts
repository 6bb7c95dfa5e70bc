import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { traceHeaders } from '../observability/trace-context';
import { createGuardedLookup, parseWebhookUrl, type TargetPolicy, UnsafeTargetError } from './ssrf-guard';

export interface WebhookRequest {
  url: string;
  /** Sent byte-for-byte (UTF-8) as given. */
  body: string;
  /**
   * The caller's headers (signature etc.); the sender adds Content-Type, Content-Length, a User-Agent, and the active
   * span's W3C traceparent and tracestate (not signed), so the endpoint's own trace can join ours.
   */
  headers: Record<string, string>;
  /** Called every PROGRESS_INTERVAL_MS while the request is in flight, so the activity can heartbeat. */
  onProgress?: () => void;
}

export type WebhookFailureKind = 'timeout' | 'connection' | 'blocked' | 'redirect' | 'http';

export interface WebhookResult {
  /** null when no response arrived. */
  statusCode: number | null;
  durationMs: number;
  /** null on a 2xx; otherwise a short description such as "HTTP 503" or "timed out after 30000 ms". */
  error: string | null;
  failureKind: WebhookFailureKind | null;
  /** The first RESPONSE_EXCERPT_BYTES of the response body (UTF-8, may be cut), or null when there was none. */
  responseExcerpt: string | null;
  /** A 429's or 503's Retry-After (seconds or an HTTP date), in milliseconds from now; null otherwise. */
  retryAfterMs: number | null;
}

export interface WebhookSender {
  /** Never throws for network or HTTP problems; they come back as the result. */
  send(request: WebhookRequest): Promise<WebhookResult>;
  close(): void;
}

export const RESPONSE_EXCERPT_BYTES = 1024;
export const PROGRESS_INTERVAL_MS = 2_000;
const DEFAULT_USER_AGENT = 'construction-integration-service-webhooks/1.0';

type Outcome = Pick<WebhookResult, 'error' | 'failureKind'>;

function responseOutcome(response: IncomingMessage): Outcome {
  const status = response.statusCode!;
  if (status >= 200 && status < 300) return { error: null, failureKind: null };
  if (status >= 300 && status < 400) {
    const location = response.headers.location;
    return { error: location ? `redirect to ${location} not followed` : `HTTP ${status} redirect not followed`, failureKind: 'redirect' };
  }
  return { error: `HTTP ${status}`, failureKind: 'http' };
}

/** Retry-After as webhook receivers send it on 429 and 503: delay-seconds or an HTTP date. */
export function retryAfterMs(response: Pick<IncomingMessage, 'statusCode' | 'headers'>, now = Date.now()): number | null {
  const value = response.headers['retry-after'];
  if ((response.statusCode !== 429 && response.statusCode !== 503) || typeof value !== 'string') return null;
  if (/^\s*\d{1,10}\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function errorOutcome(error: Error): Outcome {
  if (error instanceof UnsafeTargetError) return { error: error.reason, failureKind: 'blocked' };
  // Happy-eyeballs connects report one AggregateError, with an empty message, for all addresses tried.
  // Checked by shape, not instanceof: Node makes it in its own realm, which differs from ours under jest.
  const inner = (error as Partial<AggregateError>).errors;
  const message = !error.message && Array.isArray(inner) ? inner.map((each: Error) => each.message).join('; ') : error.message;
  return { error: message || ((error as NodeJS.ErrnoException).code ?? error.name), failureKind: 'connection' };
}

export interface WebhookSenderOptions {
  allowLoopback: boolean;
  /** Deadline of the whole attempt, connecting included (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Deadline of connecting: DNS lookup, TCP connect and TLS handshake (WEBHOOK_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  ca?: string | Buffer;
  userAgent?: string;
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const policy: TargetPolicy = { allowLoopback: options.allowLoopback };
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  // The agent's options reach every socket it opens, so each connection goes through the guarded lookup.
  const agent = new https.Agent({
    keepAlive: true,
    lookup: createGuardedLookup(policy),
    // An explicit `ca` replaces the default roots, so keep them and add the extra one; in one context made once, as
    // an agent given `ca` would parse the 140-odd roots again for each connection.
    ...(options.ca !== undefined ? { secureContext: tls.createSecureContext({ ca: [...tls.rootCertificates, options.ca.toString()] }) } : {}),
  });

  async function send(request: WebhookRequest): Promise<WebhookResult> {
    const started = performance.now();
    const result = (outcome: Outcome, statusCode: number | null = null, responseExcerpt: string | null = null, retryAfter: number | null = null): WebhookResult => ({
      statusCode,
      durationMs: Math.round(performance.now() - started),
      ...outcome,
      responseExcerpt,
      retryAfterMs: retryAfter,
    });

    let target: URL;
    try {
      target = parseWebhookUrl(request.url, policy);
    } catch (error) {
      if (error instanceof UnsafeTargetError) return result({ error: error.reason, failureKind: 'blocked' });
      throw error;
    }

    const body = Buffer.from(request.body, 'utf8');
    return new Promise<WebhookResult>((resolve) => {
      let settled = false;
      let statusCode: number | null = null;
      const settle = (value: WebhookResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        clearTimeout(connectDeadline);
        clearInterval(progress);
        resolve(value);
      };

      const outgoing = https.request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            'User-Agent': userAgent,
            ...request.headers,
            ...traceHeaders(),
            'Content-Type': 'application/json',
            'Content-Length': String(body.length),
          },
        },
        (response) => {
          statusCode = response.statusCode!;
          const chunks: Buffer[] = [];
          let received = 0;
          const settleWithResponse = () => {
            const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES);
            settle(result(responseOutcome(response), statusCode, excerpt.length > 0 ? excerpt.toString('utf8') : null, retryAfterMs(response)));
          };
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            received += chunk.length;
            if (received >= RESPONSE_EXCERPT_BYTES) {
              settleWithResponse();
              // Enough for the excerpt: stop reading so a huge or endless body is never buffered.
              response.destroy();
            }
          });
          response.on('end', settleWithResponse);
          // A body cut short still leaves a status to judge by; the deadline may already have settled this.
          response.on('error', settleWithResponse);
          response.on('close', settleWithResponse);
        },
      );

      const deadline = setTimeout(() => {
        settle(result({ error: `timed out after ${options.timeoutMs} ms`, failureKind: 'timeout' }, statusCode));
        outgoing.destroy();
      }, options.timeoutMs);
      // Connecting has a shorter deadline of its own: a host that never completes the TCP or TLS handshake frees
      // the worker's activity slot after it, not after the whole attempt's. A kept-alive socket is connected already.
      let connectDeadline: NodeJS.Timeout | undefined;
      outgoing.once('socket', (socket) => {
        if (outgoing.reusedSocket) return;
        connectDeadline = setTimeout(() => {
          settle(result({ error: `connect timed out after ${options.connectTimeoutMs} ms`, failureKind: 'connection' }));
          outgoing.destroy();
        }, options.connectTimeoutMs);
        socket.once('secureConnect', () => clearTimeout(connectDeadline));
      });
      const progress = request.onProgress ? setInterval(request.onProgress, PROGRESS_INTERVAL_MS) : undefined;

      outgoing.on('error', (error) => settle(result(errorOutcome(error))));
      outgoing.end(body);
    });
  }

  return {
    send,
    close: () => agent.destroy(),
  };
}
