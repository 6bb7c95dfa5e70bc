import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';

export async function connectTemporalClient(config: Pick<Config['temporal'], 'address' | 'namespace' | 'apiKey'>): Promise<Client> {
  const connection = await Connection.connect({
    address: config.address,
    // gRPC's reconnect backoff grows to 120 s while Temporal is down, and the API refuses what needs Temporal
    // until it reconnects: capped, the client is back within seconds of Temporal.
    channelArgs: { 'grpc.max_reconnect_backoff_ms': 5_000 },
    ...(config.apiKey ? { apiKey: config.apiKey, tls: true } : {}),
  });
  return new Client({ connection, namespace: config.namespace });
}
