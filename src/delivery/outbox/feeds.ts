import type { EntityManager } from '@mikro-orm/postgresql';
import { APPEND_FEED_EVENTS, uuids } from './statements';

/** How soon events held back from a feed are claimed again: the dispatcher ahead of them writes its events in milliseconds. */
export const FEED_HELD_RETRY_MS = 100;

/**
 * Appends a batch's feed entries (fan-out.ts) to their feeds, before its events are marked dispatched: a dispatcher
 * dying in between leaves them to be claimed again, and append_feed_events skips what it wrote. Returns the events held
 * back behind an earlier one of their company that another dispatcher holds: they are let go whole, their deliveries
 * written when they are claimed again.
 */
export async function appendToFeeds(em: EntityManager, entries: Record<string, unknown>[], events: { id: string }[]): Promise<string[]> {
  const [{ held }] = (await APPEND_FEED_EVENTS.run(em, { entries: JSON.stringify(entries), events: uuids(events.map((event) => event.id)) })) as [{ held: string[] }];
  return held;
}
