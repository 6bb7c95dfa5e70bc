import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
  /** When the reply was written; absent while it is pending or hangs. */
  answeredAt?: number;
  /** Which connection it came on: 1 for the first the receiver accepted, and so on. */
  connection: number;
}

export interface ReceiverReply {
  status: number;
  body?: string;
  delayMs?: number;
  hang?: boolean;
  /** Closes the connection instead of answering, as a server closing an idle kept-alive connection does. */
  reset?: boolean;
  headers?: Record<string, string>;
}

export interface TestReceiver {
  /** https://localhost:<port>/hook */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides each reply; index is the 0-based number of the request. Default: 200 {"received":true}. `hang: true` never answers (until close). */
  respondWith(reply: (request: ReceivedRequest, index: number) => ReceiverReply): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Also destroys hanging sockets. */
  close(): Promise<void>;
}

const defaultReply = (): ReceiverReply => ({ status: 200, body: '{"received":true}', headers: { 'Content-Type': 'application/json' } });

/**
 * An HTTPS server on 127.0.0.1 (port 0 = free port) with the test certificate. With `clientCa` it wants a client
 * certificate that CA signed, and refuses the TLS handshake without one, as an API gateway doing mutual TLS does.
 */
export async function startReceiver(options: { port?: number; clientCa?: string } = {}): Promise<TestReceiver> {
  const { key, cert } = testCertificate();
  const requests: ReceivedRequest[] = [];
  const pendingReplies = new Set<NodeJS.Timeout>();
  const onRequest = new Set<() => void>();
  let decideReply: (request: ReceivedRequest, index: number) => ReceiverReply = defaultReply;
  const connections = new WeakMap<object, number>();
  let connectionCount = 0;

  const mutualTls = options.clientCa ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: true } : {};
  const server = https.createServer({ key, cert, ...mutualTls }, (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      if (!connections.has(incoming.socket)) connections.set(incoming.socket, ++connectionCount);
      const received: ReceivedRequest = {
        method: incoming.method!,
        path: incoming.url!,
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        connection: connections.get(incoming.socket)!,
      };
      const index = requests.push(received) - 1;
      for (const notify of onRequest) notify();
      const reply = decideReply(received, index);
      if (reply.hang) return;
      if (reply.reset) return void incoming.socket.destroy();
      const answer = () => {
        pendingReplies.delete(timer);
        received.answeredAt = Date.now();
        outgoing.writeHead(reply.status, reply.headers).end(reply.body);
      };
      const timer = setTimeout(answer, reply.delayMs ?? 0);
      pendingReplies.add(timer);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://localhost:${port}/hook`,
    port,
    requests,
    respondWith(reply) {
      decideReply = reply;
    },
    async waitForRequests(count, timeoutMs = 10_000) {
      if (requests.length >= count) return requests.slice(0, count);
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          stop();
          resolve(requests.slice(0, count));
        };
        const timer = setTimeout(() => {
          stop();
          reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${count} requests (got ${requests.length})`));
        }, timeoutMs);
        const stop = () => {
          clearTimeout(timer);
          onRequest.delete(check);
        };
        onRequest.add(check);
      });
    },
    async close() {
      for (const timer of pendingReplies) clearTimeout(timer);
      pendingReplies.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * A folder of files `generate` writes once per test run. Jest workers are separate processes: each generates into a
 * folder of its own and renames it into place, so a reader sees either no folder or a complete one; a worker that
 * loses the race uses the winner's.
 */
function generatedOnce(name: string, generate: (dir: string) => void): string {
  const dir = path.join(process.env.TEST_DATA_DIR ?? os.tmpdir(), name);
  if (existsSync(dir)) return dir;
  const staging = `${dir}.${process.pid}.${randomUUID()}`;
  mkdirSync(staging, { recursive: true });
  generate(staging);
  try {
    renameSync(staging, dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

let certificate: { key: string; cert: string; certFile: string } | undefined;

/** A self-signed certificate for CN=localhost (SAN DNS:localhost, IP:127.0.0.1), made once per test run. */
export function testCertificate(): { key: string; cert: string; certFile: string } {
  if (certificate) return certificate;
  const dir = generatedOnce('webhook-test-certificate', (staging) =>
    openssl(
      'req', '-x509', ...EC_KEY, '-keyout', path.join(staging, 'key.pem'), '-out', path.join(staging, 'cert.pem'),
      '-days', '3650', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ),
  );
  const certFile = path.join(dir, 'cert.pem');
  certificate = { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
  return certificate;
}

export interface KeyPair {
  cert: string;
  key: string;
}

let clientCertificates: { ca: string; client: KeyPair; stranger: KeyPair } | undefined;

/**
 * Mutual TLS material, made once per test run: a test CA, a client certificate it signed (CN=erp-gateway-client), and
 * a stranger's self-signed one.
 */
export function testClientCertificates(): { ca: string; client: KeyPair; stranger: KeyPair } {
  if (clientCertificates) return clientCertificates;
  const dir = generatedOnce('webhook-test-client-certificates', (staging) => {
    const file = (name: string) => path.join(staging, name);
    openssl('req', '-x509', ...EC_KEY, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '3650', '-subj', '/CN=Test Client CA');
    openssl('req', ...EC_KEY, '-keyout', file('client.key'), '-out', file('client.csr'), '-subj', '/CN=erp-gateway-client');
    openssl('x509', '-req', '-in', file('client.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-set_serial', '2', '-days', '3650', '-out', file('client.pem'));
    openssl('req', '-x509', ...EC_KEY, '-keyout', file('stranger.key'), '-out', file('stranger.pem'), '-days', '3650', '-subj', '/CN=stranger');
  });
  const read = (name: string) => readFileSync(path.join(dir, name), 'utf8');
  clientCertificates = {
    ca: read('ca.pem'),
    client: { cert: read('client.pem'), key: read('client.key') },
    stranger: { cert: read('stranger.pem'), key: read('stranger.key') },
  };
  return clientCertificates;
}
