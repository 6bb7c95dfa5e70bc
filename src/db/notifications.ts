import { Client as PgClient } from 'pg';
import type { Logger } from '../logger';

export interface NotificationListener {
  /** Whether notifications are being received right now (false while reconnecting). */
  readonly listening: boolean;
  stop(): Promise<void>;
}

export interface ListenOptions {
  databaseUrl: string;
  channel: string;
  logger: Logger;
  onNotification(payload: string): void;
  /** Called whenever listening (re)starts: whatever was announced while it was down is unknown. */
  onListening(): void;
}

/**
 * LISTEN on a channel from a connection of its own, reconnecting every second after the connection is lost.
 * Resolves once the first LISTEN is in place.
 */
export async function listenForNotifications(options: ListenOptions): Promise<NotificationListener> {
  let client: PgClient | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | null = null;

  const connect = async () => {
    const next = new PgClient({ connectionString: options.databaseUrl });
    next.on('notification', (message) => options.onNotification(message.payload ?? ''));
    next.on('error', (error) => {
      options.logger.warn({ err: error, channel: options.channel }, 'notification listener lost its connection; reconnecting');
      client = null;
      next.end().catch(() => undefined);
      reconnect();
    });
    await next.connect();
    await next.query(`listen ${next.escapeIdentifier(options.channel)}`);
    if (stopped) {
      await next.end();
      return;
    }
    client = next;
    options.onListening();
  };
  const reconnect = () => {
    if (stopped) return;
    retry = setTimeout(() => connect().catch(reconnect), 1000);
  };

  await connect();
  return {
    get listening() {
      return client !== null;
    },
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}
