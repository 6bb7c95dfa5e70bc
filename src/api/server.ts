import type { Client } from '@temporalio/client';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config';
import { SecretBox } from '../crypto/secret-box';
import { ApiKeyCache } from '../domain/accounts/api-key-cache';
import { FeedWaits } from '../delivery/feeds/feed-waits';
import type { Orm } from '../db/orm';
import type { Logger } from '../logger';
import { createApiMetrics } from '../metrics';
import { SchemaValidator } from '../schemas/schema-validator';
import { temporalDeliveryWorkflows } from '../temporal/temporal-delivery-workflows';
import { temporalWorkflows } from '../temporal/temporal-workflows';
import { createApp } from './app';

export interface RunningApi {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Builds the app from its dependencies and listens; close() stops accepting and lets requests finish. */
export async function startApi(deps: { config: Config; orm: Orm; temporal: Client; logger: Logger }): Promise<RunningApi> {
  const secretBox = new SecretBox(deps.config.encryptionKey);
  const apiKeys = new ApiKeyCache({ databaseUrl: deps.config.databaseUrl, secretBox, logger: deps.logger });
  await apiKeys.start();
  const feedWaits = new FeedWaits({ databaseUrl: deps.config.databaseUrl, logger: deps.logger });
  await feedWaits.start();
  const workflows = temporalWorkflows(deps.temporal, deps.config.temporal.taskQueues);
  const deliveryWorkflows = temporalDeliveryWorkflows(deps.temporal, deps.config.temporal.taskQueues);
  const app = createApp({ ...deps, workflows, deliveryWorkflows, secretBox, apiKeys, feedWaits, validator: new SchemaValidator(), metrics: createApiMetrics(deps.orm) });
  const server = app.listen(deps.config.port, deps.config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  // Behind load balancers idle keep-alive sockets must outlive the balancer's, or requests race a close.
  server.keepAliveTimeout = 65_000;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), 10_000);
        // Long polls answer now, with what they have, rather than hold the shutdown for the rest of their wait.
        const waitsStopped = feedWaits.stop();
        server.close(() => {
          clearTimeout(force);
          resolve(Promise.all([apiKeys.stop(), waitsStopped]).then(() => undefined));
        });
      }),
  };
}
