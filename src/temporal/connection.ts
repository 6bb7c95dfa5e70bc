import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';

export async function connectTemporalClient(config: Config['temporal']): Promise<Client> {
  const connection = await Connection.connect({
    address: config.address,
    ...(config.apiKey ? { apiKey: config.apiKey, tls: true } : {}),
  });
  return new Client({ connection, namespace: config.namespace });
}
