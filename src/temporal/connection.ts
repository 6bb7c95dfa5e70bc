import { Client, type ClientInterceptors, Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config';
import { activeTracing } from '../observability/tracing';

/**
 * With tracing on, each workflow start, signal, update and query is a span whose context goes into the run's
 * headers, so the run and its activities are in the caller's trace. Loaded only then.
 */
async function tracingInterceptors(): Promise<ClientInterceptors | undefined> {
  if (!activeTracing()) return undefined;
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

export async function connectTemporalClient(config: Pick<Config['temporal'], 'address' | 'namespace' | 'apiKey'>): Promise<Client> {
  const connection = await Connection.connect({
    address: config.address,
    // gRPC's reconnect backoff grows to 120 s while Temporal is down, and the API refuses what needs Temporal
    // until it reconnects: capped, the client is back within seconds of Temporal.
    channelArgs: { 'grpc.max_reconnect_backoff_ms': 5_000 },
    ...(config.apiKey ? { apiKey: config.apiKey, tls: true } : {}),
  });
  return new Client({ connection, namespace: config.namespace, interceptors: await tracingInterceptors() });
}

/**
 * A client on a Worker's connection (the worker process's own starts): a workflow it starts with `requestEagerStart`
 * has its first workflow task handed to that Worker in the start's answer when the Worker has a free slot.
 */
export async function temporalClientOn(connection: NativeConnection, namespace: string): Promise<Client> {
  return new Client({ connection, namespace, interceptors: await tracingInterceptors() });
}
