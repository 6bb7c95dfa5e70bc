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
}

export interface ReceiverReply {
  status: number;
  body?: string;
  delayMs?: number;
  hang?: boolean;
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

/** An HTTPS server on 127.0.0.1 (port 0 = free port) with the test certificate. */
export async function startReceiver(options: { port?: number } = {}): Promise<TestReceiver> {
  const { key, cert } = testCertificate();
  const requests: ReceivedRequest[] = [];
  const pendingReplies = new Set<NodeJS.Timeout>();
  const onRequest = new Set<() => void>();
  let decideReply: (request: ReceivedRequest, index: number) => ReceiverReply = defaultReply;

  const server = https.createServer({ key, cert }, (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const received: ReceivedRequest = {
        method: incoming.method!,
        path: incoming.url!,
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      const index = requests.push(received) - 1;
      for (const notify of onRequest) notify();
      const reply = decideReply(received, index);
      if (reply.hang) return;
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

let certificate: { key: string; cert: string; certFile: string } | undefined;

/**
 * A self-signed certificate for CN=localhost (SAN DNS:localhost, IP:127.0.0.1), made once per test run.
 * Jest workers are separate processes: each generates into a folder of its own and renames it into place,
 * so a reader sees either no folder or a complete one; a worker that loses the race uses the winner's.
 */
export function testCertificate(): { key: string; cert: string; certFile: string } {
  if (certificate) return certificate;
  const dir = path.join(process.env.TEST_DATA_DIR ?? os.tmpdir(), 'webhook-test-certificate');
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  if (!existsSync(certFile)) {
    const staging = `${dir}.${process.pid}.${randomUUID()}`;
    mkdirSync(staging, { recursive: true });
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', path.join(staging, 'key.pem'), '-out', path.join(staging, 'cert.pem'),
        '-days', '3650', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    try {
      renameSync(staging, dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      rmSync(staging, { recursive: true, force: true });
    }
  }
  certificate = { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
  return certificate;
}
