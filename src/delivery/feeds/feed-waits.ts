import { listenForNotifications, type NotificationListener } from '../../db/notifications';
import type { Logger } from '../../logger';

/** A long poll's wait for new events of one feed. */
export interface FeedWait {
  /** Resolves when the feed may have new events, or when the wait is over. */
  readonly arrived: Promise<void>;
  cancel(): void;
}

/**
 * The long polls of this API process: each waits for its feed's notification (append_feed_events sends one on the
 * channel `webhook_feeds` when its events commit) on one LISTEN connection the process shares, not on a database
 * connection of its own. While the connection is lost, a wait lasts a second at most: the consumer asks again rather
 * than miss an event announced meanwhile.
 */
export class FeedWaits {
  private readonly waiting = new Map<string, Set<() => void>>();
  private listener: NotificationListener | null = null;

  constructor(private readonly options: { databaseUrl: string; logger: Logger }) {}

  async start(): Promise<void> {
    this.listener = await listenForNotifications({
      databaseUrl: this.options.databaseUrl,
      channel: 'webhook_feeds',
      logger: this.options.logger,
      onNotification: (feedId) => this.wake(feedId),
      // What was announced while the connection was down is unknown: every wait looks again.
      onListening: () => this.wakeAll(),
    });
  }

  async stop(): Promise<void> {
    await this.listener?.stop();
    this.listener = null;
    this.wakeAll();
  }

  /** Starts waiting for `feedId`, before its events are read, so that none committing in between is missed. */
  waitFor(feedId: string, ms: number): FeedWait {
    let done = (): void => undefined;
    const arrived = new Promise<void>((resolve) => {
      done = resolve;
    });
    const timer = setTimeout(() => wake(), this.listener?.listening ? ms : Math.min(ms, 1000));
    const wake = () => {
      clearTimeout(timer);
      const waits = this.waiting.get(feedId);
      waits?.delete(wake);
      if (waits?.size === 0) this.waiting.delete(feedId);
      done();
    };
    const waits = this.waiting.get(feedId) ?? new Set();
    waits.add(wake);
    this.waiting.set(feedId, waits);
    return { arrived, cancel: wake };
  }

  private wake(feedId: string): void {
    for (const wake of [...(this.waiting.get(feedId) ?? [])]) wake();
  }

  private wakeAll(): void {
    for (const feedId of [...this.waiting.keys()]) this.wake(feedId);
  }
}
